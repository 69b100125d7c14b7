"""Grids of the dynamic lake: cell types, generation, connectivity and flips.

A grid is an immutable tuple of row strings over ``S F H G``. Strings keep the
dataset files human-readable and make equality and hashing trivial; the few
hot paths (connectivity, rendering) are small enough that this costs nothing.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Iterable, Sequence

import numpy as np

Cell = tuple[int, int]
Grid = tuple[str, ...]

START, FROZEN, HOLE, GOAL = "S", "F", "H", "G"
CELL_TYPES = (START, FROZEN, HOLE, GOAL)
#: A cell out of the agent's view in a partial observation (exact: docs/specification.md#partial-observation).
UNSEEN = "?"
HOLE_FRACTION = 0.25
MIN_SIDE = 2
#: The longest grid side the world generates or loads (the canonical sets go to 32).
MAX_SIDE = 128

#: The move vocabulary, in the order the harness considers moves: neighbour
#: order (so breadth-first tie-breaks), the scripted agents' tie-breaks, the
#: exploration walks' draws and the ``move`` tool's list of directions. Datasets,
#: prompts and scores depend on this order. It is not the env's action-id
#: encoding, which is Gymnasium FrozenLake's (``env.ACTION_NAMES``).
MOVE_ORDER: tuple[str, ...] = ("UP", "DOWN", "LEFT", "RIGHT")
#: (row, column) change of each move.
DELTAS: dict[str, Cell] = {"UP": (-1, 0), "DOWN": (1, 0), "LEFT": (0, -1), "RIGHT": (0, 1)}

#: What a planner that may risk a cell of unknown type (``UNSEEN``) counts a
#: step onto one, in steps onto known ice: a route through known-safe cells is
#: preferred unless it is more than this many times longer.
UNKNOWN_COST = 3

#: Attempts before generation gives up; at a 0.25 hole rate a path exists in
#: well over half of 8x8 draws, so hitting this means the parameters are wrong.
MAX_REJECTIONS = 10_000


class GridError(ValueError):
    """A grid or a request for one breaks the world's rules."""


def validate_size(height: int, width: int) -> None:
    if not (isinstance(height, int) and isinstance(width, int)):
        raise GridError(f"grid size must be integers, got {height!r} x {width!r}")
    if height < MIN_SIDE or width < MIN_SIDE:
        raise GridError(
            f"grid must be at least {MIN_SIDE}x{MIN_SIDE} (S and G need distinct cells), got {height}x{width}"
        )
    if height > MAX_SIDE or width > MAX_SIDE:
        raise GridError(f"grid sides are at most {MAX_SIDE} cells, got {height}x{width}")


def start_of(grid: Sequence[str]) -> Cell:
    return (0, 0)


def goal_of(grid: Sequence[str]) -> Cell:
    return (len(grid) - 1, len(grid[0]) - 1)


def in_bounds(grid: Sequence[str], cell: Cell) -> bool:
    return 0 <= cell[0] < len(grid) and 0 <= cell[1] < len(grid[0])


def neighbours(grid: Sequence[str], cell: Cell) -> list[Cell]:
    """4-connected in-bounds neighbours in MOVE_ORDER."""
    out = []
    for move in MOVE_ORDER:
        dr, dc = DELTAS[move]
        nxt = (cell[0] + dr, cell[1] + dc)
        if in_bounds(grid, nxt):
            out.append(nxt)
    return out


def apply_move(grid: Sequence[str], cell: Cell, action: str) -> Cell:
    """Where a move leads; off-grid moves leave the agent in place."""
    dr, dc = DELTAS[action]
    nxt = (cell[0] + dr, cell[1] + dc)
    return nxt if in_bounds(grid, nxt) else cell


def shortest_path(grid: Sequence[str], src: Cell, dst: Cell) -> list[Cell] | None:
    """Breadth-first shortest path over non-hole cells, or None.

    Ties are broken by MOVE_ORDER, so the path is a deterministic function
    of the grid (scripted agents and tests rely on that). ``src`` itself may be
    a hole: an L3 thaw can open one under a standing agent, who may step off.
    """
    if grid[dst[0]][dst[1]] == HOLE:
        return None
    prev: dict[Cell, Cell | None] = {src: None}
    queue = deque([src])
    while queue:
        cur = queue.popleft()
        if cur == dst:
            path = [cur]
            while prev[path[-1]] is not None:
                path.append(prev[path[-1]])  # type: ignore[arg-type]
            return path[::-1]
        for nxt in neighbours(grid, cur):
            if nxt not in prev and grid[nxt[0]][nxt[1]] != HOLE:
                prev[nxt] = cur
                queue.append(nxt)
    return None


