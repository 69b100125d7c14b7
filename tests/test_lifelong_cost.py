"""The lifelong cost model (``lifetime/cost.py``) against the lakes and
against what a scripted run counts: the reference agent's calls exactly
(the estimate's walk is the one ``diligent`` walks, and its memory calls are
``diligent``'s), its tokens within 10 %."""

from __future__ import annotations

import pytest
from inspect_ai import eval as inspect_eval

import spatialstale_evals._registry  # noqa: F401 - registers spatialstale/<agent>
from spatialstale_evals.lifelong import lifelong
from spatialstale_evals.lifetime.cost import estimate_lifetime_cost
from spatialstale_evals.world import lifetimes
from spatialstale_evals.world.grid import shortest_path


def test_the_cost_estimate_counts_calls_from_the_lakes():
    life = lifetimes.load(None, "L1")[0]
    est = estimate_lifetime_cost(life, {"episodes": 3})
    # low: per episode at least one move per step of the shortest path, a view, and a write-back of a write and a reply
    moves = sum(len(shortest_path(w.grid, (0, 0), (7, 7))) - 1 for w in life.episodes[:3])
    assert est["low"]["calls"] >= moves + 3 * 3
    assert est["high"]["calls"] == 3 * (50 * (1 + 5) + 1 + 5)
    assert est["low"]["input_tokens"] < est["high"]["input_tokens"]
    # history=0 forgets the notes' view every step: a view call before each move, and more steps
    kept = estimate_lifetime_cost(life, {"episodes": 3, "history": 0})
    assert kept["low"]["calls"] >= 2 * (est["low"]["calls"] - 3 * 3) + 3


@pytest.mark.parametrize(
    "args",
    [
        {"regime": "L2", "episodes": 2},
        {"regime": "L1", "episodes": 2, "history": 1},
        {"regime": "L1", "episodes": 2, "memory": "transcript"},
        {"regime": "L1", "episodes": 2, "memory": "transcript", "compaction": "trim", "compaction_threshold": 3000},
    ],
)
def test_the_estimate_is_within_ten_percent_of_a_scripted_lifetime(tmp_path, args):
    model = "spatialstale/diligent"
    (log,) = inspect_eval(lifelong(**args), model=model, limit=1, display="none", log_dir=str(tmp_path))
    assert log.status == "success"
    lives = {life.id: life for life in lifetimes.load(None, args["regime"])}
    for sample in log.samples:
        records = sample.scores["lifelong_scorer"].metadata["episodes"]
        counted = sample.model_usage[model]
        est = estimate_lifetime_cost(lives[str(sample.id)], args)["low"]
        assert est["calls"] == sum(r["model_calls"] for r in records)
        assert abs((est["input_tokens"] + est["output_tokens"]) / counted.total_tokens - 1) <= 0.10
        assert abs(est["output_tokens"] / counted.output_tokens - 1) <= 0.10
