"""The lake episode every game-playing family shares: the env, what the
agent sees, the ``move`` tool's answers, the greedy fallback step and its
log, and one turn of the game (a reply's calls -> a step -> the answers).

navigate (``navigation/episode.py``) and lifelong (``lifetime/episode.py``)
subclass ``LakeEpisode`` with what only they keep (navigate: the memory
view, its judgements and audits; lifelong: the episode's index, its
sightings and memory calls), so a move answers, falls back and is logged
alike in both.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool, ChatMessageUser
from inspect_ai.tool import ToolCall

from spatialstale_evals.harness import prompts
from spatialstale_evals.harness.parsing import parse_move
from spatialstale_evals.world.env import DEATH, SUCCESS, TIMEOUT, DynamicFrozenLakeEnv, action_id
from spatialstale_evals.world.grid import Cell, Grid, goal_of, greedy_direction
from spatialstale_evals.world.observation import in_view, visible_grid

#: The env's outcomes of an episode.
OUTCOMES = (SUCCESS, DEATH, TIMEOUT)
#: The outcome of an episode that an Inspect limit (``--token-limit``,
#: ``--time-limit``, ``--message-limit``) stopped first: neither success, death
#: nor timeout, and counted apart (the count ``limit``).
LIMIT = "limit"
#: How much of the reply behind a fallback step its log keeps (characters).
REPLY_LOG_CHARS = 2000


@dataclass
class LakeEpisode:
    """One episode being played on the lake, and what it did.

    ``view_radius`` None is the paper's full observability. ``trajectory``
    holds every position (the start first), ``actions`` every move,
    ``fallbacks`` the log of each greedy step (``fall_back``), ``events`` the
    lake changes the steps fired (``last_fired``: the latest step's),
    ``extra_calls`` the tool calls after a reply's first (answered, ignored).
    """

    env: DynamicFrozenLakeEnv
    view_radius: int | None = None
    trajectory: list[list[int]] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)
    fallbacks: list[dict[str, Any]] = field(default_factory=list)
    extra_calls: int = 0
    events: list[dict[str, Any]] = field(default_factory=list)
    death_cell: Cell | None = None
    last_fired: list[dict[str, Any]] = field(default_factory=list)

    @property
    def grid(self) -> Grid:
        return self.env.grid

    @property
    def agent(self) -> Cell:
        return self.env.agent

    @property
    def goal(self) -> Cell:
        return goal_of(self.env.grid)

    @property
    def steps_left(self) -> int:
        return self.env.max_steps - self.env.steps

    @property
    def over(self) -> bool:
        return self.env.outcome is not None

    @property
    def outcome(self) -> str:
        """The env's outcome, or ``LIMIT`` while it has none (an Inspect limit stopped the episode)."""
        return self.env.outcome or LIMIT

    @property
    def seen(self) -> Grid:
        """The grid as the agent sees it now (cells out of view are ``?``)."""
        return visible_grid(self.grid, self.agent, self.view_radius)

    def in_view(self, cell: Cell) -> bool:
        """Whether the agent sees ``cell`` now."""
        return in_view(self.agent, cell, self.view_radius)

    @cached_property
    def cells(self) -> tuple[Cell, ...]:
        """Every cell of the grid, row-major, made once per episode."""
        return tuple((r, c) for r in range(len(self.grid)) for c in range(len(self.grid[0])))

    def in_sight(self) -> Iterator[tuple[Cell, str]]:
        """Each cell the agent is shown now with its type, row-major. The cell
        keys are made once per episode (``cells``), so a family's ``observe``
        that records them adds few objects per step, each of which counts
        toward a pass of the garbage collector (README, Performance)."""
        grid, agent, radius = self.grid, self.agent, self.view_radius
        for cell in self.cells:
            if in_view(agent, cell, radius):
                yield cell, grid[cell[0]][cell[1]]

    def step(self, direction: str) -> str:
        """Apply one move; the text the ``move`` tool answers."""
        before = self.env.agent
        _, _, _, _, info = self.env.step(action_id(direction))
        row, col = pos = self.env.agent
        self.actions.append(direction)
        self.trajectory.append(list(pos))
        self.last_fired = info["events"]
        self.events.extend(info["events"])
        if self.env.outcome == DEATH:
            self.death_cell = pos
            return prompts.MOVE_DEATH.format(direction=direction, row=row, col=col)
        if self.env.outcome == SUCCESS:
            return prompts.MOVE_SUCCESS.format(direction=direction, row=row, col=col)
        moved = prompts.MOVE_BUMPED if pos == before else prompts.MOVE_MOVED
        where = moved.format(direction=direction, row=row, col=col)
        if self.env.outcome == TIMEOUT:
            return prompts.MOVE_TIMEOUT.format(where=where)
        return prompts.MOVE_CONTINUE.format(where=where, steps_left=self.steps_left)

    def fall_back(self, problem: str, reply_text: str, tool_calls: Sequence[ToolCall] | None = None) -> str:
        """The paper's greedy step toward the goal for a reply without a valid
        ``move`` call; its answer. Logged in ``fallbacks`` with the step it
        ended (1-based), why, where it went, and the reply that caused it
        (its text, cut to ``REPLY_LOG_CHARS``, and its tool calls)."""
        direction = greedy_direction(self.agent, self.goal)
        result = prompts.MOVE_FALLBACK.format(problem=problem, direction=direction) + self.step(direction)
        self.fallbacks.append(
            {
                "step": self.env.steps,
                "problem": problem,
                "direction": direction,
                "reply": reply_text[:REPLY_LOG_CHARS],
                "tool_calls": [{"function": c.function, "arguments": c.arguments} for c in tool_calls or []],
            }
        )
        return result


def play_turn(
    episode: LakeEpisode, reply: ChatMessageAssistant, calls: Sequence[ToolCall] | None = None
) -> list[ChatMessage]:
    """One move of the game: the first of ``calls`` (default: the reply's)
    if it is a valid ``move`` (the direction as parsed: " up " is accepted),
    else the greedy fallback step; the answers to every call, so a kept
    conversation stays valid for any provider (later calls are ignored and
    counted in ``extra_calls``; a reply without calls gets a user message)."""
    calls = list(reply.tool_calls or []) if calls is None else list(calls)
    choice = parse_move(calls)
    episode.extra_calls += choice.extra_calls
    if choice.direction is not None:
        result = episode.step(choice.direction)
    else:
        result = episode.fall_back(choice.problem or "", reply.text, calls)
    if not calls:
        return [ChatMessageUser(content=result)]
    first = ChatMessageTool(content=result, tool_call_id=calls[0].id, function=calls[0].function)
    return [first, *(ChatMessageTool(content=prompts.MOVE_IGNORED, tool_call_id=c.id, function=c.function)
                     for c in calls[1:])]  # fmt: skip
