"""Benchmark datasets on disk: generation, byte-exact files, manifest, loading.

A dataset is a folder with one JSONL file per regime and a MANIFEST.json that
records how it was made and the sha256 of each file. Loading checks the
checksum first, so a corrupt, truncated or hand-edited file fails loudly with
its name instead of silently changing a benchmark number.

A folder holds one grid size (its manifest's ``height`` and ``width``). Other
sizes of the same benchmark live in sub-folders named after them (``16x16/``,
``32x32/``), each a complete dataset folder of its own (verified and loaded
alone), and the top manifest lists every size the tree holds (``sizes``), so a
sub-folder missing from an install is an error rather than a smaller benchmark.
The canonical set keeps 8x8 at its top, with the paths and checksums 8x8 has
always had, so results and tools that name those files stay valid.

A regime's JSONL longer than ``GZIP_OVER`` bytes (the 32x32 files, 7 MB each)
is stored gzip-compressed as ``<regime>.jsonl.gz`` (``mtime=0``). Its
manifest sha256 is that of the JSONL text inside: gzip's bytes depend on the
zlib build that wrote them, the text does not, so verification does not either.

Loading also checks what each line says (``world/validate.py``): a file
edited and re-hashed is refused, before any model call, with the file, the
line and the field that break a rule, as is a manifest whose fields are not
of their types.

The canonical set is package data (``spatialstale_evals/data/spatialstale-v1``),
read through ``importlib.resources``, so it is there after any install (wheel,
``pip install git+...``, editable) whatever the working directory.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import zlib
from collections.abc import Iterable, Sequence
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Literal, get_args

import numpy as np

from spatialstale_evals.world.grid import MAX_SIDE, MIN_SIDE, validate_size
from spatialstale_evals.world.instance import Instance, generate_instance
from spatialstale_evals.world.regimes import REGIMES, validate_regime
from spatialstale_evals.world.validate import LineError, check_line

DATASET_VERSION = "spatialstale-v1"
#: 1.1.0: larger grids scale their change counts with the area
#: (``regimes.change_scale``); 8x8 output is byte-identical to 1.0.0's.
GENERATOR_VERSION = "1.1.0"
MASTER_SEED = 2024
DEFAULT_COUNT = 50
#: The most instances per regime a dataset may hold (``datasets generate --count``):
#: 200 times the canonical 50, far past any run's need, and a 32x32 set of it
#: (~1.5 GB of JSONL per regime) still fits on a disk.
MAX_COUNT = 10_000
#: The largest master seed: numpy seeds a generator with any non-negative
#: integer; a seed past 2**63 - 1 is no longer one machine word in a manifest.
MAX_SEED = 2**63 - 1
MANIFEST = "MANIFEST.json"
MANIFEST_KEYS = ("master_seed", "count", "height", "width", "files")
#: JSONL files longer than this are stored gzip-compressed.
GZIP_OVER = 2_000_000
JSONL, GZIP = ".jsonl", ".gz"

#: The canonical grid sizes, the vocabulary of the tasks' ``size`` parameter:
#: the first at the top of the canonical set, each other in its sub-folder.
Size = Literal["8x8", "16x16", "32x32"]
SIZES: tuple[str, ...] = get_args(Size)

#: The canonical set, shipped inside the package.
CANONICAL_DIR: Traversable = files("spatialstale_evals") / "data" / DATASET_VERSION


class DatasetError(ValueError):
    """A dataset folder or file that cannot be trusted or read."""


def size_name(height: int, width: int) -> str:
    """``16x16``: how sizes are written (task parameter, sub-folder, manifest)."""
    return f"{height}x{width}"


def parse_size(text: str) -> tuple[int, int]:
    """(height, width) of ``16x16``."""
    try:
        height, width = (int(x) for x in str(text).lower().split("x"))
    except ValueError as exc:
        raise DatasetError(f"size must look like 8x8 (HEIGHTxWIDTH), got {text!r}") from exc
    return height, width


def instance_seeds(master_seed: int, count: int) -> list[int]:
    """Per-instance seeds; the i-th seed is shared by the i-th instance of every regime."""
    if not isinstance(count, int) or count <= 0:
        raise DatasetError(f"instance count must be a positive integer, got {count!r}")
    rng = np.random.default_rng(master_seed)
    return [int(s) for s in rng.integers(0, 2**31 - 1, size=count)]


def generate(
    master_seed: int = MASTER_SEED,
    count: int = DEFAULT_COUNT,
    height: int = 8,
    width: int = 8,
    regimes: Iterable[str] | None = None,
) -> dict[str, list[Instance]]:
    """Instances of every registered regime (or of ``regimes``), same seeds in each."""
    validate_size(height, width)
    regimes = list(REGIMES) if regimes is None else regimes
    regimes = [validate_regime(r) for r in regimes]
    seeds = instance_seeds(master_seed, count)
    return {regime: [generate_instance(s, regime, i, height, width) for i, s in enumerate(seeds)] for regime in regimes}


def instance_line(inst: Instance) -> str:
    """The instance's line in a dataset's JSONL (compact JSON, no newline)."""
    return json.dumps(inst.to_json(), separators=(",", ":"))


def encode_jsonl(instances: Iterable[Instance]) -> bytes:
    lines = [instance_line(inst) for inst in instances]
    return ("\n".join(lines) + "\n").encode("utf-8")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_name(regime: str, data: bytes) -> str:
    """The regime's file name for JSONL ``data``: compressed when it is long."""
    return f"{regime}{JSONL}{GZIP if len(data) > GZIP_OVER else ''}"


