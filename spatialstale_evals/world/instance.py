"""A benchmark instance: everything one seed of one regime fixes before any model call."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from spatialstale_evals import paper
from spatialstale_evals.world.grid import Grid, generate_grid, validate_grid, validate_size
from spatialstale_evals.world.memory import MemoryEntry, build_memory, distractor_notes, mix, walk_visits
from spatialstale_evals.world.regimes import (
    STREAM_GRID,
    STREAM_MEMORY,
    STREAM_NOTES,
    Event,
    get_regime,
    grid_after_events,
    validate_regime,
)
from spatialstale_evals.world.staleness import FREEZE, THAW, stale_labels

#: The paper's budget on its grid, and that grid's half-perimeter.
BASE_BUDGET, BASE_SIDES = paper.STEP_BUDGET, sum(paper.GRID)


def step_budget(height: int, width: int) -> int:
    """50 steps on 8x8, scaled with the shortest S->G distance (H+W-2):
    100 on 16x16, 200 on 32x32."""
    return round(BASE_BUDGET * (height + width) / BASE_SIDES)


def _rng(seed: int, stream: int) -> np.random.Generator:
    return np.random.default_rng([seed, stream])


@dataclass(frozen=True)
class Window:
    """One detection window: the grid after ``step`` moves and the truth about
    every memory entry there (entry id -> ``thaw``, ``freeze`` or None)."""

    step: int
    grid: Grid
    labels: Mapping[str, str | None]

    @property
    def thaw(self) -> list[str]:
        return [eid for eid, kind in self.labels.items() if kind == THAW]

    @property
    def freeze(self) -> list[str]:
        return [eid for eid, kind in self.labels.items() if kind == FREEZE]

    @property
    def stale(self) -> dict[str, str]:
        return {eid: kind for eid, kind in self.labels.items() if kind}


@dataclass(frozen=True)
class Instance:
    id: str
    regime: str
    seed: int
    height: int
    width: int
    max_steps: int
    g0: Grid
    grid: Grid
    events: tuple[Event, ...] = field(default_factory=tuple)
    memory: tuple[MemoryEntry, ...] = field(default_factory=tuple)

    @property
    def n_entries(self) -> int:
        return len(self.memory)

    def grid_at(self, step: int) -> Grid:
        """The world after ``step`` moves: pre-game changes plus every L3 event so far."""
        return grid_after_events(self.grid, self.events, upto_step=step)

    def final_grid(self) -> Grid:
        return grid_after_events(self.grid, self.events)

    @cached_property
    def windows(self) -> tuple[Window, ...]:
        """The detection windows, by the regime's rule (one before navigation on
        L1/L2, one after each scheduled event on L3), with their ground truth.
        Computed once per instance: every task, strategy and table reads these."""
        rule = get_regime(self.regime).windows
        return tuple(
            Window(step, grid, stale_labels(self.memory, self.g0, grid)) for step, grid in rule(self.grid, self.events)
        )

    @cached_property
    def visits(self) -> dict[tuple[int, int], list[tuple[int, int]]]:
        """The exploration the memory was written from, replayed from the seed:
        cell -> every (walk, step) on it (``world.memory.walk_visits``)."""
        return walk_visits(self.g0, _rng(self.seed, STREAM_MEMORY))

    def with_notes(self, count: int) -> Instance:
        """The instance with ``count`` distractor notes mixed into its store,
        drawn from the seed (the same notes, at the same places, every run)."""
        if not count:
            return self
        rng = _rng(self.seed, STREAM_NOTES)
        return replace(self, memory=tuple(mix(self.memory, distractor_notes(rng, count), rng)))

    def labels_at(self, step: int) -> Mapping[str, str | None]:
        """The truth about every entry on the grid after ``step`` moves: the
        detection window's own labels when one is at ``step``, else computed."""
        for window in self.windows:
            if window.step == step:
                return window.labels
        return stale_labels(self.memory, self.g0, self.grid_at(step))

    def to_json(self) -> dict:
        return {
            "id": self.id,
            "regime": self.regime,
            "seed": self.seed,
            "height": self.height,
            "width": self.width,
            "max_steps": self.max_steps,
            "g0": list(self.g0),
            "grid": list(self.grid),
            "events": [e.to_json() for e in self.events],
            "memory": [m.to_json() for m in self.memory],
        }

    @classmethod
    def from_json(cls, data: dict, registered: bool = True) -> Instance:
        """An instance from its JSON; ``registered=False`` accepts a regime this
        process has not registered (a reader of logs; ``windows`` then fails)."""
        g0 = validate_grid(data["g0"])
        grid = validate_grid(data["grid"])
        height, width = int(data["height"]), int(data["width"])
        if (len(g0), len(g0[0])) != (height, width) or (len(grid), len(grid[0])) != (height, width):
            raise ValueError(f"instance {data.get('id')!r}: grids do not match {height}x{width}")
        return cls(
            id=str(data["id"]),
            regime=validate_regime(str(data["regime"])) if registered else str(data["regime"]),
            seed=int(data["seed"]),
            height=height,
            width=width,
            max_steps=int(data.get("max_steps", step_budget(height, width))),
            g0=g0,
            grid=grid,
            events=tuple(Event.from_json(e) for e in data["events"]),
            memory=tuple(MemoryEntry.from_json(m) for m in data["memory"]),
        )


def generate_instance(seed: int, regime: str, index: int, height: int = 8, width: int = 8) -> Instance:
    """The instance for ``seed`` under ``regime``; ``index`` only names it."""
    entry = get_regime(regime)
    validate_size(height, width)
    g0 = generate_grid(height, width, _rng(seed, STREAM_GRID))
    memory = build_memory(g0, _rng(seed, STREAM_MEMORY))
    budget = step_budget(height, width)
    grid, events = entry.draw(g0, _rng(seed, entry.stream), budget)
    return Instance(
        id=f"{regime}-{index:03d}",
        regime=regime,
        seed=int(seed),
        height=height,
        width=width,
        max_steps=budget,
        g0=g0,
        grid=grid,
        events=tuple(events),
        memory=tuple(memory),
    )
