"""The lifelong metrics through Inspect's real epoch reducer
(``pytest_inspect_evals.metrics``), on score values built by the real
``score_value`` from hand-written episode records; expected values worked
out by hand. Metrics named: episode_success_rate, episode_death_rate,
episode_timeout_rate, episode_limit_rate, spl, excess_steps, episode_steps,
note_balanced, note_attainable, note_precision, note_recall, note_coverage,
repair_rate, stale_claims, hazard_claims, hazard_death_rate,
conflicting_cells, unparsed_lines, memory_bytes, by_episode."""

from __future__ import annotations

import functools
import math
from fractions import Fraction
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
           repairable: int = 0, repaired: int = 0, cause: str | None = None, steps: int = 14, shortest: int = 14,
           knowable: tuple[int, int, int, int, int, int] = (0, 0, 0, 0, 0, 0)) -> dict[str, Any]:  # fmt: skip
    notes = {
        "claims": claims, "claims_true": true, "stale_claims": claims - true, "hazard_claims": hazard,
        "conflicting_cells": 0, "claimed_cells": claims, "seen_cells": seen, "covered_cells": covered,
        "unparsed_lines": 1, "memory_bytes": 14 * claims,
    }  # fmt: skip
    success = outcome == "success"
    return {
        "episode": k, "outcome": outcome, "notes": notes, "death_cause": cause, "fallbacks": [],
        "repair": {"repairable": repairable, "repaired": repaired, "removed": 0}, "memory_calls": 1, "tokens": 100,
        "steps": steps, "shortest": shortest, "spl": shortest / max(shortest, steps) if success else 0.0,
        "excess_steps": steps - shortest if success else None, "hazard_acted_on": cause == "safe_note",
        "knowable": dict(zip(("knowable_safe", "knowable_hole", "told_safe", "told_hole", "sighted_safe",
                              "sighted_hole"), knowable)),
    }  # fmt: skip


def test_lifelong_metrics_pool_counts_and_leave_empty_ratios_nan():
    a = [record(1, "success", seen=0, steps=20), record(2, "death", claims=10, true=8, hazard=1, seen=10, covered=10,
                                                 repairable=2, repaired=1, cause="safe_note", steps=5,
                                                 knowable=(8, 2, 7, 1, 8, 2))]  # fmt: skip
    b = [record(1, "timeout", steps=50), record(2, "success", claims=4, true=4, seen=8, covered=4, steps=16,
                                                knowable=(8, 0, 4, 0, 8, 0))]  # fmt: skip
    values = run_metrics(LIFELONG_METRICS, [[score_value(a, 2)], [score_value(b, 2)]])
    got = {k.split("/")[-1]: v for k, v in values.items()}
    assert got["episode_success_rate"] == 0.5 and got["episode_death_rate"] == 0.25
    assert got["episode_timeout_rate"] == 0.25 and got["episode_limit_rate"] == 0.0
    assert got["spl"] == pytest.approx((14 / 20 + 14 / 16) / 4) and got["excess_steps"] == (6 + 2) / 2
    assert got["episode_steps"] == (20 + 5 + 50 + 16) / 4
    # knowable: SAFE 16 (11 told, 16 sighted), holes 2 (1 told, 2 sighted)
    assert got["note_balanced"] == (11 / 16 + 1 / 2) / 2 and got["note_attainable"] == 1.0
    assert got["note_recall"] == 12 / 18 and got["hazard_death_rate"] == 0.25
    assert got["note_precision"] == 12 / 14 and got["note_coverage"] == 14 / 18
    assert got["repair_rate"] == 0.5
    assert got["stale_claims"] == 2 / 4 and got["hazard_claims"] == 1 / 4 and got["conflicting_cells"] == 0.0
    assert got["unparsed_lines"] == 1.0 and got["memory_bytes"] == 14 * 14 / 4
    assert got["episode_success_rate_1"] == 0.5 and got["episode_success_rate_2"] == 0.5
    assert got["episode_death_rate_2"] == 0.5 and got["spl_1"] == pytest.approx(14 / 20 / 2)
    assert math.isnan(got["note_precision_1"]) and got["note_precision_2"] == 12 / 14  # no claim at all in episode 1
    assert math.isnan(got["note_balanced_1"]) and got["note_balanced_2"] == (11 / 16 + 1 / 2) / 2  # nothing knowable
    assert math.isnan(got["repair_rate_1"]) and got["hazard_claims_2"] == 0.5


