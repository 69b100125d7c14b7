"""Benchmark datasets on disk: generation, byte-exact files, manifest, loading.

A dataset is a folder with one JSONL file per regime and a MANIFEST.json that
records how it was made and the sha256 of each file. Loading checks the
checksum first, so a corrupt, truncated or hand-edited file fails loudly with
its name instead of silently changing a benchmark number.

The canonical set is package data (``spatialstale_evals/data/spatialstale-v1``),
read through ``importlib.resources``, so it is there after any install (wheel,
``pip install git+...``, editable) whatever the working directory.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

import numpy as np

from spatialstale_evals.world.grid import validate_size
from spatialstale_evals.world.instance import Instance, generate_instance
from spatialstale_evals.world.regimes import REGIMES, validate_regime

DATASET_VERSION = "spatialstale-v1"
GENERATOR_VERSION = "1.0.0"
MASTER_SEED = 2024
DEFAULT_COUNT = 50
MANIFEST = "MANIFEST.json"
MANIFEST_KEYS = ("master_seed", "count", "height", "width", "files")

#: The canonical set, shipped inside the package.
CANONICAL_DIR: Traversable = files("spatialstale_evals") / "data" / DATASET_VERSION


class DatasetError(ValueError):
    """A dataset folder or file that cannot be trusted or read."""


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


def encode_jsonl(instances: Iterable[Instance]) -> bytes:
    lines = [json.dumps(inst.to_json(), separators=(",", ":")) for inst in instances]
    return ("\n".join(lines) + "\n").encode("utf-8")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write(
    out_dir: str | Path,
    master_seed: int = MASTER_SEED,
    count: int = DEFAULT_COUNT,
    height: int = 8,
    width: int = 8,
) -> Path:
    """Generate a dataset and write it with its manifest; returns the folder."""
    out = Path(out_dir)
    sets = generate(master_seed, count, height, width)
    out.mkdir(parents=True, exist_ok=True)
    files = {}
    for regime, instances in sets.items():
        data = encode_jsonl(instances)
        (out / f"{regime}.jsonl").write_bytes(data)
        files[f"{regime}.jsonl"] = {"sha256": sha256(data), "instances": len(instances)}
    manifest = {
        "dataset_version": DATASET_VERSION,
        "generator_version": GENERATOR_VERSION,
        "master_seed": master_seed,
        "count": count,
        "height": height,
        "width": width,
        "files": files,
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return out


def is_canonical(dataset: str | Path | None) -> bool:
    return dataset in (None, "", "canonical")


def resolve(dataset: str | Path | None) -> Traversable:
    """The dataset folder to use: the canonical set when None."""
    path = CANONICAL_DIR if is_canonical(dataset) else Path(dataset)  # type: ignore[arg-type]
    if not path.is_dir():
        hint = " (the installed package lacks its data: reinstall spatialstale-evals)" if is_canonical(dataset) else ""
        raise DatasetError(f"dataset folder not found: {path}{hint}")
    if not (path / MANIFEST).is_file():
        raise DatasetError(f"{path} has no {MANIFEST}; make datasets with `spatialstale datasets generate`")
    return path


def read_manifest(folder: str | Path | Traversable) -> dict:
    path = (Path(folder) if isinstance(folder, str) else folder) / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        missing = [k for k in MANIFEST_KEYS if k not in manifest]
    except (OSError, ValueError, TypeError) as exc:
        raise DatasetError(f"{path}: unreadable manifest ({exc})") from exc
    if missing or not isinstance(manifest.get("files"), dict):
        raise DatasetError(f"{path}: manifest lacks {', '.join(missing) or 'a files table'}")
    return manifest


def verify_file(folder: Traversable, name: str, manifest: dict) -> bytes:
    path = folder / name
    entry = manifest["files"].get(name)
    if entry is None:
        raise DatasetError(f"{path}: not listed in {folder / MANIFEST}")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read ({exc})") from exc
    if sha256(data) != entry["sha256"]:
        raise DatasetError(
            f"{path}: sha256 does not match the manifest (file corrupt, truncated or edited); "
            "regenerate it with `spatialstale datasets generate`"
        )
    return data


def load(dataset: str | Path | None, regime: str) -> list[Instance]:
    """Instances of one regime from a verified dataset folder."""
    validate_regime(regime)
    folder = resolve(dataset)
    name = f"{regime}.jsonl"
    data = verify_file(folder, name, read_manifest(folder))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{folder / name}: not UTF-8 text ({exc})") from exc
    instances = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            instances.append(Instance.from_json(json.loads(line)))
        except (ValueError, KeyError, TypeError) as exc:
            raise DatasetError(f"{folder / name}:{lineno}: bad instance ({exc})") from exc
    return instances


def verify(dataset: str | Path | None) -> dict[str, int]:
    """Check every file against the manifest and that it regenerates byte for byte.

    Returns instances per file. Raises DatasetError on the first mismatch.
    """
    folder = resolve(dataset)
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
        regime = name.removesuffix(".jsonl")
        if regime not in sets:
            raise DatasetError(f"{folder / name}: regime {regime!r} is not registered here ({', '.join(sets)})")
        if encode_jsonl(sets[regime]) != data:
            raise DatasetError(
                f"{folder / name}: does not regenerate byte for byte from the manifest's "
                f"master seed {manifest['master_seed']} (generator {GENERATOR_VERSION})"
            )
        counts[name] = len(sets[regime])
    return counts
