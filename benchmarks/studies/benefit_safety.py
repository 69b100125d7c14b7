"""Memory that matters, measured with the scripted agents (docs/evaluation-report.md, "Memory that
matters (scripted)"): the benefit of memory on the clean regime L0 and its
price on L2, under full and partial observability, with the filter modes.

    python benchmarks/studies/benefit_safety.py [--radii none,0,1,2] [--seeds 50] [--agents mixed,memory]
        [--no-safety] [--log-dir logs/benefit-safety]

The scripted agents play every configuration on the canonical seeds, text,
one episode each: ``mixed`` (observation where it sees, its memory view
elsewhere; a perfect auditor of what it sees) and ``memory`` (trusts its
memory view and nothing else):

- benefit: every regime, ``no_filter`` vs ``no_memory`` (on L0 memory is
  true; on L1-L3 the comparison is stale memory's net worth), each agent;
- safety: L2, ``no_filter`` vs ``omcd`` (its audit is perfect on the cells in
  view), ``omcd`` with ``filter_mode`` mark and history, ``resolve`` and
  ``oracle``, the ``mixed`` agent.

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

#: The agent of the safety arms (its audit is perfect on what it sees).
AGENT = "mixed"
REGIMES = ("L0", "L1", "L2", "L3")


def configurations(radii: list[int | None], safety: bool = True) -> list[dict[str, Any]]:
    """Every task: each regime with and without memory; with ``safety``, L2
    audited (three filter modes), resolved and oracle."""
    runs: list[dict[str, Any]] = []
    for r in radii:
        runs += [{"regime": g, "strategy": s, "view_radius": r} for g in REGIMES for s in ("no_filter", "no_memory")]
        if safety:
            runs += [{"regime": "L2", "strategy": s, "view_radius": r} for s in ("omcd", "resolve", "oracle")]
            runs += [
                {"regime": "L2", "strategy": "omcd", "view_radius": r, "filter_mode": m} for m in ("mark", "history")
            ]
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--radii", default="none,0,1,2", help="view radii, comma-separated (none: full)")
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--agents", default="mixed,memory", help="scripted agents, comma-separated")
    parser.add_argument("--no-safety", action="store_true", help="only the benefit runs (no audited arms)")
    parser.add_argument("--log-dir", default="logs/benefit-safety")
    args = parser.parse_args()
    radii = [None if r == "none" else int(r) for r in args.radii.split(",")]
    began = time.perf_counter()
    logs, runs = [], 0
    for agent in args.agents.split(","):
        tasks = configurations(radii, safety=agent == AGENT and not args.no_safety)
        runs += len(tasks)
        logs += inspect_eval(
            [navigate(epochs=1, **r) for r in tasks],
            model=f"spatialstale/{agent}",
            log_dir=args.log_dir,
            limit=args.seeds,
            display="none",
            max_tasks=4,
        )
    assert all(log.status == "success" for log in logs), [log.error for log in logs if log.error]
    with tempfile.TemporaryDirectory() as out:
        report = build_report(args.log_dir, out)
    for name in ("benefit",) if args.no_safety else ("benefit", "safety"):
        print(f"**{name.capitalize()}** ({report.tables[name].shape[0]} rows)\n\n{report.rendered[name]}\n")
    episodes = sum(len(log.samples or []) for log in logs)
    print(f"{runs} tasks, {episodes} episodes, {time.perf_counter() - began:.0f} s")


if __name__ == "__main__":
    main()
