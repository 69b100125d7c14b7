"""The sample list shows a few headline values per sample, and every
log-level metric is what it was when the score value held every count.

Method: ``tests/fixtures/headline_baseline.json`` holds the log-level
metrics of one scripted run of every task family (``RUNS``: detect,
navigate with ``epochs=2``, probe, stale with its scripted agent and judge,
lifelong), written by this module (``python tests/test_headline_scores.py``
with ``PYTHONPATH`` at a checkout of the code from before the counts moved
to ``Score.metadata["counts"]``, when every count was a key of
``Score.value`` and Inspect's ``mean`` reduced them). The scripted runs are
deterministic, so the same runs on the current code must log the same
metrics, every one, exactly (NaN where the baseline has NaN). Independently
of the baseline, the navigate run's pooled step metric and the reduced
counts are recomputed here from the samples' own recorded counts, epoch by
epoch: the reducer must average each sample's counts over its epochs, as
the ``mean`` reducer averaged them when they were the value.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog

BASELINE = Path(__file__).parent / "fixtures" / "headline_baseline.json"
STALE_FILE = Path(__file__).parent / "fixtures" / "stale_mini.json"
#: name -> (task, task arguments, model, model arguments, model roles, samples)
RUNS: dict[str, tuple[str, dict[str, Any], str, dict[str, Any], dict[str, str], int]] = {
    "detect": ("detect", {"regime": "L3"}, "spatialstale/random", {"seed": 3}, {}, 2),
    # success, death and a death on a stale cell, the same in both epochs
    "navigate": ("navigate", {"regime": "L2", "strategy": "no_filter", "epochs": 2}, "spatialstale/memory", {}, {}, 2),
    # epochs that differ (steps): the pooled ratios must not notice the averaging
    "navigate_random": (
        "navigate", {"regime": "L2", "strategy": "no_filter", "epochs": 2}, "spatialstale/random", {"seed": 5}, {}, 3
    ),
    "probe": ("probe", {"regime": "L2"}, "spatialstale/random", {"seed": 3}, {}, 2),
    "stale": ("stale", {"path": str(STALE_FILE)}, "spatialstale/stale-naive", {}, {"grader": "spatialstale/judge"}, 5),
    "lifelong": ("lifelong", {"regime": "L1", "episodes": 2}, "spatialstale/diligent", {}, {}, 2),
}


def run_all(log_dir: Path) -> dict[str, EvalLog]:
    """Every run of ``RUNS``, through the task functions by name (as the CLI finds them)."""
    logs = {}
    for name, (task, args, model, model_args, roles, limit) in RUNS.items():
        (log,) = inspect_eval(
            f"spatialstale_evals/{task}",
            task_args=args,
            model=model,
            model_args=model_args,
            model_roles=roles or None,
            limit=limit,
            display="none",
            log_dir=str(log_dir / name),
        )
        assert log.status == "success", (name, log.error)
        logs[name] = log
    return logs


def log_metrics(log: EvalLog) -> dict[str, float]:
    """Every metric the log's results hold, by name."""
    return {name: m.value for s in (log.results.scores if log.results else []) for name, m in s.metrics.items()}


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        metrics = {name: log_metrics(log) for name, log in run_all(Path(tmp)).items()}
    BASELINE.write_text(json.dumps(metrics, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {BASELINE} ({sum(len(m) for m in metrics.values())} metrics)", file=sys.stderr)
