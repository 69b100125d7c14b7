"""The scripted reference agents over the benchmark (docs/evaluation-report.md,
"Scripted reference agents"; docs/tasks.md, "probe"): what an agent that
sees everything (``observer``), one that believes only its memory
(``memory``) and a coin (``random``) score on the canonical instances.

    python benchmarks/scripted_reference.py [--log-dir logs/reference] [--seeds N] [--agents observer,memory,random]
        [--regimes L1 ...]

Nothing here computes a figure: it runs the paper's matrix with the agents in
place of a model and then the report, the same two commands as for a model,

    spatialstale matrix --model spatialstale/observer,spatialstale/memory,spatialstale/random \\
        --tasks detect navigate probe --epochs 1 --nav-modalities text --display none --log-dir logs/reference
    spatialstale report logs/reference --out logs/reference/report --quiet

and prints the report's detection, navigation and probe tables (the whole
report is in ``<log-dir>/report/REPORT.md``). One epoch is the exact value of
``observer`` and ``memory`` (deterministic); ``random`` draws per (sample,
epoch, prompt) from its ``-M seed`` (0 by default). A log folder that already
holds the matrix is resumed, not re-run. The calls and tokens per instance are
the matrix's dry run (``--dry-run``: exact for the ``observer``'s replies).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from spatialstale_evals import cli
from spatialstale_evals.analysis.layout import titles

#: The report's tables printed here (``analysis.layout.titles()`` names their sections).
TABLES = ("detection", "direction", "navigation", "steps", "probe")


def sections(report: str, tables: tuple[str, ...] = TABLES) -> str:
    """The sections of the Markdown ``report`` that hold ``tables``, each from
    its heading to the next heading."""
    chunks = {chunk.split("\n", 1)[0]: chunk for chunk in report.split("\n### ")[1:]}
    title = titles()
    missing = [name for name in tables if title[name] not in chunks]
    if missing:
        raise SystemExit(f"the report has no {', '.join(missing)} table")
    return "\n\n".join("### " + chunks[title[name]].split("\n## ")[0].strip() for name in tables)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--log-dir", default="logs/reference")
    parser.add_argument("--seeds", type=int, default=None, help="first N instances of each regime (default: all)")
    parser.add_argument("--agents", default="observer,memory,random")
    parser.add_argument("--regimes", nargs="+", default=None, help="the matrix's regimes (default: the paper's)")
    args = parser.parse_args()
    models = ",".join(f"spatialstale/{agent}" for agent in args.agents.split(","))
    matrix = ["matrix", "--model", models, "--tasks", "detect", "navigate", "probe", "--epochs", "1"]
    matrix += ["--nav-modalities", "text", "--display", "none", "--log-dir", args.log_dir]
    matrix += ["--seeds", str(args.seeds)] if args.seeds else []
    matrix += ["--regimes", *args.regimes] if args.regimes else []
    began = time.perf_counter()
    if code := cli.main(matrix):
        return code
    ran = time.perf_counter() - began
    out = Path(args.log_dir) / "report"
    if code := cli.main(["report", args.log_dir, "--out", str(out), "--quiet"]):
        return code
    print(f"\n{sections((out / 'REPORT.md').read_text(encoding='utf-8'))}")
    print(f"\n(matrix {ran:.0f} s, report {time.perf_counter() - began - ran:.0f} s; report in {out / 'REPORT.md'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