def test_lifetime_tables_pool_by_group_and_leave_empty_ratios_nan():
    import pandas as pd

    from spatialstale_evals.lifetime.tables import lifetime_tables

    a = [record(1, "success"), record(2, "death", claims=10, true=8, hazard=1, seen=10, covered=10,
                                      repairable=2, repaired=1, cause="safe_note",
                                      knowable=(8, 2, 7, 1, 8, 2))]  # fmt: skip
    b = [record(1, "timeout"), record(2, "success", claims=4, true=4, seen=8, covered=4, steps=16,
                                      knowable=(8, 0, 4, 0, 8, 0))]  # fmt: skip
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
    assert tables["spl_by_episode"].loc[("m", "L0")].tolist() == [0.0, 14 / 16]
    balanced = tables["note_balanced_by_episode"].loc[("m", "L1")]
    assert math.isnan(balanced[1]) and balanced[2] == (11 / 16 + 1 / 2) / 2
    assert tables["summary"].loc[("m", "L1"), "note_attainable"] == 1.0
    assert tables["note_balanced_by_episode"].loc[("m", "L0")].tolist()[1] == 4 / 8  # one class: its share alone
    summary = tables["summary"].loc[("m", "L1")]
    assert summary["repair_rate"] == 0.5 and summary["hazard_claims"] == 0.25 and summary["lifetimes"] == 2
    assert math.isnan(tables["summary"].loc[("m", "L0"), "repair_rate"])
    assert tables["deaths_by_cause"].loc[("m", "L1")].to_dict() == {
        "safe_note": 1.0, "no_note": 0.0, "hole_note": 0.0, "conflicting_note": 0.0, "fallback": 0.0,
    }  # fmt: skip


def _brute_force_p(d: list[float]) -> float:
    """Two-sided signed-rank p by enumerating every sign assignment (ties at mid-ranks), written here."""
    import itertools

    nonzero = [x for x in d if x != 0]
    sizes = sorted(abs(x) for x in nonzero)
    rank = {v: sum(i + 1 for i, s in enumerate(sizes) if s == v) / sizes.count(v) for v in set(sizes)}
    ranks = [rank[abs(x)] for x in nonzero]
    total = sum(ranks)
    observed = abs(sum(r for r, x in zip(ranks, nonzero) if x > 0) - total / 2)
    hits = sum(
        abs(sum(r for r, s in zip(ranks, signs) if s) - total / 2) >= observed - 1e-9
        for signs in itertools.product((0, 1), repeat=len(ranks))
    )
    return hits / 2 ** len(ranks)


def test_the_memory_gain_pairs_lifetimes_and_tests_them_exactly():
    """Runs with and without memory on the same lifetimes: per lifetime the
    mean SPL, success and deaths over its episodes, the gain with minus
    without, the exact signed-rank p (every sign assignment enumerated here)
    and Holm's adjustment over the three tests of the cell."""
    import pandas as pd

    from spatialstale_evals.lifetime.tables import lifetime_tables

    outcomes_with = ["success", "success", "death", "success", "success", "success", "success"]
    outcomes_without = ["success", "death", "death", "timeout", "death", "success", "death"]
    steps_with, steps_without = [14, 16, 5, 18, 14, 20, 15], [20, 6, 7, 50, 3, 14, 9]
    rows, expected = [], {"spl": ([], []), "success": ([], []), "deaths": ([], [])}
    for i, (ow, on, sw, sn) in enumerate(zip(outcomes_with, outcomes_without, steps_with, steps_without)):
        for memory, outcome, steps, side in (("notes", ow, sw, 0), ("none", on, sn, 1)):
            recs = [record(1, "success", steps=14), record(2, outcome, steps=steps)]
            terms = ["1", str(Fraction(14, max(14, steps))) if outcome == "success" else "0"]
            config = "" if memory == "notes" else "memory=none"
            rows.append({"model": "m", "config": config, "memory": memory, "regime": "L1", "instance_id": f"L1-{i:03d}",
                         "value": score_value(recs, 2), "spl_terms": terms})  # fmt: skip
            expected["spl"][side].append(sum(Fraction(t) for t in terms) / 2)
            expected["success"][side].append(Fraction(1 + (outcome == "success"), 2))
            expected["deaths"][side].append(Fraction(outcome == "death", 2))
    gain = lifetime_tables(pd.DataFrame(rows))["memory_gain"].set_index("gain")
    assert set(gain["lifetimes"]) == {7} and set(gain["memory"]) == {"notes"} and set(gain["config"]) == {""}
    pvalues = {}
    for name, (with_, without) in expected.items():
        d = [float(a - b) for a, b in zip(with_, without)]
        assert gain.loc[name, "memory_gain"] == pytest.approx(sum(d) / len(d))
        assert gain.loc[name, "with"] == pytest.approx(float(sum(with_) / len(with_)))
        assert gain.loc[name, "method"] == "exact"
        pvalues[name] = _brute_force_p(d)
        assert gain.loc[name, "pvalue"] == pytest.approx(pvalues[name])
    ordered = sorted(pvalues, key=pvalues.get)
    holm, running = {}, 0.0
    for i, name in enumerate(ordered):
        running = max(running, min(1.0, (3 - i) * pvalues[name]))
        holm[name] = running
    assert all(gain.loc[name, "pvalue_holm"] == pytest.approx(holm[name]) for name in holm)
    assert gain.loc["deaths", "memory_gain"] < 0 < gain.loc["spl", "memory_gain"]
