"""Model output the log cannot hold, or no output at all, through whole evals
(issue 37, item 2): a reply with no choices is a failed turn (counted under
``empty_outputs``), tool-call arguments nested 300 deep are bounded before the
harness keeps them (counted under ``unloggable_replaced``), and a lone
surrogate in a memory path is replaced. Each case errored the eval before
(``IndexError: list index out of range``; ``Circular reference detected``
from the store). The lifelong family is tested with its own solver
(``lifetime/solver.py``, the default loop; under ``agent=react`` Inspect's own
``react()`` calls the model, and what it logs is Inspect's: docs/scoring.md)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log
from inspect_ai.model import ChatCompletionChoice, ChatMessageAssistant, ModelOutput, ModelUsage, get_model
from inspect_ai.tool import ToolCall

from spatialstale_evals.detect import detect
from spatialstale_evals.harness.bounded_json import MAX_DEPTH
from spatialstale_evals.harness.loggable import EMPTY_KEY, REPLACED_KEY, TOO_DEEP, loggable_output
from spatialstale_evals.lifelong import lifelong
from spatialstale_evals.navigate import navigate
from spatialstale_evals.probe import probe
from spatialstale_evals.stale import stale

MINI = Path(__file__).parent / "fixtures" / "stale_mini.json"
DEPTH = 300  # over pydantic-core's serialisation depth (about 255)


def nested(depth: int) -> Any:
    value: Any = "UP"
    for _ in range(depth):
        value = {"a": value}
    return value


def usage(out: ModelOutput) -> ModelOutput:
    out.usage = ModelUsage(input_tokens=10, output_tokens=10, total_tokens=20)
    return out


def scripted(case: str) -> Any:
    """A mock model whose every reply is ``case``: no choices, a deep argument, a bad memory path."""

    def reply(messages, tools, tool_choice, config) -> ModelOutput:
        if case == "empty":
            return usage(ModelOutput(model="mockllm/model", choices=[]))
        names = [getattr(t, "name", None) for t in tools]
        calls = None
        if case == "deep" and "move" in names:
            calls = [ToolCall(id="c1", function="move", arguments={"direction": nested(DEPTH)})]
        elif case == "surrogate_path" and "memory" in names:
            args = {"command": "create", "path": "/memories/a\ud800.md", "file_text": "x\ud800"}
            calls = [ToolCall(id="m1", function="memory", arguments=args)]
        message = ChatMessageAssistant(content="no", tool_calls=calls, model="mockllm/model")
        return usage(ModelOutput(model="mockllm/model", choices=[ChatCompletionChoice(message=message)]))

    return get_model("mockllm/model", custom_outputs=reply, memoize=False)


TASKS: dict[str, Callable[[], Task]] = {
    "detect": lambda: detect(regime="L2", batch_size=64),
    "navigate": lambda: navigate(regime="L2", strategy="no_filter", max_steps=3, epochs=1),
    "navigate_tool": lambda: navigate(regime="L2", strategy="no_filter", max_steps=3, epochs=1, memory_access="tool"),
    "probe": lambda: probe(regime="L2", targets_per_kind=1),
    "probe_shared": lambda: probe(regime="L2", targets_per_kind=1, conversation="shared"),
    "stale": lambda: stale(path=str(MINI)),
    "stale_tool": lambda: stale(path=str(MINI), memory_access="tool"),
    "lifelong": lambda: lifelong(regime="L1", episodes=2, max_steps=3),
}


def run(task: str, case: str, tmp_path: Path) -> Any:
    model = scripted(case)
    roles = {"grader": model} if task.startswith("stale") else None
    (log,) = inspect_eval(
        TASKS[task](), model=model, model_roles=roles, limit=1, log_dir=str(tmp_path), display="none",
        log_realtime=False,
    )  # fmt: skip
    assert log.status == "success", log.error
    written = read_eval_log(log.location)
    assert len(written.samples or []) == 1
    return written.samples[0]  # type: ignore[index]


@pytest.mark.parametrize("task", list(TASKS))
def test_a_reply_with_no_choices_is_a_failed_turn_counted(task: str, tmp_path: Path) -> None:
    sample = run(task, "empty", tmp_path)
    assert sample.error is None, sample.error
    assert sample.metadata.get(EMPTY_KEY, 0) >= 1, sample.metadata
    assert sample.scores  # scored: the failed turns read as no answer
    if task.startswith("navigate"):  # every step a fallback, each one logged with its reply
        record = next(iter(sample.scores.values())).metadata
        assert len(record["fallbacks"]) == record["steps"] >= 1
        assert record[EMPTY_KEY] >= record["steps"]


def test_tool_arguments_nested_300_deep_leave_a_finished_sample_with_its_record(tmp_path: Path) -> None:
    """Our record holds the bounded arguments; Inspect's own model event holds the raw ones,
    and Inspect 0.3.285 logs that sample with its content removed (docs/scoring.md)."""
    sample = run("navigate", "deep", tmp_path)
    record = next(iter(sample.scores.values())).metadata  # the score, with the episode record, survives
    assert record["outcome"] in {"success", "death", "timeout"}
    assert len(record["fallbacks"]) == record["steps"]
    problem = record["fallbacks"][0]
    assert problem["tool_calls"][0]["arguments"] == {"direction": nested(MAX_DEPTH - 1) | {}} or TOO_DEEP in str(
        problem["tool_calls"][0]["arguments"]
    )
    assert record[REPLACED_KEY] == record["steps"]  # one value cut per reply
    if sample.error is not None:  # what Inspect does with its own raw event (documented)
        assert "could not be serialized" in sample.error.message


@pytest.mark.parametrize("task", ["navigate_tool", "lifelong"])
def test_a_lone_surrogate_in_a_memory_path_is_replaced_and_counted(task: str, tmp_path: Path) -> None:
    sample = run(task, "surrogate_path", tmp_path)
    assert sample.error is None
    assert sample.metadata[REPLACED_KEY] >= 2
    assert "\ud800" not in str(sample.store)


def test_the_bound_cuts_at_max_depth_and_counts_each_cut() -> None:
    message = ChatMessageAssistant(
        content="", tool_calls=[ToolCall(id="1", function="f", arguments={"x": nested(DEPTH), "y": nested(2)})]
    )
    clean = loggable_output(ModelOutput(model="m", choices=[ChatCompletionChoice(message=message)]))
    clean.model_dump_json()
    arguments = clean.message.tool_calls[0].arguments
    assert arguments["y"] == nested(2)
    depth, value = 0, arguments["x"]
    while isinstance(value, dict):
        depth, value = depth + 1, value["a"]
    assert value == TOO_DEEP and depth == MAX_DEPTH - 1  # the arguments object is level 0
