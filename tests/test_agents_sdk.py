"""Bring your own memory system: the OpenAI Agents SDK agent of
``examples/agents_sdk_memory.py`` plays ``lifelong`` through Inspect's
``agent_bridge()`` (``memory="own"``), offline: its model is ``mockllm``
through the bridge, its notes a ``MEMORY.md`` of its own that the harness
reads through the agent's reader. What the harness scored is recomputed here
from the lines the agent wrote and the lake (the lifetime data)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from typing import Any

import pytest

# Found, not imported: the SDK (and the openai client under it) loads where a test of this module runs,
# not in every worker that only collects it.
if importlib.util.find_spec("agents") is None:
    pytest.skip("the [agents] extra (openai-agents) is not installed", allow_module_level=True)

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.log import EvalLog, read_eval_log  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402

from spatialstale_evals.lifelong import lifelong, lifelong_with_agent  # noqa: E402
from spatialstale_evals.world import lifetimes  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

#: What the scripted model has the SDK agent write first: three claims, one line each.
NOTES = "HOLE at (0,1)\nSAFE at (1,0)\nSAFE at (0,0)"
CLAIM = re.compile(r"^(SAFE|HOLE) at \((\d+),(\d+)\)$")


def _outputs() -> Any:
    """The SDK agent's model: write MEMORY.md, move down, move right, read it back, again and again."""
    turn = [("write_memory", {"text": NOTES}), ("move", {"direction": "DOWN"}), ("move", {"direction": "RIGHT"}),
            ("read_memory", {})]  # fmt: skip
    for n in range(400):
        name, args = turn[n % len(turn)]
        out = ModelOutput.for_tool_call("mockllm/model", name, args, tool_call_id=f"c{n}")
        out.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
        yield out


@pytest.fixture(scope="module")
def sdk_log(tmp_path_factory: pytest.TempPathFactory) -> EvalLog:
    from examples.agents_sdk_memory import memory_md, sdk_walker

    task = lifelong_with_agent(sdk_walker(), memory="own", notes=memory_md, regime="L1", episodes=2, max_steps=6)
    model = get_model("mockllm/model", custom_outputs=_outputs())
    (log,) = inspect_eval(task, model=model, limit=2, display="none", log_dir=str(tmp_path_factory.mktemp("sdk")))
    assert log.status == "success", log.error
    return read_eval_log(log.location, resolve_attachments=True)


def _records(sample: Any) -> list[dict[str, Any]]:
    return sample.scores["lifelong_scorer"].metadata["episodes"]


def test_the_sdk_agent_plays_with_its_own_tools_through_the_bridge(sdk_log):
    for sample in sdk_log.samples:
        assert sample.error is None
        calls = [e for e in sample.events if e.event == "model"]
        assert calls and all(sorted(t.name for t in e.tools) == ["move", "read_memory", "write_memory"] for e in calls)
        recs = _records(sample)
        assert [r["episode"] for r in recs] == [1, 2]
        # every call the SDK made is a model event of its episode; no write-back turn under memory=own
        assert sum(r["model_calls"] for r in recs) == len(calls)
        assert all(r["write_back_calls"] == 0 and r["memory_calls"] == 0 for r in recs)
        assert sample.metadata["memory"] == "own"
    assert sdk_log.eval.metadata["agent"] == "custom"


def test_the_harness_reads_and_scores_the_notes_where_the_agent_keeps_them(sdk_log):
    """Episode 1 starts with no notes (each sample its own folder); episode 2
    with the three lines the agent wrote, scored against episode 2's lake."""
    lives = {life.id: life for life in lifetimes.load(None, "L1")}
    claims = [(m[1], (int(m[2]), int(m[3]))) for m in map(CLAIM.match, NOTES.split("\n")) if m]
    assert len(claims) == 3
    for sample in sdk_log.samples:
        first, second = _records(sample)
        assert first["notes"]["claims"] == 0 and first["notes"]["memory_bytes"] == 0
        grid = lives[str(sample.id)].episodes[1].grid
        true = [(kind == "HOLE") == (grid[r][c] == "H") for kind, (r, c) in claims]
        notes = second["notes"]
        assert notes["claims"] == len(claims) and notes["memory_bytes"] == len(NOTES.encode())
        assert notes["claims_true"] == sum(true) and notes["stale_claims"] == len(claims) - sum(true)
        assert notes["hazard_claims"] == sum(k == "SAFE" and grid[r][c] == "H" for k, (r, c) in claims)
        assert first["notes_after"]["memory_bytes"] == len(NOTES.encode())


def test_the_agents_own_memory_needs_its_reader_and_only_it():
    from examples.agents_sdk_memory import memory_md, sdk_walker

    with pytest.raises(ValueError, match="memory=own"):
        lifelong(memory="own")
    with pytest.raises(ValueError, match="notes reader"):
        lifelong_with_agent(sdk_walker(), notes=memory_md)  # memory=notes reads the memory tool's store