def regime_of(name: str) -> str:
    """The regime a data file holds (``L1.jsonl.gz`` -> ``L1``)."""
    return name.removesuffix(GZIP).removesuffix(JSONL)


def encode_manifest(manifest: dict) -> str:
    return json.dumps(manifest, indent=2) + "\n"


def write(
    out_dir: str | Path,
    master_seed: int = MASTER_SEED,
    count: int = DEFAULT_COUNT,
    height: int = 8,
    width: int = 8,
    more_sizes: Sequence[tuple[int, int]] = (),
) -> Path:
    """Generate a dataset and write it with its manifest; returns the folder.

    ``more_sizes`` are written into sub-folders named after them (each a
    dataset folder of its own, same seed and count), and the top manifest
    then lists every size (``sizes``): the canonical set is
    ``write(out, more_sizes=[(16, 16), (32, 32)])``.
    """
    out = Path(out_dir)
    sets = generate(master_seed, count, height, width)
    for h, w in more_sizes:
        write(out / size_name(h, w), master_seed, count, h, w)
    out.mkdir(parents=True, exist_ok=True)
    table = {}
    for regime, instances in sets.items():
        data = encode_jsonl(instances)
        name = file_name(regime, data)
        for stale in {f"{regime}{JSONL}", f"{regime}{JSONL}{GZIP}"} - {name}:
            (out / stale).unlink(missing_ok=True)  # a file of the other form, left by an earlier write
        (out / name).write_bytes(gzip.compress(data, mtime=0) if name.endswith(GZIP) else data)
        table[name] = {"sha256": sha256(data), "instances": len(instances)}
    manifest = {
        "dataset_version": DATASET_VERSION,
        "generator_version": GENERATOR_VERSION,
        "master_seed": master_seed,
        "count": count,
        "height": height,
        "width": width,
        "files": table,
    }
    if more_sizes:
        manifest["sizes"] = [size_name(height, width), *(size_name(h, w) for h, w in more_sizes)]
    (out / MANIFEST).write_text(encode_manifest(manifest), encoding="utf-8")
    return out


def is_canonical(dataset: str | Path | None) -> bool:
    return dataset in (None, "", "canonical")


def _folder(dataset: str | Path | Traversable | None) -> Traversable:
    """The folder ``dataset`` names (a path, a package resource, or None for
    the canonical set), checked to exist and to hold a manifest."""
    path: Traversable = (
        CANONICAL_DIR if is_canonical(dataset) else Path(dataset) if isinstance(dataset, str | Path) else dataset
    )  # type: ignore[assignment]
    if not path.is_dir():
        hint = " (the installed package lacks its data: reinstall spatialstale-evals)" if is_canonical(dataset) else ""
        raise DatasetError(f"dataset folder not found: {path}{hint}")
    if not (path / MANIFEST).is_file():
        raise DatasetError(f"{path} has no {MANIFEST}; make datasets with `spatialstale datasets generate`")
    return path