def cheapest_path(grid: Sequence[str], src: Cell, dst: Cell, unknown_cost: int = UNKNOWN_COST) -> list[Cell] | None:
    """The cheapest path over non-hole cells (Dijkstra), a step onto an unknown
    cell (``UNSEEN``) costing ``unknown_cost`` and onto any other 1, or None.

    Ties are broken by the order cells were reached (neighbours in
    ``MOVE_ORDER``), so the path is a deterministic function of the grid: the
    scripted agents of every family plan with it.
    """
    best: dict[Cell, int] = {src: 0}
    prev: dict[Cell, Cell] = {}
    heap, order = [(0, 0, src)], 1
    while heap:
        cost, _, cur = heapq.heappop(heap)
        if cur == dst:
            path = [cur]
            while path[-1] in prev:
                path.append(prev[path[-1]])
            return path[::-1]
        if cost > best[cur]:
            continue
        for nxt in neighbours(grid, cur):
            kind = grid[nxt[0]][nxt[1]]
            if kind == HOLE:
                continue
            step = cost + (unknown_cost if kind == UNSEEN else 1)
            if step < best.get(nxt, step + 1):
                best[nxt], prev[nxt] = step, cur
                heapq.heappush(heap, (step, order, nxt))
                order += 1
    return None


def first_move(path: Sequence[Cell] | None) -> str | None:
    """The move that takes the first step of ``path``; None for no path or one that stays put."""
    if not path or len(path) < 2:
        return None
    (r0, c0), (r1, c1) = path[0], path[1]
    return next(a for a, d in DELTAS.items() if d == (r1 - r0, c1 - c0))


def path_steps(grid: Sequence[str]) -> int | None:
    """Moves on the shortest safe path from start to goal (None: there is none)."""
    path = shortest_path(grid, start_of(grid), goal_of(grid))
    return None if path is None else len(path) - 1


def has_path(grid: Sequence[str], src: Cell | None = None, dst: Cell | None = None) -> bool:
    src = start_of(grid) if src is None else src
    dst = goal_of(grid) if dst is None else dst
    return shortest_path(grid, src, dst) is not None


def mutable_cells(grid: Sequence[str]) -> list[Cell]:
    """Cells that changes may touch: everything but S and G, row-major."""
    return [(r, c) for r in range(len(grid)) for c in range(len(grid[0])) if grid[r][c] in (FROZEN, HOLE)]


def flip_cells(grid: Sequence[str], cells: Iterable[Cell]) -> Grid:
    """Toggle F<->H at each cell (a cell listed twice flips back)."""
    rows = [list(row) for row in grid]
    for r, c in cells:
        kind = rows[r][c]
        if kind not in (FROZEN, HOLE):
            raise GridError(f"cell ({r},{c}) is {kind}; only F and H cells change")
        rows[r][c] = HOLE if kind == FROZEN else FROZEN
    return tuple("".join(row) for row in rows)


def generate_grid(height: int, width: int, rng: np.random.Generator) -> Grid:
    """Original grid g0: holes at HOLE_FRACTION, rejection-sampled for a path S->G."""
    validate_size(height, width)
    for _ in range(MAX_REJECTIONS):
        holes = rng.random((height, width)) < HOLE_FRACTION
        rows = ["".join(HOLE if holes[r, c] else FROZEN for c in range(width)) for r in range(height)]
        rows[0] = START + rows[0][1:]
        rows[-1] = rows[-1][:-1] + GOAL
        grid = tuple(rows)
        if has_path(grid):
            return grid
    raise GridError(f"no {height}x{width} grid with a path after {MAX_REJECTIONS} draws")


def validate_grid(grid: Sequence[str]) -> Grid:
    """Check shape and alphabet of a grid read from outside; return it as a tuple."""
    rows = tuple(grid)
    if not rows or not all(isinstance(row, str) for row in rows):
        raise GridError("grid must be a non-empty list of row strings")
    validate_size(len(rows), len(rows[0]))
    if any(len(row) != len(rows[0]) for row in rows):
        raise GridError("grid rows have different lengths")
    bad = set("".join(rows)) - set(CELL_TYPES)
    if bad:
        raise GridError(f"grid has unknown cell types {sorted(bad)}")
    if rows[0][0] != START or rows[-1][-1] != GOAL:
        raise GridError("grid must have S at (0,0) and G at the bottom-right corner")
    if "".join(rows).count(START) != 1 or "".join(rows).count(GOAL) != 1:
        raise GridError("grid must have exactly one S and one G")
    return rows


def greedy_direction(agent: Cell, goal: Cell) -> str:
    """The paper's fallback: one step toward the goal along the axis with the
    larger remaining distance (rows on a tie), blind to holes."""
    dr, dc = goal[0] - agent[0], goal[1] - agent[1]
    if dr == dc == 0:
        return "DOWN"
    if abs(dr) >= abs(dc):
        return "DOWN" if dr > 0 else "UP"
    return "RIGHT" if dc > 0 else "LEFT"
