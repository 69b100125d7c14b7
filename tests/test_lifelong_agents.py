"""Every per-episode agent counted the same, and none able to crash a sample.

The calls and tokens of each episode record are checked against the model
events of the log itself (between the info events that open each episode),
for the default loop, ``agent=react`` and a custom agent; the three play the
same moves and must leave the same records. Agents that misbehave (return at
once, return something else than their state, an output with no choice, keep
moving after the end, keep calling the model after the end) must give no
sample error, and be stopped.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.agent import AgentState, react
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, execute_tools, get_model
from inspect_ai.util import tool_state_scope

import spatialstale_evals._registry  # noqa: F401 - registers spatialstale/<agent>
from spatialstale_evals.lifelong import lifelong, lifelong_with_agent, until_episode_over

EPISODE_OPENS = "notes at the start of episode"


def finish(task: Any, model: Any, tmp_path: Any) -> EvalLog:
    (log,) = inspect_eval(task, model=model, limit=1, display="none", log_dir=str(tmp_path))
    assert log.status == "success", log.error
    assert all(s.error is None for s in log.samples), [s.error for s in log.samples]
    return read_eval_log(log.location, resolve_attachments=True)


def records(log: EvalLog) -> list[dict[str, Any]]:
    return log.samples[0].scores["lifelong_scorer"].metadata["episodes"]


def transcript_counts(log: EvalLog) -> list[tuple[int, int]]:
    """(model calls, tokens) per episode, read from the log's events: the model
    events from one episode's opening info event to the next's."""
    per: list[list[int]] = []
    for event in log.samples[0].events:
        if event.event == "info" and str(event.source or "").startswith(EPISODE_OPENS):
            per.append([0, 0])
        elif event.event == "model" and per:
            per[-1][0] += 1
            per[-1][1] += event.output.usage.total_tokens if event.output.usage else 0
    return [(calls, tokens) for calls, tokens in per]


def loop_agent(tools: list[Any]) -> Any:
    """A custom agent written by hand: generate, run the tools, until a reply calls none."""

    async def agent(state: AgentState) -> AgentState:
        model = get_model()
        while True:
            state.output = await model.generate(state.messages, tools=tools)
            state.messages.append(state.output.message)
            if not state.output.message.tool_calls:
                return state
            messages, _ = await execute_tools(state.messages, tools)
            state.messages.extend(messages)

    return agent


@pytest.fixture(scope="module")
def three_players(tmp_path_factory) -> dict[str, EvalLog]:
    out = tmp_path_factory.mktemp("players")
    args = {"regime": "L2", "episodes": 2}
    return {
        "default": finish(lifelong(**args), "spatialstale/diligent", out / "default"),
        "react": finish(lifelong(agent="react", **args), "spatialstale/diligent", out / "react"),
        "custom": finish(lifelong_with_agent(loop_agent, **args), "spatialstale/diligent", out / "custom"),
    }


@pytest.mark.parametrize("player", ["default", "react", "custom"])
def test_calls_and_tokens_are_the_model_events_of_each_episode(three_players, player):
    log = three_players[player]
    recs = records(log)
    assert [(r["model_calls"], r["tokens"]) for r in recs] == transcript_counts(log)
    assert all(r["model_calls"] > r["steps"] for r in recs)  # the moves, the notes' view, the write-back


def test_the_three_players_leave_the_same_records(three_players):
    """Same moves, same notes, same calls; only the tokens differ (react and
    the custom agent get no step prompts: a move's answer carries the view)."""
    same = {
        name: [{k: v for k, v in r.items() if k != "tokens"} for r in records(log)]
        for name, log in three_players.items()
    }
    assert same["default"] == same["react"] == same["custom"]


def _scripted(replies: list[tuple[str, dict[str, Any]] | str]) -> Iterator[ModelOutput]:
    """mockllm outputs: the replies in turn, then the last one forever."""
    n = 0
    while True:
        reply = replies[min(n, len(replies) - 1)]
        if isinstance(reply, str):
            out = ModelOutput.from_content("mockllm/model", reply)
        else:
            out = ModelOutput.for_tool_call("mockllm/model", reply[0], reply[1], tool_call_id=f"c{n}")
        out.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
        n += 1
        yield out


def _returns_at_once(tools: list[Any]) -> Any:
    async def agent(state: AgentState) -> AgentState:
        return state

    return agent


def _returns_junk(tools: list[Any]) -> Any:
    async def agent(state: AgentState) -> Any:
        await tools[0](direction="RIGHT")
        return "done"  # not an AgentState

    return agent


def _no_choices(tools: list[Any]) -> Any:
    async def agent(state: AgentState) -> AgentState:
        state.output = ModelOutput(model="x", choices=[])
        return state

    return agent


def _moves_past_the_end(tools: list[Any]) -> Any:
    async def agent(state: AgentState) -> AgentState:
        for _ in range(200):  # far past any episode's end: the harness stops it
            await tools[0](direction="RIGHT")
            await tools[0](direction="DOWN")
        return state

    return agent


@pytest.mark.parametrize("make", [_returns_at_once, _returns_junk, _no_choices, _moves_past_the_end])
def test_a_misbehaving_agent_gets_the_fallback_and_never_a_sample_error(tmp_path, make):
    log = finish(lifelong_with_agent(make, regime="L0", episodes=2), "spatialstale/amnesiac", tmp_path)
    recs = records(log)
    assert len(recs) == 2 and all(r["outcome"] in ("success", "death", "timeout") for r in recs)
    if make is not _moves_past_the_end:
        assert all(len(r["fallbacks"]) >= 1 for r in recs)
    assert [(r["model_calls"], r["tokens"]) for r in recs] == transcript_counts(log)


def test_the_docs_react_without_submit_is_stopped_at_the_end(tmp_path):
    """The docs' react(..., submit=False) with a model that never stops
    moving: no model call of the agent's after the episode is over (the
    write-back turn's one call is the task's)."""

    def docs_agent(tools: list[Any]) -> Any:
        return react(prompt="Reach the goal.", tools=tools, submit=False)

    model = get_model("mockllm/model", custom_outputs=_scripted([("move", {"direction": "RIGHT"})]))
    log = finish(lifelong_with_agent(docs_agent, regime="L0", episodes=2, max_steps=6), model, tmp_path)
    for rec in records(log):
        assert rec["model_calls"] == rec["steps"] + 1  # one call per step, one in the write-back


def test_the_idiom_stops_react_itself(tmp_path):
    def careful(tools: list[Any]) -> Any:
        return react(prompt="Reach the goal.", tools=tools, submit=False, on_continue=until_episode_over)

    model = get_model("mockllm/model", custom_outputs=_scripted([("move", {"direction": "DOWN"})]))
    log = finish(lifelong_with_agent(careful, regime="L0", episodes=1, max_steps=5), model, tmp_path)
    (rec,) = records(log)
    assert rec["model_calls"] == rec["steps"] + 1
    assert not any(e.event == "sample_limit" for e in log.samples[0].events)  # it stopped itself


def test_empty_model_output_in_the_default_loop_is_a_fallback_step(tmp_path):
    def empty() -> Iterator[ModelOutput]:
        while True:
            out = ModelOutput(model="mockllm/model", choices=[])
            out.usage = ModelUsage(input_tokens=1, output_tokens=0, total_tokens=1)
            yield out

    model = get_model("mockllm/model", custom_outputs=empty())
    log = finish(lifelong(regime="L0", episodes=1, max_steps=4), model, tmp_path)
    (rec,) = records(log)
    assert len(rec["fallbacks"]) == rec["steps"] > 0


def test_notes_in_a_scoped_memory_store_are_read(tmp_path):
    """Notes the agent's memory tool kept under Inspect's tool_state_scope
    (another store instance) are read like any others."""

    def scoped(tools: list[Any]) -> Any:
        move, memory = tools

        async def agent(state: AgentState) -> AgentState:
            with tool_state_scope("navigator"):
                await memory(command="create", path="/memories/seen.md", file_text="SAFE at (0,1)\nHOLE at (5,5)\n")
            await move(direction="RIGHT")
            return state

        return agent

    log = finish(lifelong_with_agent(scoped, regime="L0", episodes=2), "spatialstale/amnesiac", tmp_path)
    second = records(log)[1]
    assert second["notes"]["claims"] == 2 and second["notes"]["claimed_cells"] == 2


@pytest.mark.parametrize("agent", ["react"])
def test_history_is_refused_where_it_cannot_be_kept(agent):
    with pytest.raises(ValueError, match="history=3"):
        lifelong(history=3, agent=agent)
    with pytest.raises(ValueError, match="history=3"):
        lifelong_with_agent(loop_agent, history=3)
