"""The lifelong scores mean what their names say: ``note_balanced`` no
trivial writer can game, its attainable bound, SPL and excess steps.

Trivial writers play through ``lifelong_with_agent`` (Inspect agents written
here: they walk the cheapest route on what they see, as the scripted agents
do, and differ only in their notes): a constant SAFE writer and a constant
HOLE writer (a claim for every cell of the lake), the view-only writer (only
the last view, everything else dropped) and a writer of nothing. With the
scripted ``diligent`` and ``write_once`` on the first 4 lifetimes of L1 and
L2 (every property below holds there as it did on the first 10: the orderings
are strict and the bound inside (0, 1) already; ``benchmarks/lifelong_scores.py
--writer-lifetimes 10`` gives the figures at 10). Every expectation is computed here from the lifetime data and the
recorded trajectories (``tests/_lifetime_truth.py``: what the agent saw, the
knowable cells by class, a BFS of its own), never from the harness's scores.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from _lifetime_truth import balanced, bfs_steps, classes, knowable_by_episode, spl_and_excess, told_counts
from _lifetime_writers import writer
from inspect_ai import eval as inspect_eval
from inspect_ai import task_with
from inspect_ai.log import EvalLog

import spatialstale_evals._registry  # noqa: F401 - registers spatialstale/<agent>
from spatialstale_evals.lifelong import lifelong, lifelong_with_agent
from spatialstale_evals.world import lifetimes

REGIMES, LIFETIMES, EPISODES, RADIUS = ("L1", "L2"), 4, 3, 1
WRITERS = ("constant_safe", "constant_hole", "view_only", "nothing")
SCRIPTED = ("diligent", "write_once")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], EvalLog]:
    """Every run, in two evals (one per model kind); each log is matched to its key by its task name,
    model and regime, never by its place in the list."""
    where = str(tmp_path_factory.mktemp("runs"))
    # the write-back turn is the task model's: amnesiac writes nothing
    writers = [
        task_with(lifelong_with_agent(writer(kind), regime=regime, episodes=EPISODES), name=f"writer_{kind}")
        for regime in REGIMES
        for kind in WRITERS
    ]
    logs = inspect_eval(writers, model="spatialstale/amnesiac", limit=LIFETIMES, display="none", log_dir=where,
                        max_tasks=len(writers))  # fmt: skip
    logs += inspect_eval(
        [lifelong(regime=regime, episodes=EPISODES) for regime in REGIMES],
        model=[f"spatialstale/{agent}" for agent in SCRIPTED],
        limit=LIFETIMES, display="none", log_dir=where, max_tasks=len(REGIMES) * len(SCRIPTED),
    )  # fmt: skip
    out: dict[tuple[str, str], EvalLog] = {}
    for log in logs:
        kind = log.eval.task.removeprefix("writer_") if log.eval.task.startswith("writer_") else None
        key = (kind or log.eval.model.removeprefix("spatialstale/"), log.eval.metadata["regime"])
        assert key not in out and log.eval.metadata["episodes"] == EPISODES, key
        out[key] = log
    assert set(out) == {(key, regime) for key in (*WRITERS, *SCRIPTED) for regime in REGIMES}
    for key, log in out.items():
        assert log.status == "success" and all(s.error is None for s in log.samples), key
        assert len(log.samples) == LIFETIMES, key
    return out


def _records(sample: Any) -> list[dict[str, Any]]:
    return sample.scores["lifelong_scorer"].metadata["episodes"]


def _metric(log: EvalLog, name: str) -> float:
    return {m.name: m.value for s in log.results.scores for m in s.metrics.values()}[name]


def _lives(regime: str) -> dict[str, lifetimes.Lifetime]:
    return {life.id: life for life in lifetimes.load(None, regime)}


def _episodes(log: EvalLog, regime: str):
    """(lifetime, world, record, the knowable cells with their last sightings) of every episode."""
    by_id = _lives(regime)
    for sample in log.samples:
        life, recs = by_id[str(sample.id)], _records(sample)
        for world, rec, knowable in zip(life.episodes, recs, knowable_by_episode(life, recs, RADIUS)):
            yield life, world, rec, knowable


@pytest.mark.parametrize("regime", REGIMES)
@pytest.mark.parametrize("kind", ["constant_safe", "constant_hole"])
def test_a_constant_writer_scores_exactly_one_half_where_both_classes_are_knowable(runs, kind, regime):
    both = 0
    for _, world, rec, knowable in _episodes(runs[(kind, regime)], regime):
        by_class = classes(world.grid, knowable)
        assert (rec["knowable"]["knowable_safe"], rec["knowable"]["knowable_hole"]) == tuple(
            len(by_class[c]) for c in ("SAFE", "HOLE")
        )
        if by_class["SAFE"] and by_class["HOLE"]:
            both += 1
            assert rec["note_balanced"] == 0.5
        elif not knowable:  # episode 1: nothing is knowable yet
            assert rec["note_balanced"] is None
    assert both >= LIFETIMES * (EPISODES - 2)  # the check ran at most episode starts
    assert _metric(runs[(kind, regime)], "spatialstale_evals/note_balanced") == 0.5
    assert _metric(runs[(kind, regime)], "spatialstale_evals/note_precision") not in (0.5, 1.0)  # precision is fooled


@pytest.mark.parametrize("regime", REGIMES)
def test_trivial_writers_score_below_write_once_below_diligent(runs, regime):
    score = {key: _metric(runs[(key, regime)], "spatialstale_evals/note_balanced") for key in (*WRITERS, *SCRIPTED)}
    assert score["nothing"] == 0.0
    assert max(score["view_only"], score["nothing"]) < score["write_once"] < score["diligent"], score
    # the view-only writer is not fooled by precision alone: its claims are nearly all true
    assert _metric(runs[("view_only", regime)], "spatialstale_evals/note_precision") > score["view_only"]


@pytest.mark.parametrize("regime", REGIMES)
def test_diligent_equals_its_attainable_bound(runs, regime):
    counts = []
    for _, world, rec, knowable in _episodes(runs[("diligent", regime)], regime):
        assert rec["note_balanced"] == rec["note_attainable"]
        last = {cell: {"HOLE" if kind == "H" else "SAFE"} for cell, kind in knowable.items()}
        counts.append(told_counts(world.grid, knowable, last))
    bound = balanced(counts)
    assert 0 < bound < 1  # the lakes changed under what it saw
    log = runs[("diligent", regime)]
    assert _metric(log, "spatialstale_evals/note_balanced") == pytest.approx(bound)
    assert _metric(log, "spatialstale_evals/note_attainable") == pytest.approx(bound)
    assert _metric(runs[("write_once", regime)], "spatialstale_evals/note_attainable") > _metric(
        runs[("write_once", regime)], "spatialstale_evals/note_balanced"
    )


@pytest.mark.parametrize("regime", REGIMES)
def test_spl_and_excess_steps_are_recomputed_from_the_trajectories(runs, regime):
    for key in (*SCRIPTED, "view_only"):
        spl, excess, successes, by_index = [], 0, 0, {}
        for _, world, rec, _ in _episodes(runs[(key, regime)], regime):
            value, extra = spl_and_excess(world, rec)
            assert rec["shortest"] == bfs_steps(world.grid)
            assert rec["spl"] == pytest.approx(value) and rec["excess_steps"] == extra
            spl.append(value)
            by_index.setdefault(rec["episode"], []).append(value)
            excess += extra or 0
            successes += extra is not None
        log = runs[(key, regime)]
        assert _metric(log, "spatialstale_evals/spl") == pytest.approx(sum(spl) / len(spl))
        assert _metric(log, "spatialstale_evals/excess_steps") == pytest.approx(excess / successes)
        for k, values in by_index.items():
            assert _metric(log, f"spl_{k}") == pytest.approx(sum(values) / len(values))
        assert 0 < sum(spl) / len(spl) < 1 and not math.isnan(excess)
