"""The ``spatialstale`` command."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from spatialstale_evals.world import dataset, stats
from spatialstale_evals.world.grid import GridError
from spatialstale_evals.world.regimes import RegimeError


def _size(text: str) -> tuple[int, int]:
    try:
        h, w = (int(x) for x in text.lower().split("x"))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"size must look like 8x8, got {text!r}") from exc
    return h, w


def _datasets_generate(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    h, w = args.size
    out = dataset.write(args.out, args.master_seed, args.count, h, w)
    manifest = dataset.read_manifest(out)
    for name, entry in manifest["files"].items():
        print(f"{out / name}: {entry['instances']} instances, sha256 {entry['sha256'][:16]}...")
    print(f"generated in {time.perf_counter() - start:.2f} s")
    return 0


def _datasets_verify(args: argparse.Namespace) -> int:
    counts = dataset.verify(args.dataset)
    folder = dataset.resolve(args.dataset)
    for name, n in counts.items():
        print(f"{folder / name}: OK ({n} instances, checksum and byte-exact regeneration)")
    return 0


def _datasets_stats(args: argparse.Namespace) -> int:
    folder = dataset.resolve(args.dataset)
    manifest = dataset.read_manifest(folder)
    by_regime = {}
    for name in manifest["files"]:
        regime = name.removesuffix(".jsonl")
        by_regime[regime] = stats.regime_stats(dataset.load(folder, regime))
    cells = int(manifest["height"]) * int(manifest["width"])
    print(
        f"Stale ratio per regime ({folder}, {manifest['height']}x{manifest['width']}, "
        f"master seed {manifest['master_seed']}) beside the paper's Table 1:\n"
    )
    print(stats.format_table(by_regime, cells))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="spatialstale", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    ds = sub.add_parser("datasets", help="generate, verify and describe benchmark datasets")
    ds_sub = ds.add_subparsers(dest="action", required=True)
    gen = ds_sub.add_parser("generate", help="write a dataset folder (the canonical set by default)")
    gen.add_argument("--out", type=Path, default=dataset.CANONICAL_DIR)
    gen.add_argument("--master-seed", type=int, default=dataset.MASTER_SEED)
    gen.add_argument("--count", type=int, default=dataset.DEFAULT_COUNT, help="instances per regime")
    gen.add_argument("--size", type=_size, default=(8, 8), help="grid size HxW (default 8x8)")
    gen.set_defaults(func=_datasets_generate)
    ver = ds_sub.add_parser("verify", help="check checksums and byte-exact regeneration")
    ver.add_argument("dataset", nargs="?", default=None, help="dataset folder (default: canonical)")
    ver.set_defaults(func=_datasets_verify)
    st = ds_sub.add_parser("stats", help="stale-ratio statistics beside the paper's Table 1")
    st.add_argument("dataset", nargs="?", default=None, help="dataset folder (default: canonical)")
    st.set_defaults(func=_datasets_stats)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (dataset.DatasetError, GridError, RegimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
