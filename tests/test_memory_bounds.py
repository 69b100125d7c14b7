"""Memory bounded (issue 37, item 6): ``max_memory_calls`` has an upper bound,
refused before any model call; writes past the per-sample quota are refused
with a tool error the model sees, counted. Before, ``max_memory_calls`` took
any value and the store grew without limit (10,000 creates in one turn: 190 s,
694 MB). The timings are a benchmark (``benchmarks/memory_bounds.py``), not a test."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessageAssistant,
    ChatMessageTool,
    ModelOutput,
    ModelUsage,
    execute_tools,
    get_model,
)
from inspect_ai.tool import ToolCall, memory

from spatialstale_evals.harness.memory_quota import (
    MAX_MEMORY_CALLS,
    QUOTA_BYTES,
    QUOTA_KEY,
    MemoryQuota,
    bounded_memory,
    growth,
    store_size,
)
from spatialstale_evals.harness.memory_tool import primed, stored_files, tool_info
from spatialstale_evals.lifelong import lifelong
from spatialstale_evals.navigate import navigate
from spatialstale_evals.stale import stale

MINI = Path(__file__).parent / "fixtures" / "stale_mini.json"
MIB = 1024 * 1024


@pytest.mark.parametrize(
    "build",
    [
        lambda n: navigate(memory_access="tool", max_memory_calls=n),
        lambda n: stale(path=str(MINI), memory_access="tool", max_memory_calls=n),
        lambda n: lifelong(max_memory_calls=n),
    ],
    ids=["navigate", "stale", "lifelong"],
)
def test_max_memory_calls_past_the_bound_is_refused_before_any_model_call(build) -> None:
    build(MAX_MEMORY_CALLS)  # the bound itself is allowed
    with pytest.raises(ValueError, match=f"max_memory_calls must be at most {MAX_MEMORY_CALLS:,}; got 1,001"):
        build(1_001)


def test_the_bounded_tool_is_the_memory_tool_as_the_model_sees_it() -> None:
    assert tool_info(bounded_memory()) == tool_info(memory())
    assert tool_info(bounded_memory(readonly=True)) == tool_info(memory(readonly=True))


def calls(n: int, text: str, start: int = 0) -> list[ToolCall]:
    return [
        ToolCall(
            id=f"c{i}",
            function="memory",
            arguments={"command": "create", "path": f"/memories/n{i}.md", "file_text": text},
        )  # fmt: skip
        for i in range(start, start + n)
    ]


def run_calls(tool: Any, batch: list[ToolCall]) -> list[ChatMessageTool]:
    result = asyncio.run(execute_tools([ChatMessageAssistant(content="", tool_calls=batch)], [tool]))
    return [m for m in result.messages if isinstance(m, ChatMessageTool)]


def test_writes_past_the_file_quota_get_a_tool_error_and_are_not_made() -> None:
    tool = bounded_memory(quota=MemoryQuota(files=3, bytes=10_000))
    with primed({"/memories/seed.md": "x" * 50_000}):  # what the task seeded does not count
        answers = run_calls(tool, calls(5, "SAFE at (1,2)"))
        files = stored_files()
    assert [a.error is None for a in answers] == [True, True, True, False, False]
    assert all("Not written" in a.error.message for a in answers[3:])  # type: ignore[union-attr]
    assert sorted(files) == ["/memories/n0.md", "/memories/n1.md", "/memories/n2.md", "/memories/seed.md"]


def test_writes_past_the_byte_quota_get_a_tool_error_and_an_edit_that_shrinks_is_made() -> None:
    tool = bounded_memory(quota=MemoryQuota(files=100, bytes=1_000))
    with primed({}):
        answers = run_calls(tool, calls(3, "y" * 400))
        assert [a.error is None for a in answers] == [True, True, False]
        shrink = ToolCall(id="s", function="memory", arguments={"command": "str_replace", "path": "/memories/n0.md",
                                                                 "old_str": "y" * 400, "new_str": "y"})  # fmt: skip
        more = {"command": "insert", "path": "/memories/n0.md", "insert_line": 0, "insert_text": "z" * 500}
        insert = ToolCall(id="i", function="memory", arguments=more)
        shrunk, grown = run_calls(tool, [shrink, insert])
        assert shrunk.error is None and grown.error is None  # 401 + 501 + 1 <= 1,000 again
        assert store_size(stored_files()) == (2, 400 + 1 + 501)


def test_growth_never_undercounts() -> None:
    files = {"/memories/a.md": "abc"}
    assert growth(files, {"command": "create", "path": "/memories/a.md", "file_text": "abcd"}) == (0, 1)
    assert growth(files, {"command": "create", "path": "/memories/b/../c.md", "file_text": "é"}) == (1, 2)
    assert growth(files, {"command": "insert", "path": "/memories/a.md", "insert_text": "x"}) == (0, 2)
    assert growth(files, {"command": "view", "path": "/memories"}) == (0, 0)


def writer(per_reply: int, size: int) -> Any:
    """A model that answers every STALE probe with ``per_reply`` creates of ``size``-byte files, then text."""
    made = [0]

    def reply(messages, tools, tool_choice, config) -> ModelOutput:
        if tools and tool_choice != "none" and not isinstance(messages[-1], ChatMessageTool):
            batch = calls(per_reply, "n" * size, made[0])
            made[0] += per_reply
            message = ChatMessageAssistant(content="", tool_calls=batch, model="mockllm/model")
        else:
            message = ChatMessageAssistant(content='{"dim1_eval": {"pass": true}}', model="mockllm/model")
        out = ModelOutput(model="mockllm/model", choices=[ChatCompletionChoice(message=message)])
        out.usage = ModelUsage(input_tokens=10, output_tokens=10, total_tokens=20)
        return out

    return get_model("mockllm/model", custom_outputs=reply, memoize=False)


def test_an_agent_writing_past_the_quota_in_a_full_eval_is_refused_counted_and_the_sample_finishes(
    tmp_path: Path,
) -> None:
    model = writer(per_reply=6, size=MIB)  # 6 MiB a probe: past the default 4 MiB quota
    (log,) = inspect_eval(
        stale(path=str(MINI), memory_access="tool", max_memory_calls=6),
        model=model, model_roles={"grader": model}, limit=1, log_dir=str(tmp_path), display="none",
    )  # fmt: skip
    assert log.status == "success", log.error
    (sample,) = read_eval_log(log.location).samples or []
    assert sample.error is None
    refused = [m for m in sample.messages if isinstance(m, ChatMessageTool) and m.error is not None]
    assert refused and all("Not written" in m.error.message for m in refused)  # type: ignore[union-attr]
    assert sample.metadata[QUOTA_KEY] == len(refused)
    made = sum(1 for m in sample.messages if isinstance(m, ChatMessageTool) and m.error is None)
    assert made * MIB <= QUOTA_BYTES  # never past the quota
    assert made == QUOTA_BYTES // MIB
