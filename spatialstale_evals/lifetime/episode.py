"""One episode of a lifetime: the env, what the agent sees and has seen, the
``move`` tool, the fallback move, and the per-sample state the scorer reads.

The move's answers and the fallback are the navigate task's (same strings,
same greedy step); the episode is written here rather than shared because a
lifetime also tracks what the agent saw across episodes, which navigate
does not need.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from inspect_ai.util import Limit, StoreModel
from pydantic import Field

from spatialstale_evals.harness import prompts
from spatialstale_evals.harness.memory_tool import MemoryStore as MemoryStore  # the store lifelong reads
from spatialstale_evals.world.env import DEATH, SUCCESS, TIMEOUT, DynamicFrozenLakeEnv, action_id
from spatialstale_evals.world.grid import HOLE, Cell, Grid, goal_of, greedy_direction
from spatialstale_evals.world.observation import in_view, visible_grid

#: The outcome of an episode an Inspect limit stopped first (counted apart).
LIMIT = "limit"
OUTCOMES = (SUCCESS, DEATH, TIMEOUT, LIMIT)


class LifetimeState(StoreModel):
    """The sample's own state, kept in its Inspect store: one record per
    episode played (``episode_record``), what the agent has ever seen (and
    each cell's type at its last sighting, ``[row, col, type]``), and the
    tokens spent. Per sample, like the memory store: it never crosses
    samples or epochs."""

    records: list[dict[str, Any]] = Field(default_factory=list)
    ever_seen: list[list[int]] = Field(default_factory=list)
    last_seen: list[list[Any]] = Field(default_factory=list)
    tokens: int = 0


@dataclass
class LifeEpisode:
    """One episode being played."""

    index: int
    env: DynamicFrozenLakeEnv
    view_radius: int | None
    trajectory: list[list[int]] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)
    fallbacks: list[dict[str, Any]] = field(default_factory=list)
    sightings: dict[Cell, str] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    memory_calls: int = 0
    memory_refused: int = 0
    write_back_calls: int = 0
    model_calls: int = 0
    tokens: int = 0
    death_cell: Cell | None = None
    #: The message limit of the agent's run under way (``agents.run_agent``), dropped to 0 when the episode ends.
    stop: Limit | None = None
    #: The state of that run (an ``AgentState``), whose conversation the stop limit is set from.
    run_state: Any = None

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
        return self.env.outcome or LIMIT

    @property
    def died_on_fallback(self) -> bool:
        """Whether the episode ended in a hole on the harness's fallback step
        (``fall_back`` logs the step index it was taken at)."""
        last = self.env.steps - 1
        return self.death_cell is not None and bool(self.fallbacks) and self.fallbacks[-1]["step"] == last

    @property
    def seen(self) -> Grid:
        """The lake as the agent sees it now (cells out of view are ``?``)."""
        return visible_grid(self.grid, self.agent, self.view_radius)

    def observe(self) -> None:
        """Record what the agent is shown now: each cell's type at its latest sighting."""
        for r, row in enumerate(self.grid):
            for c, kind in enumerate(row):
                if in_view(self.agent, (r, c), self.view_radius):
                    self.sightings[(r, c)] = kind

    def step(self, direction: str) -> str:
        """Apply one move; the text the ``move`` tool answers. A death tells the
        agent the cell is a hole, so it counts as a sighting."""
        before = self.env.agent
        _, _, _, _, info = self.env.step(action_id(direction))
        row, col = pos = self.env.agent
        self.actions.append(direction)
        self.trajectory.append(list(pos))
        self.events.extend(info["events"])
        if self.env.outcome == DEATH:
            self.death_cell = pos
            self.sightings[pos] = HOLE
            return prompts.MOVE_DEATH.format(direction=direction, row=row, col=col)
        if self.env.outcome == SUCCESS:
            return prompts.MOVE_SUCCESS.format(direction=direction, row=row, col=col)
        moved = prompts.MOVE_BUMPED if pos == before else prompts.MOVE_MOVED
        where = moved.format(direction=direction, row=row, col=col)
        if self.env.outcome == TIMEOUT:
            return prompts.MOVE_TIMEOUT.format(where=where)
        return prompts.MOVE_CONTINUE.format(where=where, steps_left=self.steps_left)

    def fall_back(self, problem: str, reply_text: str) -> str:
        """The greedy step for a reply without a valid ``move`` call, logged."""
        direction = greedy_direction(self.agent, self.goal)
        self.fallbacks.append({"step": self.env.steps, "problem": problem, "reply": reply_text[:500]})
        return prompts.MOVE_FALLBACK.format(problem=problem, direction=direction) + self.step(direction)
