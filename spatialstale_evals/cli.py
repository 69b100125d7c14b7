"""The ``spatialstale`` command."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from spatialstale_evals import local_model, quickstart
from spatialstale_evals.analysis.cli import add_subcommands as add_analysis_subcommands
from spatialstale_evals.local_model import LocalModelError
from spatialstale_evals.runs.cli import add_matrix_subcommand
from spatialstale_evals.world import dataset, lifetimes, output_folder, stats
from spatialstale_evals.world.grid import GridError, validate_size
from spatialstale_evals.world.regimes import RegimeError


def _sizes(text: str) -> list[tuple[int, int]]:
    """``8x8`` or a comma-separated list of sizes (``8x8,16x16,32x32``)."""
    try:
        return [dataset.parse_size(part) for part in text.split(",") if part.strip()] or [dataset.parse_size(text)]
    except dataset.DatasetError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def _datasets_generate(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    (h, w), *more = args.size
    output_folder.check_numbers(args.master_seed, args.count)
    for height, width in args.size:
        validate_size(height, width)
    out = output_folder.check_out(args.out, args.force)
    try:
        _write_sets(out, args, h, w, more)
    except OSError as exc:
        raise dataset.DatasetError(f"--out {args.out}: cannot write ({exc})") from None
    print(f"generated in {time.perf_counter() - start:.2f} s")
    return 0


def _write_sets(out: Path, args: argparse.Namespace, h: int, w: int, more: list[tuple[int, int]]) -> None:
    out = dataset.write(out, args.master_seed, args.count, h, w, more_sizes=more)
    for size in dataset.sizes_of(out):
        folder = dataset.resolve(out, size)
        for name, entry in dataset.read_manifest(folder)["files"].items():
            print(f"{folder / name}: {entry['instances']} instances, sha256 {entry['sha256'][:16]}...")
    lives = lifetimes.write(out, args.master_seed, args.count, h, w)  # the lifelong task's, on the top size's instances
    for name, entry in dataset.read_manifest(lives)["files"].items():
        print(f"{lives / name}: {entry['instances']} lifetimes, sha256 {entry['sha256'][:16]}...")


def _chosen_sizes(args: argparse.Namespace) -> list[str]:
    """The sizes named by ``--size``, else every size the dataset holds."""
    if args.size:
        return [dataset.size_name(h, w) for h, w in args.size]
    return dataset.sizes_of(args.dataset)


def _datasets_verify(args: argparse.Namespace) -> int:
    for size in _chosen_sizes(args):
        start = time.perf_counter()
        counts = dataset.verify(args.dataset, size)
        folder = dataset.resolve(args.dataset, size)
        for name, n in counts.items():
            print(f"{folder / name}: OK ({n} instances, checksum and byte-exact regeneration)")
        print(f"{size} verified in {time.perf_counter() - start:.1f} s")
    top = dataset.resolve(args.dataset)
    if dataset.own_size(top) in _chosen_sizes(args) and (top / lifetimes.LIFETIME_DIR).is_dir():
        where = lifetimes.folder(args.dataset)
        for name, n in lifetimes.verify(args.dataset).items():
            print(f"{where / name}: OK ({n} lifetimes, checksum and byte-exact regeneration)")
    return 0


def _datasets_stats(args: argparse.Namespace) -> int:
    for k, size in enumerate(_chosen_sizes(args)):
        folder = dataset.resolve(args.dataset, size)
        manifest = dataset.read_manifest(folder)
        by_regime = {}
        for name in manifest["files"]:
            regime = dataset.regime_of(name)
            by_regime[regime] = stats.regime_stats(dataset.load(folder, regime))
        where = f"({folder}, {size}, master seed {manifest['master_seed']})"
        print("\n" if k else "", end="")
        if stats.is_paper_size(size):
            print(f"Stale ratio per regime {where} beside the paper's Table 1:\n")
            print(stats.format_table(by_regime, int(manifest["height"]) * int(manifest["width"])))
        else:
            print(f"Stale ratio per regime {where} beside the canonical 8x8 set's (target: its mean +- 0.01):\n")
            print(stats.format_size_table(by_regime, stats.size_targets()))
    return 0


def _local_model_start(args: argparse.Namespace) -> int:
    began = time.perf_counter()
    state = local_model.start(args.port, timeout=args.timeout, n_ctx=args.n_ctx)
    print(f"local model server up in {time.perf_counter() - began:.1f} s: PID {state.pid}, {state.base_url}")
    print(f"  model file: {state.model}")
    print(f"  server output: {state.log}")
    print(
        f"  use: inspect eval spatialstale_evals/detect.py --model {local_model.INSPECT_MODEL} "
        f"--model-base-url {state.base_url} --temperature 0 --max-tokens 512"
    )
    print(f"  stop: spatialstale local-model stop --port {state.port}")
    return 0


def _local_model_stop(args: argparse.Namespace) -> int:
    state = local_model.stop(args.port)
    if state is None:
        print(f"no local model server recorded on port {args.port}")
        return 1
    print(f"stopped local model server PID {state.pid} on port {state.port}")
    return 0


def _local_model_status(args: argparse.Namespace) -> int:
    info = local_model.status(args.port)
    for key, value in info.items():
        print(f"{key}: {value}")
    return 0 if info["running"] and info["answering"] else 1


def _quickstart(args: argparse.Namespace) -> int:
    return quickstart.main(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="spatialstale", description=__doc__, allow_abbrev=False)
    sub = parser.add_subparsers(dest="command", required=True)

    ds = sub.add_parser("datasets", help="generate, verify and describe benchmark datasets")
    ds_sub = ds.add_subparsers(dest="action", required=True)
    gen = ds_sub.add_parser(
        "generate",
        help="write a dataset folder (by default the canonical set's parameters, 8x8 only)",
        description=(
            "Write a dataset folder: one JSONL file per regime (gzip-compressed over 2 MB) and its MANIFEST.json, "
            "the lifelong task's lifetimes on them in lifelong/, and a sub-folder for each further --size. "
            "With the default seed and count and "
            f"--size {','.join(dataset.SIZES)} it is a byte-for-byte copy of the canonical set (which ships inside "
            f"the package, spatialstale_evals/data/{dataset.DATASET_VERSION}). A folder inside the installed "
            "package, or one that holds a canonical set, is refused unless --force."
        ),
    )
    gen.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="DIR",
        help="folder to write (created if missing); not inside the package nor a canonical set's, unless --force",
    )
    gen.add_argument("--master-seed", type=int, default=dataset.MASTER_SEED, help=f"0..{dataset.MAX_SEED}")
    gen.add_argument(
        "--count", type=int, default=dataset.DEFAULT_COUNT, help=f"instances per regime (1..{dataset.MAX_COUNT})"
    )
    gen.add_argument(
        "--force",
        action="store_true",
        help="write even into the installed package or over a canonical set (docs/extending.md: a new regime)",
    )
    gen.add_argument(
        "--size",
        type=_sizes,
        default=[(8, 8)],
        help="grid size HxW (default 8x8), or a comma-separated list: the first at the top of --out, each other in "
        f"its sub-folder (the canonical set: {','.join(dataset.SIZES)})",
    )
    gen.set_defaults(func=_datasets_generate)
    ver = ds_sub.add_parser("verify", help="check checksums and byte-exact regeneration")
    ver.add_argument("dataset", nargs="?", default=None, help="dataset folder (default: canonical)")
    ver.add_argument("--size", type=_sizes, default=None, help="sizes to verify, comma-separated (default: all)")
    ver.set_defaults(func=_datasets_verify)
    st = ds_sub.add_parser(
        "stats", help="stale-ratio statistics beside the paper's Table 1 (larger sizes: beside the 8x8 set)"
    )
    st.add_argument("dataset", nargs="?", default=None, help="dataset folder (default: canonical)")
    st.add_argument("--size", type=_sizes, default=None, help="sizes to describe, comma-separated (default: all)")
    st.set_defaults(func=_datasets_stats)

    lm = sub.add_parser("local-model", help="serve the bundled SmolLM2 model on 127.0.0.1 (needs the [local] extra)")
    lm_sub = lm.add_subparsers(dest="action", required=True)
    lm_start = lm_sub.add_parser("start", help="start the server in the background; wait until /v1/models answers")
    lm_start.add_argument("--port", type=int, default=local_model.DEFAULT_PORT)
    lm_start.add_argument("--timeout", type=float, default=local_model.START_TIMEOUT, help="seconds to wait")
    lm_start.add_argument("--n-ctx", type=int, default=local_model.N_CTX, help="context window in tokens")
    lm_start.set_defaults(func=_local_model_start)
    lm_stop = lm_sub.add_parser("stop", help="stop the server by its recorded PID")
    lm_stop.add_argument("--port", type=int, default=local_model.DEFAULT_PORT)
    lm_stop.set_defaults(func=_local_model_stop)
    lm_status = lm_sub.add_parser("status", help="is the server running and answering?")
    lm_status.add_argument("--port", type=int, default=local_model.DEFAULT_PORT)
    lm_status.set_defaults(func=_local_model_status)

    qs = sub.add_parser(
        "quickstart",
        help="serve the local model, run a small detect + navigate evaluation, print the results",
    )
    quickstart.add_arguments(qs)
    qs.set_defaults(func=_quickstart)

    add_analysis_subcommands(sub)
    add_matrix_subcommand(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and not getattr(args, "passthrough", False):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return args.func(args, extra) if getattr(args, "passthrough", False) else args.func(args)
    except (dataset.DatasetError, GridError, RegimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except LocalModelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
