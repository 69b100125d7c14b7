"""Trivial note writers for the ``lifelong`` task, as Inspect agents for
``lifelong_with_agent``: the yardstick's test agents (``tests/test_lifelong_scores.py``,
``benchmarks/lifelong_scores.py``).

Each walks the cheapest route on what it saw in this episode (the scripted
agents' ``route``, unknown cells at a higher cost, holes never) and, when the
episode is over, leaves notes of its kind in ``/memories/lake.md``:

- ``constant_safe`` / ``constant_hole``: one claim, the same, for every cell of the lake;
- ``view_only``: only its last view, each cell as it was, everything else dropped;
- ``two_lines``: ``SAFE at`` the start and the goal, nothing else;
- ``nothing``: no notes at all.

They never read their notes, so they all walk the same way: the runs differ
only in what the notes say.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspect_ai.agent import AgentState

from spatialstale_evals.lifetime.scripted import route
from spatialstale_evals.world.observation import parse_text_observation

NOTES = "/memories/lake.md"
WRITERS = ("constant_safe", "constant_hole", "view_only", "two_lines", "nothing")
Cell = tuple[int, int]


def _view(text: str) -> tuple[dict[tuple[int, int], str], tuple[int, int], tuple[int, int], tuple[int, int]] | None:
    try:
        grid, agent, goal = parse_text_observation(text)
    except ValueError:
        return None
    cells = {(r, c): k for r, row in enumerate(grid) for c, k in enumerate(row) if k != "?"}
    return cells, (len(grid), len(grid[0])), agent, goal


def _notes(kind: str, last_view: dict[tuple[int, int], str], shape: tuple[int, int]) -> str:
    every = [(r, c) for r in range(shape[0]) for c in range(shape[1])]
    if kind == "constant_safe":
        return "".join(f"SAFE at ({r},{c})\n" for r, c in every)
    if kind == "constant_hole":
        return "".join(f"HOLE at ({r},{c})\n" for r, c in every)
    if kind == "two_lines":
        return f"SAFE at (0,0)\nSAFE at ({shape[0] - 1},{shape[1] - 1})\n"
    return "".join(f"{'HOLE' if k == 'H' else 'SAFE'} at ({r},{c})\n" for (r, c), k in sorted(last_view.items()))


def writer(kind: str) -> Callable[[list[Any]], Any]:
    if kind not in WRITERS:
        raise ValueError(f"no writer {kind!r}; known: {', '.join(WRITERS)}")
    return _factory(kind)


def _factory(kind: str) -> Callable[[list[Any]], Any]:
    """An agent that walks the cheapest route on what it saw this episode and,
    when the episode is over, leaves the notes of its ``kind``."""

    def factory(tools: list[Any]) -> Any:
        move, memory = tools

        async def agent(state: AgentState) -> AgentState:
            found = _view(state.messages[-1].text)
            seen: dict[tuple[int, int], str] = {}
            while found is not None:
                view, shape, at, goal = found
                seen |= view
                found = _view(str(await move(direction=route(seen, seen, shape, at, goal))))
            if kind != "nothing":
                await memory(command="create", path=NOTES, file_text=_notes(kind, view, shape))
            return state

        return agent

    return factory
