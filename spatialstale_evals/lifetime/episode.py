"""One episode of a lifetime: the shared lake episode (``harness.lake_episode``:
the env, the view, the ``move`` tool's answers, the fallback step) with what
the agent saw in it, and the per-sample state the scorer reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from inspect_ai.util import Limit, StoreModel
from pydantic import Field

from spatialstale_evals.harness import lake_episode
from spatialstale_evals.harness.lake_episode import LIMIT, LakeEpisode
from spatialstale_evals.harness.memory_tool import MemoryStore as MemoryStore  # the store lifelong reads
from spatialstale_evals.world.env import DEATH
from spatialstale_evals.world.grid import HOLE, Cell

#: Lifelong counts the outcome ``LIMIT`` (an Inspect limit stopped the episode) beside the env's.
OUTCOMES = (*lake_episode.OUTCOMES, LIMIT)


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
class LifeEpisode(LakeEpisode):
    """One episode of a lifetime being played: the lake episode
    (``harness.lake_episode``) with its index, what the agent saw in it (each
    cell's type at its latest sighting) and its memory calls and tokens."""

    index: int = field(kw_only=True)
    sightings: dict[Cell, str] = field(default_factory=dict)
    memory_calls: int = 0
    memory_refused: int = 0
    write_back_calls: int = 0
    model_calls: int = 0
    tokens: int = 0
    #: The message limit of the agent's run under way (``agents.run_agent``), dropped to 0 when the episode ends.
    stop: Limit | None = None
    #: The state of that run (an ``AgentState``), whose conversation the stop limit is set from.
    run_state: Any = None

    @property
    def died_on_fallback(self) -> bool:
        """Whether the episode ended in a hole on the harness's fallback step
        (``fall_back`` logs the step it ended)."""
        return self.death_cell is not None and bool(self.fallbacks) and self.fallbacks[-1]["step"] == self.env.steps

    def observe(self) -> None:
        """Record what the agent is shown now: each cell's type at its latest sighting."""
        self.sightings.update(self.in_sight())

    def step(self, direction: str) -> str:
        """Apply one move; the text the ``move`` tool answers. A death tells the
        agent the cell is a hole, so it counts as a sighting."""
        answer = super().step(direction)
        if self.env.outcome == DEATH:
            self.sightings[self.agent] = HOLE
        return answer
