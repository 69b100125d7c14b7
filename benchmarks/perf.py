"""Measured cost of the suite: harness overhead, tokens, memory, log size, scaling.

    python benchmarks/perf.py [--quick] [--json perf.json] [--keep-logs DIR] [--only overhead,logs]
                              [--no-log-realtime]

Everything is measured in one run, side by side, so a noisy machine affects
both sides of each comparison alike. Scripted agents (``spatialstale/<policy>``)
stand in for a model; they count tokens as ceil(characters / 4) over every
message and tool definition sent, plus 255 per image, and likewise over the
reply (``spatialstale_evals/scripted/api.py``). The sections, each a
module of ``benchmarks/perfbench/`` whose docstring says how it measures:

- **overhead** (``overhead.py``, ``profiling.py``): wall time of ``navigate``
  with an instant agent that replays the scripted observer's moves, divided by
  that of a bare Inspect loop making the same ``generate`` calls with prompts
  of the same size; median of alternating pairs; a cProfile by code area.
  ``--no-log-realtime`` runs both sides as the matrix does, without Inspect's
  realtime sample buffer (a per-event SQLite copy for live viewing).
- **tokens** (``tokens.py``): per navigation decision and per episode by
  strategy, per detection instance at B = 1, 10, 20, 64 (counted by the
  matrix's cost model, ``runs/cost.py``), and a linear fit of an episode's
  tokens on its steps at ``history=0``.
- **memory** (``memory.py``): peak RSS of a subprocess running the full
  50-seed text ``navigate``, beside one running a single episode.
- **logs** (``logs.py``): ``.eval`` bytes per episode (observer, and a
  wandering agent whose episodes all last 50 steps), and ``read_eval_log``
  times on 50-seed image logs.
- **scaling** (``scaling.py``): dataset generation, ``render_png`` and prompt
  tokens at 8x8, 16x16 and 32x32.

A full run prints the Markdown report (``report.py``); a partial one
(``--only``) prints its JSON. Both write the JSON to ``--json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from perfbench import providers  # noqa: F401 - registers the perfbench/<name> models with Inspect
from perfbench.logs import measure_logs
from perfbench.memory import measure_memory
from perfbench.overhead import measure_overhead
from perfbench.profiling import profile_overhead
from perfbench.report import render_report
from perfbench.runner import machine
from perfbench.scaling import measure_scaling
from perfbench.tokens import measure_detect, measure_tokens

SECTIONS = ("overhead", "tokens", "memory", "logs", "scaling")


def strip_private(obj: Any) -> Any:
    """``obj`` without the ``_``-prefixed keys (inputs between measurements)."""
    if isinstance(obj, dict):
        return {k: strip_private(v) for k, v in obj.items() if not k.startswith("_")}
    if isinstance(obj, list):
        return [strip_private(v) for v in obj]
    return obj


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer instances and repeats (about 2-3 minutes)")
    parser.add_argument("--json", default="perf.json", help="where to write the results (default perf.json)")
    parser.add_argument("--keep-logs", default=None, help="keep the Inspect logs in this folder")
    parser.add_argument(
        "--only",
        default=",".join(SECTIONS),
        help=f"comma-separated sections to run, of {', '.join(SECTIONS)} (default: all)",
    )
    parser.add_argument(
        "--no-log-realtime",
        action="store_true",
        help="overhead: both sides without Inspect's realtime sample buffer, as spatialstale matrix runs",
    )
    args = parser.parse_args()
    args.sections = set(args.only.split(","))
    if not args.sections <= set(SECTIONS):
        parser.error(f"--only: unknown section(s) {sorted(args.sections - set(SECTIONS))}; choose from {SECTIONS}")
    return args


def run_sections(
    res: dict[str, Any], sections: set[str], quick: bool, tmp: Path, started: float, options: dict[str, Any]
) -> None:
    """Run the chosen measurements in their fixed order, into ``res``; the
    overhead's two sides with the eval ``options``."""

    def step(name: str) -> None:
        print(f"[{time.perf_counter() - started:6.1f} s] {name}", file=sys.stderr, flush=True)

    # Runs of a few seconds each (all 50 instances in a full run): shorter runs
    # were dominated by scheduling noise on a shared 2-core machine.
    overhead_limit, repeats = (20, 2) if quick else (50, 7)
    if "overhead" in sections:
        res["overhead"], res["profile"] = [], []
        for modality in ("text", "image"):
            step(f"overhead, {modality}")
            res["overhead"].append(measure_overhead(modality, overhead_limit, repeats, tmp, options))
        for o in res["overhead"]:
            step(f"profile, {o['modality']}")
            res["profile"].append(profile_overhead(o, overhead_limit, tmp))
    if "tokens" in sections:
        step("tokens per navigation decision / episode")
        res["tokens"] = measure_tokens(10 if quick else 50, ["text"] if quick else ["text", "image"], tmp)
        step("tokens per detection instance")
        res["detect"] = measure_detect(10 if quick else 50)
    if "memory" in sections:
        step("peak RSS (subprocesses)")
        res["memory"] = measure_memory(1 if quick else 5, tmp)
    if "logs" in sections:
        step("log sizes")
        res["logs"] = measure_logs(quick, tmp)
    if "scaling" in sections:
        step("scaling")
        res["scaling"] = measure_scaling(tmp, renders=5 if quick else 20)


def main() -> None:
    args = parse_args()
    started = time.perf_counter()
    res: dict[str, Any] = {"quick": args.quick, "machine": machine()}
    with tempfile.TemporaryDirectory(prefix="spatialstale-perf-") as tmpdir:
        tmp = Path(args.keep_logs) if args.keep_logs else Path(tmpdir)
        options = {"log_realtime": False} if args.no_log_realtime else {}
        run_sections(res, args.sections, args.quick, tmp, started, options)
    res["machine"]["load_after"] = os.getloadavg()
    res["wall_s"] = time.perf_counter() - started
    # The report needs every section; a partial run prints its JSON instead.
    print(render_report(res) if args.sections == set(SECTIONS) else json.dumps(strip_private(res), indent=2))
    Path(args.json).write_text(json.dumps(strip_private(res), indent=2) + "\n", encoding="utf-8")
    print(f"\nJSON: {args.json}", file=sys.stderr)


if __name__ == "__main__":
    main()
