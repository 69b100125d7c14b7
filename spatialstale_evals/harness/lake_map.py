"""The lake drawn as text for a reader of the log: one character per cell,
one row per grid row, under a line of column digits (the column mod 10).

``inspect view`` shows these maps in a sample's input (the lake as the agent
first sees it, beside the lake as its memory describes it) and in navigate's
score explanation (the trajectory). They are for people, never sent to a model.
"""

from __future__ import annotations

from collections.abc import Sequence

from spatialstale_evals.world.grid import FROZEN, GOAL, HOLE, START, UNSEEN
from spatialstale_evals.world.memory import SAFE, MemoryEntry

#: How a map draws each cell type (``?``: out of view, or no memory entry).
MAP_CELLS = {FROZEN: ".", HOLE: "H", START: "S", GOAL: "G", UNSEEN: "?"}
#: The legend of the maps ``lake_and_memory`` draws.
INPUT_LEGEND = "S start, G goal, . ice, H hole, ? out of view (lake) or no entry (memory)"


def draw(cells: Sequence[Sequence[str]]) -> list[str]:
    """``cells`` (one character each) as lines: the column digits, then each
    row under its row number."""
    pad = len(str(len(cells) - 1))
    header = " " * (pad + 1) + "".join(str(c % 10) for c in range(len(cells[0])))
    return [header, *(f"{r:>{pad}} " + "".join(row) for r, row in enumerate(cells))]


def lake_cells(grid: Sequence[str]) -> list[list[str]]:
    """The grid's cells as the maps draw them."""
    return [[MAP_CELLS[kind] for kind in row] for row in grid]


def memory_cells(memory: Sequence[MemoryEntry], grid: Sequence[str]) -> list[list[str]]:
    """The lake as ``memory`` describes it: a SAFE entry's cell ice, a DANGER
    entry's a hole, a cell without an entry ``?``; start and goal where ``grid`` has them."""
    cells = [[MAP_CELLS[UNSEEN]] * len(row) for row in grid]
    for entry in memory:
        if not entry.is_note:
            cells[entry.row][entry.col] = MAP_CELLS[FROZEN if entry.claim == SAFE else HOLE]
    for r, row in enumerate(grid):
        for c, kind in enumerate(row):
            if kind in (START, GOAL):
                cells[r][c] = MAP_CELLS[kind]
    return cells


def side_by_side(left: tuple[str, list[str]], right: tuple[str, list[str]], gap: int = 4) -> list[str]:
    """Two titled blocks of lines next to each other."""
    width = max(len(line) for line in [left[0], *left[1]]) + gap
    rows = max(len(left[1]), len(right[1]))
    lines_l, lines_r = [left[0], *left[1]], [right[0], *right[1]]
    lines_l += [""] * (rows + 1 - len(lines_l))
    lines_r += [""] * (rows + 1 - len(lines_r))
    return [f"{a:<{width}}{b}".rstrip() for a, b in zip(lines_l, lines_r)]


def lake_and_memory(
    grid: Sequence[str],
    memory: Sequence[MemoryEntry] | None,
    lake_title: str = "lake now",
    layout: Sequence[str] | None = None,
) -> str:
    """A fenced block: the lake (``grid``, ``?`` out of view) beside the lake
    as ``memory`` describes it (None: the lake alone), and the legend.
    ``layout``: the whole lake, where memory's map puts start and goal
    (default ``grid``: it must show them)."""
    lake = draw(lake_cells(grid))
    if memory is None:
        lines = [lake_title, *lake]
    else:
        lines = side_by_side((lake_title, lake), ("memory says", draw(memory_cells(memory, layout or grid))))
    return "```\n" + "\n".join(lines) + "\n```\n\n" + INPUT_LEGEND