def own_size(folder: Traversable) -> str:
    """The grid size of the dataset folder itself (its manifest's)."""
    manifest = read_manifest(folder)
    return size_name(int(manifest["height"]), int(manifest["width"]))


def _found_sizes(folder: Traversable) -> list[str]:
    """The folder's own size, then every sub-folder named as a size that holds a manifest (by area)."""
    subs = []
    for child in folder.iterdir():
        try:
            h, w = parse_size(child.name)
        except DatasetError:
            continue
        if child.is_dir() and (child / MANIFEST).is_file() and child.name == size_name(h, w):
            subs.append((h * w, child.name))
    return [own_size(folder), *(name for _, name in sorted(subs))]


def sizes_of(dataset: str | Path | Traversable | None) -> list[str]:
    """Every grid size the dataset holds, its own first. A manifest that lists
    its sizes (``sizes``) must list exactly the sub-folders there are."""
    folder = _folder(dataset)
    found = _found_sizes(folder)
    listed = read_manifest(folder).get("sizes")
    if listed is not None and list(listed) != found:
        raise DatasetError(
            f"{folder / MANIFEST} lists the sizes {', '.join(map(str, listed))} but the folder holds "
            f"{', '.join(found)} (a sub-folder is missing or extra)"
        )
    return found


def resolve(dataset: str | Path | Traversable | None, size: str | None = None) -> Traversable:
    """The dataset folder to use: the canonical set when ``dataset`` is None;
    with ``size``, the folder itself if that is its size, else its sub-folder
    of that name; an error naming the sizes it holds otherwise."""
    folder = _folder(dataset)
    if size is None:
        return folder
    wanted = size_name(*parse_size(size))
    if own_size(folder) == wanted:
        return folder
    sub = folder / wanted
    if sub.is_dir() and (sub / MANIFEST).is_file():
        if own_size(sub) != wanted:
            raise DatasetError(f"{sub / MANIFEST} describes a {own_size(sub)} set, not {wanted}")
        return sub
    raise DatasetError(
        f"{folder}: no {wanted} set; it holds {', '.join(_found_sizes(folder))} (a size other than the folder's own "
        f"is its sub-folder of that name: `spatialstale datasets generate --out {folder}/{wanted} --size {wanted}`)"
    )


def read_manifest(folder: str | Path | Traversable) -> dict:
    path = (Path(folder) if isinstance(folder, str) else folder) / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        missing = [k for k in MANIFEST_KEYS if k not in manifest]
    except (OSError, ValueError, TypeError) as exc:
        raise DatasetError(f"{path}: unreadable manifest ({exc})") from exc
    if missing or not isinstance(manifest.get("files"), dict):
        raise DatasetError(f"{path}: manifest lacks {', '.join(missing) or 'a files table'}")
    for key, low, high in (
        ("height", MIN_SIDE, MAX_SIDE),
        ("width", MIN_SIDE, MAX_SIDE),
        ("count", 1, MAX_COUNT),
        ("master_seed", 0, MAX_SEED),
    ):
        value = manifest[key]
        if type(value) is not int or not low <= value <= high:
            raise DatasetError(f"{path}: {key}: must be an integer in {low}..{high}, got {str(value)[:30]!r}")
    for name, entry in manifest["files"].items():
        ok = isinstance(entry, dict) and isinstance(entry.get("sha256"), str) and type(entry.get("instances")) is int
        if not ok or entry["instances"] < 1:
            raise DatasetError(
                f"{path}: files.{name}: must be {{sha256: text, instances: a positive integer}}, "
                f"got {str(entry)[:60]!r}"
            )
    return manifest


def regime_file(folder: Traversable, manifest: dict, regime: str) -> str:
    """The name of the regime's file in the manifest (plain or compressed)."""
    for name in (f"{regime}{JSONL}", f"{regime}{JSONL}{GZIP}"):
        if name in manifest["files"]:
            return name
    raise DatasetError(f"{folder / f'{regime}{JSONL}'}: not listed in {folder / MANIFEST}")


def verify_file(folder: Traversable, name: str, manifest: dict) -> bytes:
    """The JSONL bytes of ``name`` (decompressed if it is ``.gz``), checked against the manifest's sha256."""
    path = folder / name
    entry = manifest["files"].get(name)
    if entry is None:
        raise DatasetError(f"{path}: not listed in {folder / MANIFEST}")
    try:
        data = path.read_bytes()
        if name.endswith(GZIP):
            data = gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
        raise DatasetError(f"{path}: cannot read ({exc})") from exc
    if sha256(data) != entry["sha256"]:
        raise DatasetError(
            f"{path}: sha256 does not match the manifest (file corrupt, truncated or edited); "
            "regenerate it with `spatialstale datasets generate`"
        )
    return data


