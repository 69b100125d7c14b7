"""Memory that matters, measured with the scripted agents (docs/evaluation-report.md, "Memory that
matters (scripted)"): the benefit of memory on the clean regime L0 and its
price on L2, under full and partial observability, with the filter modes.

    python benchmarks/studies/benefit_safety.py [--radii none,0,1,2] [--seeds 50] [--log-dir logs/benefit-safety]

The ``mixed`` agent (observation where it sees, its memory view elsewhere; a
perfect auditor of what it sees) plays every configuration on the canonical
seeds, text, one episode each:

- benefit: L0, ``no_filter`` vs ``no_memory``;
- safety: L2, ``no_filter`` vs ``omcd`` (its audit is perfect on the cells in
  view), ``omcd`` with ``filter_mode`` mark and history, ``resolve`` and ``oracle``.

The tables are the report's own (``spatialstale report`` on the same logs:
``analysis/trust.py``), with its paired Wilcoxon tests, Holm-adjusted within
each (model, config, regime, modality) family.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from typing import Any

from inspect_ai import eval as inspect_eval

from spatialstale_evals.analysis.report import build_report
from spatialstale_evals.navigate import navigate

AGENT = "spatialstale/mixed"


def configurations(radii: list[int | None]) -> list[dict[str, Any]]:
    """Every task: L0 with and without memory; L2 raw, audited (three filter modes), resolved, oracle."""
    runs: list[dict[str, Any]] = []
    for r in radii:
        runs += [{"regime": "L0", "strategy": s, "view_radius": r} for s in ("no_filter", "no_memory")]
        runs += [{"regime": "L2", "strategy": s, "view_radius": r} for s in ("no_filter", "omcd", "resolve", "oracle")]
        runs += [{"regime": "L2", "strategy": "omcd", "view_radius": r, "filter_mode": m} for m in ("mark", "history")]
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--radii", default="none,0,1,2", help="view radii, comma-separated (none: full)")
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--log-dir", default="logs/benefit-safety")
    args = parser.parse_args()
    radii = [None if r == "none" else int(r) for r in args.radii.split(",")]
    began = time.perf_counter()
    runs = configurations(radii)
    logs = inspect_eval(
        [navigate(epochs=1, **r) for r in runs],
        model=AGENT,
        log_dir=args.log_dir,
        limit=args.seeds,
        display="none",
        max_tasks=4,
    )
    assert all(log.status == "success" for log in logs), [log.error for log in logs if log.error]
    with tempfile.TemporaryDirectory() as out:
        report = build_report(args.log_dir, out)
    for name in ("benefit", "safety"):
        print(f"**{name.capitalize()}** ({report.tables[name].shape[0]} rows)\n\n{report.rendered[name]}\n")
    episodes = sum(len(log.samples or []) for log in logs)
    print(f"{len(runs)} tasks, {episodes} episodes, {time.perf_counter() - began:.0f} s")


if __name__ == "__main__":
    main()
