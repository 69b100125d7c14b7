"""``report`` and ``matrix`` subcommands, for the ``spatialstale`` command.

    spatialstale matrix --model openai/gpt-4o --log-dir logs/matrix --dry-run
    spatialstale matrix --model openai/gpt-4o --model anthropic/claude-sonnet-4-5 --log-dir logs/matrix
    spatialstale report logs/matrix --out report/

``add_subcommands(subparsers)`` adds both to an ``argparse`` subparser group;
each sets ``func`` to a handler that takes the parsed namespace and returns an
exit code. ``python -m spatialstale_evals.analysis.cli ...`` runs them alone.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from spatialstale_evals.analysis.paper import ALPHA

REGIME_CHOICES = ("L1", "L2", "L3")
STRATEGY_CHOICES = ("no_memory", "no_filter", "self_verify", "omcd", "oracle")
MODALITY_CHOICES = ("text", "image")
DISPLAYS = ("full", "conversation", "rich", "plain", "log", "none")


def _key_value(text: str) -> tuple[str, str]:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    key, value = text.split("=", 1)
    return key.strip(), value.strip()


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _models(values: list[str]) -> list[str]:
    return [m.strip() for v in values for m in v.split(",") if m.strip()]


def report_command(args: argparse.Namespace) -> int:
    from spatialstale_evals.analysis.report import build_report

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            report = build_report(args.log_dir, args.out, alpha=args.alpha)
        except FileNotFoundError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    for w in caught:
        if issubclass(w.category, UserWarning) and "skipping" in str(w.message):
            print(f"warning: {w.message}", file=sys.stderr)
    if not args.quiet:
        print(report.terminal_text())
    print(
        f"wrote {report.markdown} and {len(report.plots)} plot(s) in {report.seconds:.1f} s "
        f"({len(report.logset.detect)} detect samples, {len(report.logset.navigate)} navigate episodes)"
    )
    return 0


def matrix_command(args: argparse.Namespace) -> int:
    from spatialstale_evals.analysis.matrix import MatrixSpec, format_plan, plan, run_matrix

    spec = MatrixSpec(
        models=_models(args.model),
        regimes=args.regimes,
        modalities=args.modalities,
        strategies=args.strategies,
        nav_modalities=args.nav_modalities,
        families=args.tasks,
        seeds=args.seeds,
        epochs=args.epochs,
        batch_size=args.batch_size,
        dataset=args.dataset,
    )
    try:
        planned = plan(spec, estimate=args.dry_run)  # validates the spec and loads the dataset
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.dry_run:
        print(format_plan(spec, planned))
        print("\ndry run: no model was called and nothing was written.")
        return 0
    began = time.perf_counter()
    extra: dict[str, Any] = {}
    if args.max_connections is not None:
        extra["max_connections"] = args.max_connections
    ok, logs = run_matrix(  # type: ignore[misc]
        spec,
        args.log_dir,
        model_args={k: _value(v) for k, v in args.model_arg},
        model_roles=dict(args.model_role),
        max_tasks=args.max_tasks,
        retry_attempts=args.retry_attempts,
        display=args.display,
        **extra,
    )
    done = sum(1 for log in logs if log.status == "success")
    print(
        f"matrix {'complete' if ok else 'INCOMPLETE'}: {done}/{len(logs)} task log(s) finished in {args.log_dir} "
        f"({time.perf_counter() - began:.1f} s). "
        + (
            "Next: spatialstale report " + str(args.log_dir) + " --out REPORT_DIR"
            if ok
            else "Run the same command again to resume."
        )
    )
    return 0 if ok else 1


def add_subcommands(subparsers: Any) -> None:
    """Add ``report`` and ``matrix`` to an argparse subparsers group."""
    rp = subparsers.add_parser(
        "report",
        help="tables, paired tests and plots from a folder of detect/navigate logs",
        description="Read every spatialstale log under LOG_DIR and write OUT/REPORT.md plus PNG plots.",
    )
    rp.add_argument("log_dir", type=Path, metavar="LOG_DIR")
    rp.add_argument("--out", type=Path, required=True, metavar="DIR", help="folder for REPORT.md and the plots")
    rp.add_argument("--alpha", type=float, default=ALPHA, help=f"significance level of the paired tests ({ALPHA})")
    rp.add_argument("--quiet", action="store_true", help="do not print the tables")
    rp.set_defaults(func=report_command)

    mp = subparsers.add_parser(
        "matrix",
        help="run the paper's matrix of detect and navigate tasks with eval_set (resumable)",
        description=(
            "Detection over regimes x modalities and navigation over regimes x strategies (x navigation "
            "modalities) for every --model, on inspect_ai.eval_set: running the same command again resumes "
            "and never redoes finished tasks. --dry-run prints the plan and its cost without calling a model."
        ),
    )
    mp.add_argument(
        "--model",
        action="append",
        required=True,
        metavar="M",
        help="model in Inspect's syntax (repeat or comma-separate for several)",
    )
    mp.add_argument("--log-dir", type=Path, required=True, metavar="DIR")
    mp.add_argument(
        "--dry-run", action="store_true", help="print tasks, samples, calls and token estimates; run nothing"
    )
    mp.add_argument(
        "--seeds", type=int, default=None, metavar="N", help="first N instances of each regime (default all 50)"
    )
    mp.add_argument("--epochs", type=int, default=5, metavar="E", help="navigation episodes per seed (default 5)")
    mp.add_argument("--regimes", nargs="+", default=list(REGIME_CHOICES), choices=REGIME_CHOICES)
    mp.add_argument("--strategies", nargs="+", default=list(STRATEGY_CHOICES), choices=STRATEGY_CHOICES)
    mp.add_argument(
        "--modalities",
        nargs="+",
        default=list(MODALITY_CHOICES),
        choices=MODALITY_CHOICES,
        help="detection modalities (default text image)",
    )
    mp.add_argument(
        "--nav-modalities",
        nargs="+",
        default=["text"],
        choices=MODALITY_CHOICES,
        help="navigation modalities (default text)",
    )
    mp.add_argument("--tasks", nargs="+", default=["detect", "navigate"], choices=("detect", "navigate"))
    mp.add_argument("--batch-size", type=int, default=10, help="audit batch size B (default 10)")
    mp.add_argument("--dataset", default=None, help="dataset folder (default the canonical set)")
    mp.add_argument(
        "-M",
        "--model-arg",
        action="append",
        type=_key_value,
        default=[],
        metavar="KEY=VALUE",
        help="model argument for every model (e.g. -M seed=7)",
    )
    mp.add_argument(
        "--model-role",
        action="append",
        type=_key_value,
        default=[],
        metavar="ROLE=MODEL",
        help="model role, e.g. --model-role auditor=openai/gpt-4o",
    )
    mp.add_argument("--max-tasks", type=int, default=None, help="tasks run in parallel (eval_set's max_tasks)")
    mp.add_argument("--max-connections", type=int, default=None, help="concurrent connections per model")
    mp.add_argument("--retry-attempts", type=int, default=None, help="eval_set retries of failed tasks (default 10)")
    mp.add_argument("--display", choices=DISPLAYS, default=None, help="Inspect's progress display")
    mp.set_defaults(func=matrix_command)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m spatialstale_evals.analysis.cli",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_subcommands(parser.add_subparsers(dest="command", required=True))
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
