"""The text observation (exact: docs/specification.md#observations) and its inverse.

The inverse exists for the scripted reference agents and the tests: anything
that reads our prompts must recover the grid exactly as a model would.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from spatialstale_evals.world.grid import UNSEEN, Cell, Grid, goal_of

_CELL = re.compile(r"\((\d+),(\d+)\)=([SFHG?])")
_ROW = re.compile(r"^Row (\d+): (.*)$", re.MULTILINE)
_AGENT = re.compile(r"Agent at \((\d+),(\d+)\)\. Goal at \((\d+),(\d+)\)\.")


def position_line(agent: Cell, goal: Cell) -> str:
    """``Agent at (r,c). Goal at (r,c).``: the observation's last line (also the
    image caption's, where there are no row lines)."""
    return f"Agent at ({agent[0]},{agent[1]}). Goal at ({goal[0]},{goal[1]})."


def parse_position_line(text: str) -> tuple[Cell, Cell] | None:
    """(agent, goal) from the first position line in ``text``, if any."""
    match = _AGENT.search(text)
    if match is None:
        return None
    a_r, a_c, g_r, g_c = (int(x) for x in match.groups())
    return (a_r, a_c), (g_r, g_c)


def in_view(agent: Cell, cell: Cell, radius: int | None) -> bool:
    """Whether ``cell`` lies in the agent's view: the Chebyshev window of
    ``radius`` around it (a (2r+1) x (2r+1) square clipped to the grid), or
    everywhere when ``radius`` is None (the paper's full observability)."""
    return radius is None or max(abs(cell[0] - agent[0]), abs(cell[1] - agent[1])) <= radius


def covers_grid(height: int, width: int, radius: int | None) -> bool:
    """A radius that reaches every cell from every position is full observability."""
    return radius is None or radius >= max(height, width) - 1


def visible_grid(grid: Sequence[str], agent: Cell, radius: int | None) -> Grid:
    """The grid as the agent sees it: every cell out of view shown as ``?``."""
    if radius is None:  # full observability: every cell in view, at every step
        return tuple(grid)
    return tuple(
        "".join(kind if in_view(agent, (r, c), radius) else UNSEEN for c, kind in enumerate(row))
        for r, row in enumerate(grid)
    )


def text_observation(grid: Sequence[str], agent: Cell) -> str:
    """``Row r: (r,0)=S (r,1)=F ...`` per row, then the agent/goal line.

    The agent's cell shows its underlying type (the paper scores the cell, not
    a player marker).
    """
    lines = [f"Row {r}: " + " ".join(f"({r},{c})={row[c]}" for c in range(len(row))) for r, row in enumerate(grid)]
    lines.append(position_line(agent, goal_of(grid)))
    return "\n".join(lines)


def parse_text_observation(text: str) -> tuple[Grid, Cell, Cell]:
    """Recover (grid, agent, goal) from a text observation embedded in any text."""
    rows: dict[int, dict[int, str]] = {}
    for match in _ROW.finditer(text):
        r = int(match.group(1))
        for cr, cc, kind in _CELL.findall(match.group(2)):
            if int(cr) == r:
                rows.setdefault(r, {})[int(cc)] = kind
    if not rows:
        raise ValueError("no 'Row r: ...' lines in text")
    height = max(rows) + 1
    width = max(max(cols) for cols in rows.values()) + 1
    grid = tuple("".join(rows[r][c] for c in range(width)) for r in range(height))
    position = parse_position_line(text)
    if position is None:
        raise ValueError("no 'Agent at (r,c). Goal at (r,c).' line in text")
    return grid, *position
