"""Where the memory lives, compared on the same lifetimes with the scripted
reference (``diligent``): notes, no memory, one conversation across the
lifetime (``memory=transcript``) without compaction and under Inspect's
``trim`` and ``summary`` strategies (docs/lifelong.md, "One conversation:
``memory=transcript``"; docs/performance.md, "Lifelong: one conversation").

    python benchmarks/lifelong_architectures.py [--lifetimes 10] [--episodes 5]
        [--threshold 8000] [--regimes L1,L2] [--log-dir logs/lifelong-architectures]

Prints the report's architecture table per regime (``lifetime/architecture.py``:
SPL, success, deaths, ``note_balanced`` of the notes, ``kept_balanced`` of what
compaction kept, hazard claims acted on, tokens per lifetime, the SPL gain
against ``memory=none``), the paired tests between architectures, the tokens
per lifetime beside the dry run's estimate, and the first compaction of the
``trim`` run as ``inspect view`` shows it: Inspect's compaction event and the
info event with its scores, as the log holds them (JSON). Each configuration's
log is kept in its own folder under ``--log-dir`` and reused when it is there.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import pandas as pd
from inspect_ai.log import read_eval_log

sys.path.insert(0, str(Path(__file__).parent))
from lifelong_tokens import run  # noqa: E402

from spatialstale_evals.analysis.families import plain_markdown  # noqa: E402
from spatialstale_evals.lifetime.architecture import architecture_tables  # noqa: E402
from spatialstale_evals.lifetime.cost import estimate_lifetime_cost  # noqa: E402
from spatialstale_evals.lifetime.tables import records_from_logs  # noqa: E402
from spatialstale_evals.world import lifetimes  # noqa: E402


def arms(threshold: int) -> dict[str, dict[str, Any]]:
    """The architectures compared: name -> the task arguments beyond the regime and episodes."""
    compacted = {"memory": "transcript", "compaction_threshold": threshold}
    return {
        "notes": {},
        "none": {"memory": "none"},
        "transcript": {"memory": "transcript"},
        "transcript, trim": compacted | {"compaction": "trim"},
        "transcript, summary": compacted | {"compaction": "summary"},
    }


def first_compaction(path: str) -> list[dict[str, Any]]:
    """The first compaction event of the log and the info event that follows it, as JSON."""
    log = read_eval_log(path, resolve_attachments=True)
    for sample in log.samples or []:
        events = sample.events
        for i, event in enumerate(events):
            if event.event == "compaction":
                info = next(e for e in events[i + 1 :] if e.event == "info")
                return [json.loads(e.model_dump_json(exclude_none=True)) for e in (event, info)]
    return []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lifetimes", type=int, default=10)
    parser.add_argument("--episodes", type=int, default=5)
    parser.add_argument("--threshold", type=int, default=8000)
    parser.add_argument("--regimes", default="L1,L2")
    parser.add_argument("--log-dir", type=Path, default=Path("logs/lifelong-architectures"))
    opts = parser.parse_args(argv)
    paths, costs, shown = [], [], []
    for regime in opts.regimes.split(","):
        lives = lifetimes.load(None, regime)[: opts.lifetimes]
        for name, extra in arms(opts.threshold).items():
            args = {"regime": regime, "episodes": opts.episodes, **extra}
            log = run(opts.log_dir, "diligent", args, opts.lifetimes)
            paths.append(log.location)
            counted = [sum(r["tokens"] for r in s.scores["lifelong_scorer"].metadata["episodes"]) for s in log.samples]
            lows = [estimate_lifetime_cost(life, args)["low"] for life in lives]
            estimated = [low["input_tokens"] + low["output_tokens"] for low in lows]
            costs.append({"regime": regime, "architecture": name, "tokens per lifetime": sum(counted) / len(counted),
                          "estimated (low)": sum(estimated) / len(estimated)})  # fmt: skip
            if name == "transcript, trim" and not shown:
                shown = first_compaction(log.location)
    records = records_from_logs(paths)
    records["config"] = ""
    tables = architecture_tables(records)
    for regime, table in tables["architectures"].groupby("regime", sort=True):
        print(f"\n## {regime}: architectures ({opts.lifetimes} lifetimes, {opts.episodes} episodes, diligent)\n")
        print(plain_markdown(table.drop(columns=["model", "config", "regime"])))
    print("\n## Paired tests (per-lifetime SPL; exact signed-rank, Holm within a regime)\n")
    print(plain_markdown(tables["architecture_tests"].drop(columns=["model", "config"])))
    print("\n## Tokens per lifetime, counted and estimated\n")
    print(plain_markdown(pd.DataFrame(costs)))
    print("\n## The first compaction of the trim run, as the log holds it\n")
    print("```json\n" + json.dumps(shown, indent=1) + "\n```")
    return 0


if __name__ == "__main__":
    sys.exit(main())
