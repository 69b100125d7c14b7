"""Per-episode agents other than the default loop: Inspect's ``react()`` and
any Inspect ``Agent`` a Python user brings.

Such an agent gets an ``AgentState`` holding the episode's system message
and first prompt, and the tools bound to the episode: ``move`` (a real
Inspect tool that steps the lake and answers with the outcome and the next
view, so the agent needs no further prompt) and, under ``memory=notes``,
Inspect's ``memory``. It is made per episode by an ``AgentFactory``:
``factory(tools) -> Agent`` (``react_factory`` is the task's
``agent=react``). The harness keeps the rules the agent cannot break:

- an agent that returns before the episode is over, whatever it returns
  (its state, another object, a state whose output has no choices, after no
  model call at all), gets the greedy fallback step (counted) and is called
  again on its conversation; the step budget ends every episode;
- once the episode is over the agent is stopped: the run's message limit
  drops to the conversation's length, so its next model call ends the run
  (no call is made), and a ``move`` after the end ends it too;
  ``until_episode_over`` is the ``on_continue`` that stops ``react()``
  itself first;
- each run is also held to a generous turn limit, so an agent that never
  moves still ends; the sample's message limit still applies inside it.

Under ``react`` the memory cap counts turns: more than ``max_memory_calls``
turns in a row without a move also get the fallback step.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Literal

from inspect_ai.agent import Agent, AgentState, react
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageUser
from inspect_ai.tool import Tool, tool
from inspect_ai.util import LimitExceededError, apply_limits, message_limit, sample_limits, span, turn_limit

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


#: The episode an agent is playing now (set around its runs by ``run_agent``).
_PLAYING: ContextVar[LifeEpisode | None] = ContextVar("lifelong_episode", default=None)


async def until_episode_over(state: AgentState) -> bool:
    """An ``on_continue`` for ``react()``: go on while the episode being
    played is not over (the idiom for your own ``react`` agent, docs/lifelong.md)."""
    episode = _PLAYING.get()
    return episode is None or not episode.over


def _stop(episode: LifeEpisode) -> None:
    """The episode is over: the run's message limit drops to the length its
    conversation will have once the answers to the reply under way are in, so
    the agent's next model call (which Inspect refuses at the limit) ends the
    run, while the answers themselves and an ``on_continue`` still go through."""
    if episode.stop is None or episode.run_state is None:
        return
    messages = episode.run_state.messages
    reply = next((m for m in reversed(messages) if isinstance(m, ChatMessageAssistant)), None)
    pending = len(reply.tool_calls or []) if reply is not None and reply is messages[-1] else 0
    episode.stop.limit = len(messages) + pending  # type: ignore[misc]  # a message limit's limit is settable


def move_tool(episode: LifeEpisode) -> Tool:
    """``move(direction)`` bound to ``episode``. A move after the episode is
    over ends the agent's run (``LimitExceededError`` of its stop limit)."""

    @tool(name="move", parallel=False)
    def move() -> Tool:
        async def execute(direction: Literal["UP", "DOWN", "LEFT", "RIGHT"]) -> str:
            """Move the agent one cell. Call exactly once per turn.

            Args:
                direction: One of UP, DOWN, LEFT, RIGHT.
            """
            if episode.over:
                if episode.stop is not None:
                    raise LimitExceededError("custom", value=1, limit=0, message=EPISODE_OVER, source=episode.stop)
                return EPISODE_OVER
            answer = after_move(episode, episode.step(str(direction).strip().upper()))
            if episode.over:
                _stop(episode)
            return answer

        return execute

    return move()


def last_reply(state: object) -> ChatMessageAssistant:
    """An agent's last reply, whatever it returned (an empty one if none)."""
    output = getattr(state, "output", None)
    choices = getattr(output, "choices", None)
    return choices[0].message if choices else ChatMessageAssistant(content="")


def fall_back(episode: LifeEpisode, state: object, problem: str) -> str:
    """The greedy step for an agent that did not move, logged with its last
    reply; its answer with the next view."""
    reply = last_reply(state)
    answer = after_move(episode, episode.fall_back(problem, reply.text, reply.tool_calls))
    if episode.over:
        _stop(episode)
    return answer


def react_factory(episode: LifeEpisode, max_memory_calls: int) -> AgentFactory:
    """``agent=react``: Inspect's ``react()`` with the episode's tools and no
    submit tool, its turns watched by ``on_continue``: it stops when the
    episode is over, and a turn without a tool call, or one more memory-only
    turn than the cap, gets the fallback step."""
    streak = {"turns": 0, "steps": 0}

    async def on_continue(state: AgentState) -> bool | str:
        if episode.over:
            return False
        if episode.env.steps != streak["steps"]:
            streak.update(turns=0, steps=episode.env.steps)
        streak["turns"] += 1
        calls = state.output.choices[0].message.tool_calls if state.output.choices else None
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
    over costs a fallback step, so this ends within the step budget. Each run
    is held to a turn limit, a generous bound on what the steps left need (so
    an agent that keeps calling the model without moving still stops), and to
    a message limit: the sample's own (``--message-limit``: the episode ends
    with outcome ``limit``) until the episode is over, then its conversation's
    length (so the agent makes no model call after the end). The agent's
    state is ours: what it returns replaces it only if it is an ``AgentState``."""
    state = AgentState(messages=list(messages))
    token = _PLAYING.set(episode)
    try:
        while not episode.over:
            # Inspect checks only the innermost message limit, so the stop limit carries the sample's own
            cap = sample_limits().message.limit
            episode.stop, episode.run_state = message_limit(None if cap is None else int(cap)), state
            turns = turn_limit(2 * (max_memory_calls + 2) * max(1, episode.steps_left) + 10)
            returned: object = None
            with apply_limits([episode.stop, turns], catch_errors=True) as scope:
                async with span(name=f"episode {episode.index}", type="agent"):
                    returned = await agent(state)
            state = returned if isinstance(returned, AgentState) else state
            if episode.over:
                break
            if scope.limit_error is not None and scope.limit_error.source is episode.stop:
                raise scope.limit_error  # the sample's message limit, reached inside the run: outcome ``limit``
            state.messages.append(ChatMessageUser(content=fall_back(episode, state, "the agent stopped")))
    finally:
        episode.stop = episode.run_state = None
        _PLAYING.reset(token)
    return state.messages
