"""The lifelong metrics through Inspect's real epoch reducer
(``pytest_inspect_evals.metrics``), on score values built by the real
``score_value`` from hand-written episode records; expected values worked
out by hand. Metrics named: success_rate, death_rate, timeout_rate,
note_accuracy, note_coverage, repair_rate, stale_claims, hazard_claims,
conflicting_cells, unparsed_lines, memory_bytes, by_episode."""

from __future__ import annotations

import functools
import math
from typing import Any

import pytest
import pytest_inspect_evals.metrics as epoch_replay
from inspect_ai import Task
from pytest_inspect_evals.metrics import run_metrics

from spatialstale_evals.lifetime.scoring import LIFELONG_METRICS, score_value


@pytest.fixture(scope="module", autouse=True)
def _replay_without_a_model_turn():
    """As in test_metrics_reducers.py: the helper's task gets an empty solver
    chain, so no mockllm turn needs tiktoken (offline)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(epoch_replay, "Task", functools.partial(Task, solver=[]))
        yield


def record(k: int, outcome: str, claims: int = 0, true: int = 0, hazard: int = 0, seen: int = 0, covered: int = 0,
           repairable: int = 0, repaired: int = 0, cause: str | None = None) -> dict[str, Any]:  # fmt: skip
    notes = {
        "claims": claims, "claims_true": true, "stale_claims": claims - true, "hazard_claims": hazard,
        "conflicting_cells": 0, "claimed_cells": claims, "seen_cells": seen, "covered_cells": covered,
        "unparsed_lines": 1, "memory_bytes": 14 * claims,
    }  # fmt: skip
    return {
        "episode": k, "outcome": outcome, "notes": notes, "death_cause": cause, "fallbacks": [],
        "repair": {"repairable": repairable, "repaired": repaired, "removed": 0}, "memory_calls": 1, "tokens": 100,
    }  # fmt: skip


def test_lifelong_metrics_pool_counts_and_leave_empty_ratios_nan():
    a = [record(1, "success", seen=0), record(2, "death", claims=10, true=8, hazard=1, seen=10, covered=10,
                                                 repairable=2, repaired=1, cause="safe_note")]  # fmt: skip
    b = [record(1, "timeout"), record(2, "success", claims=4, true=4, seen=8, covered=4)]
    values = run_metrics(LIFELONG_METRICS, [[score_value(a, 2)], [score_value(b, 2)]])
    got = {k.split("/")[-1]: v for k, v in values.items()}
    assert got["success_rate"] == 0.5 and got["death_rate"] == 0.25 and got["timeout_rate"] == 0.25
    assert got["note_accuracy"] == 12 / 14 and got["note_coverage"] == 14 / 18
    assert got["repair_rate"] == 0.5
    assert got["stale_claims"] == 2 / 4 and got["hazard_claims"] == 1 / 4 and got["conflicting_cells"] == 0.0
    assert got["unparsed_lines"] == 1.0 and got["memory_bytes"] == 14 * 14 / 4
    assert got["success_rate_1"] == 0.5 and got["success_rate_2"] == 0.5 and got["death_rate_2"] == 0.5
    assert math.isnan(got["note_accuracy_1"]) and got["note_accuracy_2"] == 12 / 14  # no claim at all in episode 1
    assert math.isnan(got["repair_rate_1"]) and got["hazard_claims_2"] == 0.5


def test_lifetime_tables_pool_by_group_and_leave_empty_ratios_nan():
    import pandas as pd

    from spatialstale_evals.lifetime.tables import lifetime_tables

    a = [record(1, "success"), record(2, "death", claims=10, true=8, hazard=1, seen=10, covered=10,
                                      repairable=2, repaired=1, cause="safe_note")]  # fmt: skip
    b = [record(1, "timeout"), record(2, "success", claims=4, true=4, seen=8, covered=4)]
    frame = pd.DataFrame(
        [
            {"model": "m", "regime": "L1", "value": score_value(a, 2)},
            {"model": "m", "regime": "L1", "value": score_value(b, 2)},
            {"model": "m", "regime": "L0", "value": score_value(b, 2)},
        ]
    )
    tables = lifetime_tables(frame)
    assert tables["success_by_episode"].loc[("m", "L1")].tolist() == [0.5, 0.5]
    assert tables["success_by_episode"].loc[("m", "L0")].tolist() == [0.0, 1.0]
    accuracy = tables["note_accuracy_by_episode"].loc[("m", "L1")]
    assert math.isnan(accuracy[1]) and accuracy[2] == 12 / 14
    summary = tables["summary"].loc[("m", "L1")]
    assert summary["repair_rate"] == 0.5 and summary["hazard_claims"] == 0.25 and summary["lifetimes"] == 2
    assert math.isnan(tables["summary"].loc[("m", "L0"), "repair_rate"])
    assert tables["deaths_by_cause"].loc[("m", "L1")].to_dict() == {
        "safe_note": 1.0, "no_note": 0.0, "hole_note": 0.0, "conflicting_note": 0.0, "fallback": 0.0,
    }  # fmt: skip
