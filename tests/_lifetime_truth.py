"""What a lifelong episode's scores should be, computed from the lifetime data
and the trajectories the agent walked, written here and not from the package
(the tests compare two codings): what the agent saw, its knowable cells by
class, the balanced share of them some notes tell right, the safe shortest
path (a BFS of its own) and SPL."""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any

Cell = tuple[int, int]


def saw(world: Any, record: Mapping[str, Any], radius: int | None) -> dict[Cell, str]:
    """What the agent was shown in one episode: the window around it before
    each move, on the lake of that moment, and the cell it died in (a hole)."""
    seen: dict[Cell, str] = {}
    for i in range(len(record["actions"])):
        ar, ac = record["trajectory"][i]
        grid = world.grid_at(i)
        for r in range(len(grid)):
            for c in range(len(grid[0])):
                if radius is None or (abs(r - ar) <= radius and abs(c - ac) <= radius):
                    seen[(r, c)] = grid[r][c]
    if record["outcome"] == "death":
        seen[tuple(record["death_cell"])] = "H"
    return seen


def knowable_by_episode(life: Any, records: list[Mapping[str, Any]], radius: int | None) -> list[dict[Cell, str]]:
    """Per episode (from 1): the cells seen in earlier episodes, each with its type at its last sighting."""
    out, last = [], {}
    for record, world in zip(records, life.episodes):
        out.append(dict(last))
        last |= saw(world, record, radius)
    return out


def classes(grid: Any, cells: Iterable[Cell]) -> dict[str, set[Cell]]:
    """The cells by their class on ``grid`` now: SAFE (anything but a hole) and HOLE."""
    out: dict[str, set[Cell]] = {"SAFE": set(), "HOLE": set()}
    for r, c in cells:
        out["HOLE" if grid[r][c] == "H" else "SAFE"].add((r, c))
    return out


def told_counts(grid: Any, knowable: Iterable[Cell], told: Mapping[Cell, set[str]]) -> dict[str, tuple[int, int]]:
    """Per class (SAFE, HOLE) of the knowable cells on ``grid`` now: (cells
    whose claims ``told`` are exactly their class, cells of the class)."""
    return {
        name: (sum(told.get(cell, set()) == {name} for cell in cells), len(cells))
        for name, cells in classes(grid, knowable).items()
    }


def balanced(counts: Iterable[Mapping[str, tuple[int, int]]]) -> float:
    """The mean over the classes with a knowable cell of told / knowable,
    pooled over ``counts`` (NaN when no class has one)."""
    pooled = {name: [0, 0] for name in ("SAFE", "HOLE")}
    for c in counts:
        for name, (told, n) in c.items():
            pooled[name][0] += told
            pooled[name][1] += n
    shares = [told / n for told, n in pooled.values() if n]
    return sum(shares) / len(shares) if shares else math.nan


def bfs_steps(grid: Any) -> int | None:
    """Moves on a shortest path from S (top left) to G (bottom right) over non-hole cells."""
    h, w = len(grid), len(grid[0])
    start, goal = (0, 0), (h - 1, w - 1)
    dist, queue = {start: 0}, deque([start])
    while queue:
        r, c = queue.popleft()
        if (r, c) == goal:
            return dist[(r, c)]
        for nr, nc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
            if 0 <= nr < h and 0 <= nc < w and (nr, nc) not in dist and grid[nr][nc] != "H":
                dist[(nr, nc)] = dist[(r, c)] + 1
                queue.append((nr, nc))
    return None


def spl_and_excess(world: Any, record: Mapping[str, Any]) -> tuple[float, int | None]:
    """An episode's SPL and excess steps from its trajectory (it succeeded
    when it ended on the goal; each move is one step) and the BFS on its start lake."""
    grid = world.grid
    steps = len(record["trajectory"]) - 1
    success = tuple(record["trajectory"][-1]) == (len(grid) - 1, len(grid[0]) - 1)
    shortest = bfs_steps(grid)
    assert shortest is not None
    return (shortest / max(shortest, steps) if success else 0.0), (steps - shortest if success else None)
