"""Per-episode agents other than the default loop: Inspect's ``react()`` and
any Inspect ``Agent`` a Python user brings.

Such an agent gets an ``AgentState`` holding the episode's system message
and first prompt, and two tools bound to the episode: ``move`` (a real
Inspect tool that steps the lake and answers with the outcome and the next
view, so the agent needs no further prompt) and Inspect's ``memory``. It is
made per episode by an ``AgentFactory``: ``factory(tools) -> Agent``
(``react_factory`` is the task's ``agent=react``). The harness keeps the
rules the agent cannot break: a move after the episode is over does
nothing; an agent that returns before the episode is over gets the greedy
fallback step (counted) and is called again with its result; the step
budget ends every episode. Under ``react`` the memory cap counts turns: more
than ``max_memory_calls`` turns in a row without a move also get the
fallback step.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from inspect_ai.agent import Agent, AgentState, react, run
from inspect_ai.model import ChatMessage, ChatMessageUser
from inspect_ai.tool import Tool, tool
from inspect_ai.util import message_limit

from spatialstale_evals.harness import prompts as shared
from spatialstale_evals.harness.observe import observation_parts
from spatialstale_evals.lifetime.episode import LifeEpisode

#: Makes the episode's agent from its two tools (``move``, ``memory``).
AgentFactory = Callable[[list[Tool]], Agent]
EPISODE_OVER = "Ignored: the episode is over."


def view_text(episode: LifeEpisode) -> str:
    """The next view as the default loop's step prompt shows it (without the
    partial-view line, which the system prompt's first step gave)."""
    parts = observation_parts(episode.seen, episode.agent, "text", "navigate")
    goal = episode.goal
    step = shared.NAVIGATE_STEP.format(
        row=episode.agent[0], col=episode.agent[1], goal_row=goal[0], goal_col=goal[1], steps_left=episode.steps_left
    )
    return "\n".join([*(p.text for p in parts), step])  # type: ignore[union-attr]


def after_move(episode: LifeEpisode, result: str) -> str:
    """A move's answer: the outcome, then (while the episode goes on) the view."""
    if episode.over:
        return result
    episode.observe()
    return f"{result}\n{view_text(episode)}"


def move_tool(episode: LifeEpisode) -> Tool:
    """``move(direction)`` bound to ``episode``."""

    @tool(name="move", parallel=False)
    def move() -> Tool:
        async def execute(direction: Literal["UP", "DOWN", "LEFT", "RIGHT"]) -> str:
            """Move the agent one cell. Call exactly once per turn.

            Args:
                direction: One of UP, DOWN, LEFT, RIGHT.
            """
            if episode.over:
                return EPISODE_OVER
            return after_move(episode, episode.step(str(direction).strip().upper()))

        return execute

    return move()


def fall_back(episode: LifeEpisode, state: AgentState, problem: str) -> str:
    """The greedy step for an agent that did not move; its answer with the next view."""
    reply = state.output.message.text if state.output and state.output.message else ""
    return after_move(episode, episode.fall_back(problem, reply))


def react_factory(episode: LifeEpisode, max_memory_calls: int) -> AgentFactory:
    """``agent=react``: Inspect's ``react()`` with the two tools and no submit
    tool, its turns watched by ``on_continue``: it stops when the episode is
    over, and a turn without a tool call, or one more memory-only turn than the
    cap, gets the fallback step."""
    streak = {"turns": 0, "steps": 0}

    async def on_continue(state: AgentState) -> bool | str:
        if episode.over:
            return False
        if episode.env.steps != streak["steps"]:
            streak.update(turns=0, steps=episode.env.steps)
        streak["turns"] += 1
        calls = state.output.message.tool_calls if state.output and state.output.message else None
        if not calls:
            text = fall_back(episode, state, shared.NO_TOOL_CALL)
            return False if episode.over else text
        if streak["turns"] > max_memory_calls:
            text = fall_back(episode, state, f"more than {max_memory_calls} turns without a move")
            streak.update(turns=0, steps=episode.env.steps)
            return False if episode.over else text
        return True

    def make(tools: list[Tool]) -> Agent:
        return react(prompt=None, tools=tools, submit=False, on_continue=on_continue)

    return make


async def run_agent(
    agent: Agent, episode: LifeEpisode, messages: Sequence[ChatMessage], max_memory_calls: int
) -> list[ChatMessage]:
    """Play the episode with ``agent`` from ``messages`` (system, first
    prompt); the conversation it leaves. Each return before the episode is
    over costs a fallback step, so this ends within the step budget; each run
    is also held to a message limit (a generous bound on what the steps left
    need), so an agent that keeps calling tools after the episode is over
    still stops."""
    state = AgentState(messages=list(messages))
    while not episode.over:
        bound = len(state.messages) + 4 * (max_memory_calls + 2) * max(1, episode.steps_left) + 10
        state, _ = await run(agent, state, limits=[message_limit(bound)], name=f"episode {episode.index}")
        if episode.over:
            break
        state.messages.append(ChatMessageUser(content=fall_back(episode, state, "the agent stopped")))
    return state.messages
