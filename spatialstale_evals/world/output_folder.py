"""Where ``spatialstale datasets generate`` may write, checked before it writes.

``generate`` replaces the files of the folder it is given. Pointed at the
canonical set (the package's ``data/spatialstale-v1``, the checkout's
``datasets/spatialstale-v1`` link to it, or any copy whose manifest lists the
canonical files) it would replace the benchmark every default run reads, and
``datasets verify`` would still say OK about the replacement; so a folder that
holds a canonical set, or lies inside the installed package, is refused unless
``--force`` says it is meant (a new regime's data is the one such case:
docs/extending.md). The seed and count are checked against their documented
ranges, and the folder against what the file system can hold, each with an
error naming the option, before anything is generated. Nothing here imports
Inspect.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from spatialstale_evals.world import dataset
from spatialstale_evals.world.dataset import MANIFEST, DatasetError

#: The installed package's folder: nothing is generated inside it unless forced.
PACKAGE_DIR = Path(__file__).resolve().parents[1]


def _files_table(folder: Any) -> dict[str, Any] | None:
    """The ``files`` table of a folder's manifest, or None (no manifest, or unreadable)."""
    try:
        table = json.loads((folder / MANIFEST).read_text(encoding="utf-8")).get("files")
    except (OSError, ValueError, AttributeError):
        return None
    return table if isinstance(table, dict) else None


def canonical_tables() -> list[dict[str, Any]]:
    """The ``files`` tables of every manifest of the installed canonical set: each size's and the lifetimes'."""
    top = dataset.CANONICAL_DIR
    folders = [top, top / "lifelong", *(top / size for size in dataset.SIZES[1:])]
    return [t for t in (_files_table(f) for f in folders) if t]


def holds_canonical(folder: Path) -> bool:
    """Whether ``folder`` holds a canonical set: its manifest (or its lifetimes')
    lists the very files of one of the canonical set's manifests."""
    canonical = canonical_tables()
    return any(_files_table(f) in canonical for f in (folder, folder / "lifelong"))


def check_out(out: Path, force: bool) -> Path:
    """``--out`` checked: a folder (or a path to create) the file system allows,
    neither inside the installed package nor holding a canonical set unless
    ``force``; created and returned. A ``DatasetError`` names the problem."""
    shown = f"--out {out}"
    not_a_file(out)
    if not force:
        if out.resolve().is_relative_to(PACKAGE_DIR):
            raise DatasetError(
                f"{shown}: lies inside the installed package ({PACKAGE_DIR}), whose canonical set every default "
                "run reads; write your set to a folder of your own (--out datasets/my-set), or pass --force to "
                "replace the package's data (docs/extending.md: a new regime)"
            )
        if out.is_dir() and holds_canonical(out):
            raise DatasetError(
                f"{shown}: holds a canonical {dataset.DATASET_VERSION} set, which this would replace; write to "
                "another folder, or pass --force"
            )
    return make_folder(out)


def not_a_file(out: Path, option: str = "--out") -> None:
    """A ``DatasetError`` (a ``ValueError``) when ``out`` or a folder above it is a file."""
    for parent in (out, *out.parents):
        if parent.exists() and not parent.is_dir():
            where = "is a file" if parent == out else f"lies under {parent}, which is a file"
            raise DatasetError(f"{option} {out}: {where}, not a folder")


def make_folder(out: Path, option: str = "--out") -> Path:
    """``out`` created (with its parents) if missing; an error naming ``option`` when
    the file system refuses (a file in the way, ``/proc``, no permission)."""
    not_a_file(out, option)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DatasetError(f"{option} {out}: cannot create the folder ({exc.strerror or exc})") from None
    return out


def check_numbers(master_seed: int, count: int) -> None:
    """``--master-seed`` and ``--count`` within their documented ranges (``dataset.MAX_SEED``, ``MAX_COUNT``)."""
    if not 0 <= master_seed <= dataset.MAX_SEED:
        raise DatasetError(f"--master-seed {master_seed}: must be an integer in 0..{dataset.MAX_SEED}")
    if not 1 <= count <= dataset.MAX_COUNT:
        raise DatasetError(f"--count {count}: must be an integer in 1..{dataset.MAX_COUNT} (instances per regime)")
