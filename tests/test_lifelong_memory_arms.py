"""``lifelong -T memory=...``: what carries over between episodes.

``memory=none`` must be the same lifetimes with no memory at all: no
``memory`` tool in any request, no word of memory or notes in any message the
model is sent, no write-back turn. Checked on the requests themselves (the
model events of the log), for the default loop and for ``react``, and with a
model that calls the memory tool anyway.
"""

from __future__ import annotations

from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, get_model

import spatialstale_evals._registry  # noqa: F401 - registers spatialstale/<agent>
from spatialstale_evals.lifelong import lifelong
from spatialstale_evals.lifetime.arms import MEMORY_ARMS

#: Words no request may hold under ``memory=none`` (any case).
MEMORY_WORDS = ("memory", "memories", "note", "write-back", "notes")


def run(model: Any, tmp_path: Any, **args: Any) -> EvalLog:
    task = lifelong(regime="L1", episodes=2, **args)
    (log,) = inspect_eval(task, model=model, limit=1, display="none", log_dir=str(tmp_path))
    assert log.status == "success", log.error
    assert all(s.error is None for s in log.samples)
    return read_eval_log(log.location, resolve_attachments=True)


def requests(log: EvalLog) -> list[Any]:
    return [e for s in log.samples for e in s.events if e.event == "model"]


def records(log: EvalLog) -> list[dict[str, Any]]:
    return log.samples[0].scores["lifelong_scorer"].metadata["episodes"]


@pytest.mark.parametrize("agent", ["default", "react"])
def test_memory_none_offers_no_memory_tool_and_mentions_no_notes(tmp_path, agent):
    log = run("spatialstale/diligent", tmp_path, memory="none", agent=agent)
    calls = requests(log)
    assert calls, "the run made model calls"
    for event in calls:
        assert [t.name for t in event.tools] == ["move"]
        for message in event.input:
            text = message.text.lower()
            assert not any(word in text for word in MEMORY_WORDS), (agent, text[:200])
    recs = records(log)
    # no write-back turn: one call per step under the default loop (react's last call ends with the last move)
    assert len(calls) == sum(r["steps"] for r in recs)
    assert all(r["memory_calls"] == r["write_back_calls"] == 0 for r in recs)
    assert all(r["notes"]["claims"] == 0 and r["notes"]["memory_bytes"] == 0 for r in recs)
    assert log.samples[0].metadata["memory"] == "none"


def test_memory_notes_is_the_default_and_offers_the_tool(tmp_path):
    log = run("spatialstale/diligent", tmp_path)
    assert log.eval.task_args.get("memory", "notes") == "notes" and log.samples[0].metadata["memory"] == "notes"
    assert all("memory" in [t.name for t in e.tools] for e in requests(log))
    assert "/memories" in requests(log)[0].input[0].text  # the system prompt tells of the store


def test_without_memory_a_note_keeper_plays_as_the_amnesiac(tmp_path):
    """The same lifetime: diligent without the memory tool walks exactly the
    moves amnesiac walks with it (it sees the same views and keeps nothing)."""
    without = records(run("spatialstale/diligent", tmp_path / "none", memory="none"))
    amnesiac = records(run("spatialstale/amnesiac", tmp_path / "notes"))
    assert [r["actions"] for r in without] == [r["actions"] for r in amnesiac]


def _memory_caller() -> Any:
    """A model that calls the memory tool it was not offered, then moves right."""
    n = 0
    while True:
        n += 1
        if n % 2:
            create = {"command": "create", "path": "/memories/x.md", "file_text": "SAFE at (0,1)"}
            out = ModelOutput.for_tool_call("mockllm/model", "memory", create, tool_call_id=f"m{n}")
        else:
            out = ModelOutput.for_tool_call("mockllm/model", "move", {"direction": "RIGHT"}, tool_call_id=f"v{n}")
        out.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
        yield out


def test_a_memory_call_without_the_tool_is_a_fallback_step_and_writes_nothing(tmp_path):
    log = run(get_model("mockllm/model", custom_outputs=_memory_caller()), tmp_path, memory="none", max_steps=6)
    recs = records(log)
    assert sum(len(r["fallbacks"]) for r in recs) > 0
    assert all(r["notes_after"]["memory_bytes"] == 0 and r["memory_calls"] == 0 for r in recs)


def test_memory_values_come_from_the_registry_and_bad_ones_fail_before_any_call():
    assert tuple(MEMORY_ARMS)[:2] == ("notes", "none")  # the default first, the baseline second
    with pytest.raises(ValueError, match="memory"):
        lifelong(memory="transcript")
    with pytest.raises(ValueError, match="initial_memory=paper"):
        lifelong(memory="none", initial_memory="paper")
