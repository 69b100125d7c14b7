"""``spatialstale report``: tables, paired tests and plots from a folder of logs.

    spatialstale report logs/matrix --out report/
    spatialstale report logs/ --out report/ --model-info models.csv   # the trust gap's capability curve

``add_subcommands(subparsers)`` adds it to an ``argparse`` subparser group; it
sets ``func`` to a handler that takes the parsed namespace and returns an exit
code. ``python -m spatialstale_evals.analysis.cli ...`` runs it alone.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from typing import Any

from spatialstale_evals.paper import ALPHA


def report_command(args: argparse.Namespace) -> int:
    from spatialstale_evals.analysis.report import build_report
    from spatialstale_evals.harness.family import families
    from spatialstale_evals.world.output_folder import make_folder

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            make_folder(args.out)
            report = build_report(args.log_dir, args.out, alpha=args.alpha, model_info=args.model_info)
        except (OSError, ValueError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    for w in caught:
        if issubclass(w.category, UserWarning) and "skipping" in str(w.message):
            print(f"warning: {w.message}", file=sys.stderr)
    if not args.quiet:
        print(report.terminal_text())
    counts = ", ".join(
        f"{len(report.logset.records.get(name, ()))} {name} {family.unit}(s)" for name, family in families().items()
    )
    print(f"wrote {report.markdown} and {len(report.plots)} plot(s) in {report.seconds:.1f} s ({counts})")
    return 0


def add_subcommands(subparsers: Any) -> None:
    """Add ``report`` to an argparse subparsers group."""
    rp = subparsers.add_parser(
        "report",
        help="tables, paired tests and plots from a folder of detect/navigate/probe logs",
        description="Read every spatialstale log under LOG_DIR and write OUT/REPORT.md plus PNG plots.",
    )
    rp.add_argument("log_dir", type=str, metavar="LOG_DIR")
    rp.add_argument("--out", type=Path, required=True, metavar="DIR", help="folder for REPORT.md and the plots")
    rp.add_argument("--alpha", type=float, default=ALPHA, help=f"significance level of the paired tests ({ALPHA})")
    rp.add_argument(
        "--model-info",
        type=Path,
        metavar="CSV",
        help="a model column and one numeric column (parameters, a benchmark score): the trust-gap view plots "
        "the stale-memory tax against it",
    )
    rp.add_argument("--quiet", action="store_true", help="do not print the tables")
    rp.set_defaults(func=report_command)


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
