"""``-M latency_ms=L``: the scripted provider waits L per call, as a remote API
does, and answers and counts exactly as without it."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model

from spatialstale_evals.navigate import navigate

LATENCY_MS = 40


def run(tmp_path: Path, **kwargs: object):  # noqa: ANN201
    task = navigate(regime="L2", strategy="omcd", epochs=1, max_steps=4)
    (log,) = inspect_eval(task, model="spatialstale/observer", limit=2, log_dir=str(tmp_path), display="none", **kwargs)  # type: ignore[arg-type]
    assert log.status == "success", log.error
    return log


def test_every_call_waits_at_least_the_latency(tmp_path: Path) -> None:
    start = time.perf_counter()
    log = run(tmp_path, model_args={"latency_ms": LATENCY_MS}, max_connections=1, max_samples=1)
    wall = time.perf_counter() - start
    calls = [e for s in log.samples for e in s.events if e.event == "model"]
    assert len(calls) >= 2 * (7 + 4)  # two episodes: 7 audit calls and 4 moves each
    assert all(e.working_time is not None and e.working_time >= LATENCY_MS / 1000 for e in calls)
    assert wall >= len(calls) * LATENCY_MS / 1000  # one connection: the waits add up


def test_latency_changes_neither_answers_nor_tokens(tmp_path: Path) -> None:
    plain = run(tmp_path / "plain")
    slow = run(tmp_path / "slow", model_args={"latency_ms": 5})
    assert plain.stats.model_usage == slow.stats.model_usage
    scores = [[s.scores["navigation_scorer"].value for s in log.samples] for log in (plain, slow)]
    assert scores[0] == scores[1]


@pytest.mark.parametrize("value", [-1, "soon", float("nan"), True])
def test_a_bad_latency_is_an_error(value: object) -> None:
    with pytest.raises(ValueError, match="latency_ms must be a number of milliseconds >= 0"):
        get_model("spatialstale/observer", latency_ms=value)
