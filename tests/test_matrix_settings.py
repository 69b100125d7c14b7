"""The run matrix's own settings for speed: Inspect's
realtime sample buffer off unless asked for, and a tuned garbage collector
during the run; neither changes what the logs hold."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log

from spatialstale_evals.navigate import navigate
from spatialstale_evals.runs import matrix
from spatialstale_evals.runs.matrix import GC_THRESHOLDS, MatrixSpec, run_matrix

SPEC = dict(
    models=["spatialstale/observer"], regimes=["L3"], axes={"strategies": ["omcd"], "modalities": ["text"]}, seeds=2
)


def sample_content(log_path: str) -> dict[tuple[str, int], Any]:
    """What each sample holds, without ids and times: the event types in
    order, the messages, the model calls' inputs and outputs, store, scores."""
    out = {}
    for s in read_eval_log(log_path).samples or []:
        models = [e for e in s.events if e.event == "model"]
        out[(str(s.id), s.epoch)] = {
            "events": [e.event for e in s.events],
            "messages": [m.model_dump(exclude={"id"}) for m in s.messages],
            "inputs": [[m.model_dump(exclude={"id"}) for m in e.input] for e in models],
            "outputs": [e.output.message.model_dump(exclude={"id"}) for e in models],
            "store": s.store,
            "scores": {k: v.model_dump() for k, v in (s.scores or {}).items()},
        }
    return out


def test_the_matrix_logs_what_a_realtime_run_logs(tmp_path: Path) -> None:
    """Every step of every sample is in the matrix's log as in a run with the
    realtime buffer on (Inspect's default), and the log records the setting."""
    ok, logs = run_matrix(MatrixSpec(**SPEC, epochs=1), tmp_path / "matrix", display="none")
    assert ok
    by_task = {log.eval.task.rsplit("/", 1)[-1]: log for log in logs}
    nav = by_task["navigate"]
    assert nav.eval.config.log_realtime is False
    (plain,) = inspect_eval(
        navigate(regime="L3", strategy="omcd", epochs=1),
        model="spatialstale/observer",
        limit=2,
        log_dir=str(tmp_path / "plain"),
        display="none",
        log_realtime=True,
    )
    ours, theirs = sample_content(nav.location), sample_content(plain.location)
    assert ours == theirs and len(ours) == 2
    for content in ours.values():
        moves = [o for o in content["outputs"] if o["tool_calls"]]
        assert moves and content["events"].count("model") == len(content["inputs"])


def test_the_settings_are_defaults_an_option_overrides(tmp_path: Path, monkeypatch) -> None:
    """``log_realtime`` is False unless given; the collector runs with the
    matrix's thresholds and a frozen heap during ``eval_set`` only."""
    seen: list[dict[str, Any]] = []

    def fake_eval_set(tasks: list, **kwargs: Any) -> tuple[bool, list]:
        seen.append({**kwargs, "_gc": gc.get_threshold(), "_frozen": gc.get_freeze_count()})
        return True, []

    monkeypatch.setattr(matrix, "eval_set", fake_eval_set)
    before = gc.get_threshold()
    spec = MatrixSpec(**SPEC)
    run_matrix(spec, tmp_path)
    run_matrix(spec, tmp_path, log_realtime=True, max_tasks=3)
    assert seen[0]["log_realtime"] is False and seen[1]["log_realtime"] is True and seen[1]["max_tasks"] == 3
    assert all(s["_gc"] == GC_THRESHOLDS and s["_frozen"] > 0 for s in seen)
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
