"""Memory in the prompt against memory behind the memory tool, with the scripted
references (docs/memory.md, "Memory the agent fetches"): the stale task's
readers on the fixture (or a STALE file) and the navigate task's memory agents
on L2, each in both settings, then the report's side-by-side tables.

    python benchmarks/memory_access.py [--log-dir logs/memory-access] [--stale-path FILE] [--seeds N]

Nothing here computes a figure: it runs the tasks with the agents in place of a
model and then ``spatialstale report``, the commands a model's run takes:

    inspect eval spatialstale_evals/stale.py -T path=tests/fixtures/stale_mini.json -T memory_access=tool \\
        --model spatialstale/stale-aware --model-role grader=spatialstale/judge
    spatialstale matrix --model spatialstale/memory --tasks navigate --regimes L2 --epochs 1 \\
        --strategies no_memory no_filter omcd oracle --factor memory_access=prompt,tool --log-dir DIR
    spatialstale report DIR --out DIR/report

The agents: ``stale-aware`` (reads the folder, then the sessions from the
newest back to one that matches the probe: the newest relevant one),
``stale-naive`` (from the oldest on: the oldest relevant one), ``stale-noread``
(never reads); ``memory`` (believes its memory: reads ``/memories/lake.md``
whenever its request holds no read of it, so every step at ``history=0``),
``memory -M read_memory=false`` (never reads: it plays as with ``no_memory``)
and ``memory`` with ``-T history=50`` (the whole episode kept: it reads once
an episode). The scripted agents are deterministic: one epoch is their value.
A log folder that already holds the runs is not run again.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from inspect_ai import eval_set

from spatialstale_evals.analysis.report import build_report
from spatialstale_evals.navigate import navigate
from spatialstale_evals.stale import stale

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "stale_mini.json"
STALE_AGENTS = ("stale-aware", "stale-naive", "stale-noread")
STRATEGIES = ("no_memory", "no_filter", "omcd", "oracle")


def navigate_runs(seeds: int | None) -> list[tuple[Any, str, dict[str, Any]]]:
    """(task, model, model args) of every navigate run: each strategy in both settings (no_memory: prompt only)."""
    runs: list[tuple[Any, str, dict[str, Any]]] = []
    for strategy in STRATEGIES:
        for access in ("prompt", "tool"):
            if access == "tool" and strategy == "no_memory":
                continue
            runs.append((navigate(regime="L2", strategy=strategy, epochs=1, memory_access=access), "memory", {}))
    runs.append((navigate(regime="L2", strategy="no_filter", epochs=1, memory_access="tool"), "memory",
                 {"read_memory": False}))  # fmt: skip
    runs.append((navigate(regime="L2", strategy="no_filter", epochs=1, memory_access="tool", history=50), "memory", {}))
    runs.append((navigate(regime="L2", strategy="no_filter", epochs=1, history=50), "memory", {}))
    return runs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--log-dir", default="logs/memory-access")
    parser.add_argument("--stale-path", default=str(FIXTURE), help="a STALE file (default the project's fixture)")
    parser.add_argument("--seeds", type=int, default=None, help="first N L2 instances (default: all 50)")
    args = parser.parse_args()
    began, logs = time.perf_counter(), Path(args.log_dir)
    for agent in STALE_AGENTS:
        tasks = [stale(path=args.stale_path, memory_access=a) for a in ("prompt", "tool")]
        eval_set(tasks, log_dir=str(logs / agent), model=f"spatialstale/{agent}",
                 model_roles={"grader": "spatialstale/judge"}, display="none", log_dir_allow_dirty=True)  # fmt: skip
    for k, (task, model, model_args) in enumerate(navigate_runs(args.seeds)):
        eval_set([task], log_dir=str(logs / f"navigate-{k}"), model=f"spatialstale/{model}", model_args=model_args,
                 limit=args.seeds, display="none", log_realtime=False)  # fmt: skip
    report = build_report(logs, logs / "report")
    for name in ("stale_access", "navigate_access"):
        print(f"### {name}\n\n{report.rendered[name]}\n")
    print(f"{time.perf_counter() - began:.1f} s; the whole report: {report.markdown}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
