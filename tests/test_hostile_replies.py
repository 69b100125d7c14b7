"""Hostile model replies through whole evals, per task and conversation mode:
a JSON reply nested 100,000 deep and a reply holding a lone surrogate
(``\\udcff``, carried into the next turn where the mode keeps the
conversation) must leave every sample logged without an error, the log
readable from disk, and the surrogate counted in the sample's metadata.

Before the bounded parser and the loggable boundary, the nested reply errored
every sample (``RecursionError``) and the surrogate made Inspect's log writer
fail the eval."""

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
from spatialstale_evals.harness.loggable import REPLACED_KEY
from spatialstale_evals.navigate import navigate
from spatialstale_evals.probe import probe
from spatialstale_evals.stale import stale

MINI = Path(__file__).parent / "fixtures" / "stale_mini.json"
DEEP = '{"memory_id":"mem_001","is_stale":' + "[" * 100_000
SURROGATE = 'I am not sure \udcff {"memory_id": "mem_001", "is_stale": tru\udcffe}'
SAMPLES = 2


def hostile(text: str, tool_arguments: bool = False) -> Any:
    """A mock model that always replies ``text`` (with a ``move`` call holding it too, when asked)."""

    def reply(messages, tools, tool_choice, config) -> ModelOutput:
        calls = (
            [ToolCall(id="c1", function="move", arguments={"direction": "DOWN" + text[-2:]})]
            if tool_arguments and tools
            else None
        )
        message = ChatMessageAssistant(content=text, tool_calls=calls, model="mockllm/model")
        out = ModelOutput(model="mockllm/model", choices=[ChatCompletionChoice(message=message, stop_reason="stop")])
        out.usage = ModelUsage(input_tokens=10, output_tokens=10, total_tokens=20)
        return out

    return get_model("mockllm/model", custom_outputs=reply, memoize=False)


#: Every task variant that reads model text, and how it is built (the stale task needs its grader).
VARIANTS: dict[str, Callable[[], Task]] = {
    "detect": lambda: detect(regime="L2", batch_size=64),
    "navigate_omcd": lambda: navigate(regime="L2", strategy="omcd", max_steps=3, epochs=1),
    "navigate_history": lambda: navigate(regime="L2", strategy="no_filter", history=2, max_steps=3, epochs=1),
    "probe_independent": lambda: probe(regime="L2", targets_per_kind=1),
    "probe_shared": lambda: probe(regime="L2", targets_per_kind=1, conversation="shared"),
    "stale_independent": lambda: stale(path=str(MINI)),
    "stale_shared": lambda: stale(path=str(MINI), conversation="shared"),
}


def run(variant: str, text: str, tmp_path: Path) -> Any:
    model = hostile(text, tool_arguments=variant.startswith("navigate"))
    roles = {"grader": hostile(text)} if variant.startswith("stale") else None
    (log,) = inspect_eval(
        VARIANTS[variant](),
        model=model,
        model_roles=roles,
        limit=SAMPLES,
        log_dir=str(tmp_path),
        display="none",
        log_realtime=False,
    )
    assert log.status == "success", log.error
    written = read_eval_log(log.location)  # the log on disk, as a reader gets it
    assert written.status == "success"
    assert len(written.samples or []) == SAMPLES
    assert all(s.error is None for s in written.samples or [])
    return written


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_a_reply_nested_100000_deep_errors_no_sample(variant: str, tmp_path: Path) -> None:
    run(variant, DEEP, tmp_path)


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_a_lone_surrogate_in_a_reply_is_replaced_counted_and_logged(variant: str, tmp_path: Path) -> None:
    log = run(variant, SURROGATE, tmp_path)
    for sample in log.samples or []:
        # every reply held two lone surrogates: at least one reply per sample was made
        assert sample.metadata.get(REPLACED_KEY, 0) >= 2, sample.metadata.get(REPLACED_KEY)
        assert sample.metadata[REPLACED_KEY] % 2 == 0
