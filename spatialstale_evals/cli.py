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
        help="write a dataset folder (by default the canonical set's parameters)",
        description=(
            "Write a dataset folder: one JSONL file per regime and its MANIFEST.json. With the default "
            "parameters it is a byte-for-byte copy of the canonical set (which ships inside the package, "
            f"spatialstale_evals/data/{dataset.DATASET_VERSION}, and is never written by this command)."
        ),
    )
    gen.add_argument("--out", type=Path, required=True, metavar="DIR", help="folder to write (created if missing)")
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
