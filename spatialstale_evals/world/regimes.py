"""The change regimes as deterministic functions of a seed: the paper's three
(docs/specification.md#change-regimes) and our clean-memory L0 (nothing changes).

The paper's prose leaves several readings open; the one implemented here is the
one that reproduces its Table 1 (see docs/dataset.md, "How the change rules were
read"). In short:

* every change is an effective F<->H flip of a distinct, uniformly chosen
  cell (never S/G); thaw vs freeze follows from the cell's type, which is what
  makes thaws about three quarters of all changes, as in the paper's counts;
* L1 flips 5-7 cells anywhere and redraws the whole set if S->G is cut;
* L2 walks the radius-2 neighbourhood of one centre in random order, keeping
  each flip only if S->G survives, until 12-16 flips are made or the
  neighbourhood is exhausted; sets outside a 7-11 stale-cell band are redrawn
  (that band is *our* rule: no reading of the paper meets its narrow spread);
* L3 schedules an event at t = 5, 10, ... while t + 5 < budget (steps 5..40
  on 8x8), each firing with probability 0.7 and flipping two distinct cells,
  each a thaw or a freeze with equal probability (the L3 text's per-flip
  rule), redrawn while the event would cut S->G; whole schedules ending outside a
  5-14 stale-cell band are redrawn (again *our* rule, the paper's range).

The two bands are calibrations to the paper's 8x8 Table 1 (*our* rules).

Larger grids (docs/specification.md#larger-worlds) scale every count with the area factor ``k = H*W/64``
by one rule, ``change_scale``, so that each regime's mean stale ratio stays
within 0.01 of the 8x8 set's (docs/dataset.md, "Larger worlds"); at 8x8 every factor is 1 and
the draws are exactly the paper-calibrated ones above, so the 8x8 files do
not change:

* L1 flips ``round(5k)``..``round(7k)`` cells;
* L2 draws ``k * a(8x8) / a(HxW)`` centres, ``a`` being the mean number of
  changeable cells within radius 2 of a changeable cell (10.5 on 8x8, where
  the border cuts most neighbourhoods short; 12.4 on 32x32): the clusters
  cover k times the cells one 8x8 cluster covers, not more because fewer of
  them touch the border. Each centre follows the 8x8 cluster rule on cells no
  earlier cluster flipped;
* L3 keeps the period and the probability, its triggers run to the larger
  budget, and each event flips ``2k * T(8x8) / T(HxW)`` cells (T: trigger
  steps), so a schedule's expected flips scale with the area;
* the stale bands scale by k (floor of the low end, ceiling of the high end),
  on grids at least the paper's area; below it one cluster alone covers
  more than the scaled band, so smaller grids have none. L2 has at least
  one centre and an L3 event at least one cell whatever the size.

A fractional count is rounded stochastically from the regime's own stream
(its floor, plus one with the probability of the fraction), which draws
nothing when the count is whole: at 8x8 it always is.

Each regime is one :class:`Regime` entry in ``REGIMES``: its draw, its random
stream, when its changes are audited (the detection-window rule) and the
paper's Table-1 row. Adding a regime is one entry here (and its data file);
nothing outside this module compares a regime's name.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np

from spatialstale_evals import paper
from spatialstale_evals.world.grid import FROZEN, HOLE, Cell, Grid, flip_cells, has_path, mutable_cells

#: The built-in regimes, the vocabulary of the tasks' ``regime`` parameter
#: (``REGIMES`` holds an entry for each, and any registered later).
RegimeName = Literal["L0", "L1", "L2", "L3"]

L1_CHANGES = (5, 7)
L2_CHANGES = (12, 16)
L2_RADIUS = 2
BANDED_SIZE = paper.GRID
_CELLS = BANDED_SIZE[0] * BANDED_SIZE[1]
#: Stale-cell bands: the paper's reported Table-1 ranges in cells (0.109-0.172
#: of 64 cells is 7-11; 0.078-0.219 is 5-14). Our rule, scaled with the area
#: on larger grids (``change_scale``).
L2_STALE_BAND = (round(paper.TABLE1["L2"][2] * _CELLS), round(paper.TABLE1["L2"][3] * _CELLS))
L3_STALE_BAND = (round(paper.TABLE1["L3"][2] * _CELLS), round(paper.TABLE1["L3"][3] * _CELLS))
L3_PERIOD = 5
L3_FIRE_PROBABILITY = 0.7
L3_CELLS_PER_EVENT = 2
MAX_REDRAWS = 10_000
#: The seed's random streams of g0, of the memory walks and of the distractor
#: notes, shared by every regime (paired comparisons across regimes); each
#: regime has its own.
STREAM_GRID, STREAM_MEMORY, STREAM_NOTES = 0, 1, 2
SHARED_STREAMS = {STREAM_GRID: "g0", STREAM_MEMORY: "the memory walks", STREAM_NOTES: "the distractor notes"}


class RegimeError(ValueError):
    """An unknown regime or a change request the grid cannot satisfy."""


@dataclass(frozen=True)
class Event:
    """An L3 event: at ``step`` (after that many moves) each cell flips F<->H."""

    step: int
    cells: tuple[Cell, ...]

    def to_json(self) -> dict:
        return {"step": self.step, "cells": [list(c) for c in self.cells]}

    @classmethod
    def from_json(cls, data: dict) -> Event:
        return cls(step=int(data["step"]), cells=tuple((int(r), int(c)) for r, c in data["cells"]))


def trigger_steps(max_steps: int) -> list[int]:
    """Steps at which an L3 event may fire: multiples of the period with a full
    period left before the budget ends (5..40 for the 50-step budget)."""
    return list(range(L3_PERIOD, max_steps - L3_PERIOD, L3_PERIOD))


def mean_neighbourhood(height: int, width: int, radius: int = L2_RADIUS) -> float:
    """Mean number of changeable cells (all but S and G) within Manhattan
    ``radius`` of a changeable cell, centre included: the cells an L2 cluster
    can reach, on average, before the border cuts it short. Geometry only."""
    ends = {(0, 0), (height - 1, width - 1)}
    cells = [(r, c) for r in range(height) for c in range(width) if (r, c) not in ends]
    reach = 0
    for r, c in cells:
        rows = range(max(0, r - radius), min(height, r + radius + 1))
        reach += sum(
            1
            for rr in rows
            for cc in range(max(0, c - (radius - abs(rr - r))), min(width, c + radius - abs(rr - r) + 1))
            if (rr, cc) not in ends
        )
    return reach / len(cells)


@dataclass(frozen=True)
class ChangeScale:
    """The change counts of one grid size and step budget (``change_scale``).

    Attributes:
        area: k = H*W / 64, the grid's area in paper grids.
        l1_changes: L1's range of flips.
        l2_centres: L2's expected number of cluster centres (1 on 8x8).
        l3_cells_per_event: Cells an L3 event flips, in expectation (2 on 8x8).
        l2_band, l3_band: The stale-cell bands (our rule), or None below the paper's area.
    """

    area: float
    l1_changes: tuple[int, int]
    l2_centres: float
    l3_cells_per_event: float
    l2_band: tuple[int, int] | None
    l3_band: tuple[int, int] | None


@lru_cache(maxsize=64)
def change_scale(height: int, width: int, budget: int) -> ChangeScale:
    """The one rule that sizes every regime's changes to the grid (module
    docstring): the paper's 8x8 counts times the area factor, with L2's
    centres corrected for the border and L3's cells per event for the
    number of trigger steps the budget allows. Exactly the 8x8 counts at 8x8
    with its 50-step budget."""
    k = height * width / _CELLS
    lo = max(1, round(L1_CHANGES[0] * k))
    centres = k * mean_neighbourhood(*BANDED_SIZE) / mean_neighbourhood(height, width)
    paper_triggers = len(trigger_steps(paper.STEP_BUDGET))
    per_event = L3_CELLS_PER_EVENT * k * paper_triggers / max(1, len(trigger_steps(budget)))

    def band(cells: tuple[int, int]) -> tuple[int, int] | None:
        return (math.floor(cells[0] * k), math.ceil(cells[1] * k)) if k >= 1 else None

    return ChangeScale(
        area=k,
        l1_changes=(lo, max(lo, round(L1_CHANGES[1] * k))),
        l2_centres=centres,
        l3_cells_per_event=per_event,
        l2_band=band(L2_STALE_BAND),
        l3_band=band(L3_STALE_BAND),
    )


def stochastic_count(rng: np.random.Generator, expected: float) -> int:
    """``expected`` as a whole count: its floor, plus one with the probability
    of its fraction. A whole ``expected`` draws nothing from ``rng`` (so the
    8x8 draws are the paper-calibrated ones, draw for draw)."""
    whole = math.floor(expected)
    fraction = expected - whole
    return whole + int(fraction > 1e-9 and rng.random() < fraction)


def _pick(rng: np.random.Generator, cells: Sequence[Cell], k: int) -> list[Cell]:
    idx = rng.choice(len(cells), size=k, replace=False)
    return [cells[i] for i in idx]


def l1_changes(g0: Grid, rng: np.random.Generator, budget: int = paper.STEP_BUDGET) -> Grid:
    candidates = mutable_cells(g0)
    lo, hi = change_scale(len(g0), len(g0[0]), budget).l1_changes
    for _ in range(MAX_REDRAWS):
        n = int(rng.integers(lo, hi + 1))
        grid = flip_cells(g0, _pick(rng, candidates, min(n, len(candidates))))
        if has_path(grid):
            return grid
    raise RegimeError("L1: no change set keeps a path S->G")


def _in_band(count: int, band: tuple[int, int] | None) -> bool:
    return band is None or band[0] <= count <= band[1]


def l2_changes(g0: Grid, rng: np.random.Generator, budget: int = paper.STEP_BUDGET) -> Grid:
    candidates = mutable_cells(g0)
    scale = change_scale(len(g0), len(g0[0]), budget)
    for _ in range(MAX_REDRAWS):
        grid, flipped = g0, 0
        done: set[Cell] = set()
        for _centre in range(max(1, stochastic_count(rng, scale.l2_centres))):
            grid, made = _cluster(grid, candidates, done, rng)
            flipped += made
        if _in_band(flipped, scale.l2_band):
            return grid
    raise RegimeError("L2: no clustered change set within the stale band keeps a path S->G")


def _cluster(grid: Grid, candidates: Sequence[Cell], done: set[Cell], rng: np.random.Generator) -> tuple[Grid, int]:
    """One cluster (the paper's 8x8 rule): 12-16 flips of the cells within
    L2_RADIUS of a random centre, in random order, each kept only if S->G
    survives, until the count is made or the neighbourhood is exhausted.
    Cells an earlier cluster flipped (``done``, updated) are passed over, so
    every change is a flip of a distinct cell."""
    n = int(rng.integers(L2_CHANGES[0], L2_CHANGES[1] + 1))
    centre = candidates[int(rng.integers(len(candidates)))]
    area = [p for p in candidates if abs(p[0] - centre[0]) + abs(p[1] - centre[1]) <= L2_RADIUS]
    flipped = 0
    for cell in [area[i] for i in rng.permutation(len(area))]:
        if flipped == n:
            break
        if cell in done:
            continue
        trial = flip_cells(grid, [cell])
        if has_path(trial):
            grid, flipped = trial, flipped + 1
            done.add(cell)
    return grid, flipped


def l3_schedule(g0: Grid, rng: np.random.Generator, max_steps: int) -> list[Event]:
    scale = change_scale(len(g0), len(g0[0]), max_steps)
    for _ in range(MAX_REDRAWS):
        events = _l3_draw(g0, rng, max_steps, scale.l3_cells_per_event)
        stale = sum(a != b for r0, r1 in zip(g0, grid_after_events(g0, events)) for a, b in zip(r0, r1))
        if _in_band(stale, scale.l3_band):
            return events
    raise RegimeError("L3: no schedule within the stale band")


def _l3_draw(g0: Grid, rng: np.random.Generator, max_steps: int, per_event: float) -> list[Event]:
    candidates = mutable_cells(g0)
    grid, events = g0, []
    for step in trigger_steps(max_steps):
        if rng.random() >= L3_FIRE_PROBABILITY:
            continue
        for _ in range(MAX_REDRAWS):
            cells = _event_cells(grid, candidates, rng, max(1, stochastic_count(rng, per_event)))
            trial = flip_cells(grid, cells)
            if has_path(trial):
                grid = trial
                events.append(Event(step=step, cells=tuple(cells)))
                break
        else:
            raise RegimeError(f"L3: no event at step {step} keeps a path S->G")
    return events


def _event_cells(grid: Grid, candidates: Sequence[Cell], rng: np.random.Generator, count: int) -> list[Cell]:
    """``count`` distinct cells, each a thaw or a freeze with equal probability
    (the L3 text's per-flip rule): pick the direction, then a cell of the type
    it applies to; if there is none, any remaining cell."""
    picks: list[Cell] = []
    for _ in range(min(count, len(candidates))):
        want = FROZEN if rng.random() < 0.5 else HOLE
        pool = [p for p in candidates if p not in picks and grid[p[0]][p[1]] == want]
        pool = pool or [p for p in candidates if p not in picks]
        picks.append(pool[int(rng.integers(len(pool)))])
    return picks


def grid_after_events(g0: Grid, events: Sequence[Event], upto_step: int | None = None) -> Grid:
    """Cumulative grid after every event at or before ``upto_step`` (all if None)."""
    cells = [c for e in events if upto_step is None or e.step <= upto_step for c in e.cells]
    return flip_cells(g0, cells)


# -- the registry ---------------------------------------------------------------

#: (g0, rng, step budget) -> (grid after the pre-game changes, scheduled events).
Draw = Callable[[Grid, np.random.Generator, int], tuple[Grid, tuple[Event, ...]]]
#: (grid after the pre-game changes, events) -> (step, grid) of each detection window.
WindowRule = Callable[[Grid, Sequence[Event]], list[tuple[int, Grid]]]


def before_navigation(grid: Grid, events: Sequence[Event]) -> list[tuple[int, Grid]]:
    """One window, before the first step: the pre-game changes are all there is."""
    return [(0, grid)]


def after_each_event(grid: Grid, events: Sequence[Event]) -> list[tuple[int, Grid]]:
    """One window after each scheduled event, on the cumulative grid."""
    return [(e.step, grid_after_events(grid, events, upto_step=e.step)) for e in events]


@dataclass(frozen=True)
class Regime:
    """One change regime.

    Attributes:
        name: The tasks' ``regime`` value, the instance id prefix and the data
            file stem (``L2`` -> ``L2-007`` in ``L2.jsonl``).
        summary: One line for documentation and help texts.
        stream: The seed's random stream the draw uses. Streams are
            independent, so g0 and memory (streams 0 and 1) are shared by all
            regimes of a seed, and adding a regime never shifts another's draws.
        draw: How the changes are drawn, as a deterministic function of the stream.
        windows: When the changes are audited (``before_navigation`` or
            ``after_each_event``): one detection window per element.
        table1: The paper's Table-1 row for the regime (mean, sd, min, max of
            the stale ratio on 8x8), or None for a regime of ours, which the
            paper's matrix (``spatialstale matrix``'s default) leaves out.
        clean: Nothing ever changes, so every entry stays true: where memory
            can only help (the report's "benefit" rows; the others are "safety").
    """

    name: str
    summary: str
    stream: int
    draw: Draw
    windows: WindowRule = before_navigation
    table1: tuple[float, float, float, float] | None = None
    clean: bool = False


REGIMES: dict[str, Regime] = {}


def register_regime(regime: Regime) -> Regime:
    """Add a regime (names and streams are unique); returns it."""
    if regime.name in REGIMES:
        raise RegimeError(f"regime {regime.name!r} is already registered")
    taken = SHARED_STREAMS | {r.stream: f"regime {r.name}" for r in REGIMES.values()}
    if regime.stream in taken:
        raise RegimeError(f"regime {regime.name!r}: stream {regime.stream} is taken (by {taken[regime.stream]})")
    REGIMES[regime.name] = regime
    return regime


def get_regime(name: str) -> Regime:
    """The registered regime called ``name``; a clear error listing the known ones otherwise."""
    regime = REGIMES.get(name) if isinstance(name, str) else None
    if regime is None:
        raise RegimeError(f"unknown regime {name!r}; expected one of {', '.join(REGIMES)}")
    return regime


def validate_regime(regime: str) -> str:
    return get_regime(regime).name


register_regime(
    Regime(
        "L0",
        "clean: nothing changes; every entry stays true (our extension)",
        stream=10,
        draw=lambda g0, rng, budget: (g0, ()),
        clean=True,
    )
)
register_regime(
    Regime(
        "L1",
        f"scattered: {L1_CHANGES[0]}-{L1_CHANGES[1]} cells anywhere flip before navigation (8x8; scaled with the "
        "area on larger grids)",
        stream=11,
        draw=lambda g0, rng, budget: (l1_changes(g0, rng, budget), ()),
        table1=paper.TABLE1["L1"],
    )
)
register_regime(
    Regime(
        "L2",
        f"clustered: {L2_CHANGES[0]}-{L2_CHANGES[1]} flips in the radius-{L2_RADIUS} neighbourhood of one "
        "centre (8x8; more centres on larger grids), before navigation",
        stream=12,
        draw=lambda g0, rng, budget: (l2_changes(g0, rng, budget), ()),
        table1=paper.TABLE1["L2"],
    )
)
register_regime(
    Regime(
        "L3",
        f"online: every {L3_PERIOD} steps an event flips {L3_CELLS_PER_EVENT} cells (8x8; more on larger grids) "
        f"with probability {L3_FIRE_PROBABILITY}, during the episode",
        stream=13,
        draw=lambda g0, rng, budget: (g0, tuple(l3_schedule(g0, rng, budget))),
        windows=after_each_event,
        table1=paper.TABLE1["L3"],
    )
)