#: The task metadata key of the SHA-256 of the instance file a run read (``content_sha256``).
DIGEST_KEY = "dataset_sha256"


def content_sha256(dataset: str | Path | Traversable | None, regime: str, size: str | None = None) -> str:
    """The SHA-256 of the JSONL text of ``regime``'s file (of ``size``: ``resolve``),
    as its manifest lists it: ``load`` reads only a file that matches it. Every
    log records it (``DIGEST_KEY``), so the report tells runs on different
    contents apart whatever folder they were read from."""
    folder = resolve(dataset, size)
    manifest = read_manifest(folder)
    return str(manifest["files"][regime_file(folder, manifest, regime)]["sha256"])


def load(dataset: str | Path | Traversable | None, regime: str, size: str | None = None) -> list[Instance]:
    """Instances of one regime from a verified dataset folder (of ``size``: ``resolve``)."""
    validate_regime(regime)
    folder = resolve(dataset, size)
    manifest = read_manifest(folder)
    name = regime_file(folder, manifest, regime)
    data = verify_file(folder, name, manifest)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{folder / name}: not UTF-8 text ({exc})") from exc
    return read_instances(text, folder / name, regime, manifest)


def read_instances(text: str, path: Traversable, regime: str, manifest: dict) -> list[Instance]:
    """The instances of one regime's JSONL ``text`` (verified against ``manifest``), each
    line checked (``world/validate.py``), the ids unique and as many as ``manifest``
    lists for the file; a ``DatasetError`` names the file (``path``), the line and the
    field of the first problem."""
    instances: list[Instance] = []
    lines: dict[str, int] = {}
    height, width = manifest["height"], manifest["width"]
    listed = manifest["files"][path.name]["instances"]
    # the same bytes read as the same regime and size pass the same checks: once per process
    key = (manifest["files"][path.name]["sha256"], regime, height, width, listed)
    checked = key in _CHECKED
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except (ValueError, RecursionError) as exc:
            raise DatasetError(f"{path}:{lineno}: (line): not a JSON object ({str(exc)[:80]})") from None
        try:
            if not checked:
                check_line(data, regime, height, width)
        except LineError as exc:
            raise DatasetError(f"{path}:{lineno}: {exc}") from None
        if data["id"] in lines:
            raise DatasetError(f"{path}:{lineno}: id: {data['id']!r} is also the id on line {lines[data['id']]}")
        lines[data["id"]] = lineno
        instances.append(Instance.from_json(data))
    if len(instances) != listed:
        raise DatasetError(f"{path}: holds {len(instances)} instances; {MANIFEST} (files.{path.name}) lists {listed}")
    _CHECKED.add(key)
    return instances


#: (sha256, regime, height, width, count) of the files that passed ``read_instances``'s checks.
_CHECKED: set[tuple[str, str, int, int, int]] = set()


def verify(dataset: str | Path | Traversable | None, size: str | None = None) -> dict[str, int]:
    """Check every file of one folder (of ``size``: ``resolve``) against its
    manifest and that it regenerates byte for byte (the JSONL text, for a
    compressed file).

    Returns instances per file. Raises DatasetError on the first mismatch.
    """
    folder = resolve(dataset, size)
    manifest = read_manifest(folder)
    counts = {}
    sets = generate(
        int(manifest["master_seed"]),
        int(manifest["count"]),
        int(manifest["height"]),
        int(manifest["width"]),
    )
    for name in manifest["files"]:
        data = verify_file(folder, name, manifest)
        regime = regime_of(name)
        if regime not in sets:
            raise DatasetError(f"{folder / name}: regime {regime!r} is not registered here ({', '.join(sets)})")
        if encode_jsonl(sets[regime]) != data:
            raise DatasetError(
                f"{folder / name}: does not regenerate byte for byte from the manifest's "
                f"master seed {manifest['master_seed']} (generator {GENERATOR_VERSION})"
            )
        counts[name] = len(sets[regime])
    return counts
