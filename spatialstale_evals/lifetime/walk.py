"""The reference walk of a lifetime, simulated on the lakes without any model
call: how many steps each episode takes an agent that sees only its window
and keeps notes, and how many cells its notes hold at each episode start.
The cost model (``cost.py``) counts a lifetime's requests from it.

The agent plans as the scripted ``diligent`` does (``scripted.route``): the
cheapest route on what it saw in this episode, its notes outside that,
unknown cells at a higher cost, holes never; when that leaves no way, on what
it saw alone. Its notes after each episode are every cell it knows, each as
last seen (``diligent``'s write-back), so under a changing regime they hold
stale cells that cost detours, as its real notes do. With a short
``history`` it forgets what the dropped turns showed, as ``diligent`` does. Steps follow the env's
rules (``world/env.py``): entering a hole ends the episode, so does the goal
or the step budget, and an L3 event flips its cells after the move of its
step (``EpisodeWorld.grid_at``).
"""

from __future__ import annotations

from dataclasses import dataclass

from spatialstale_evals.lifetime.scripted import route
from spatialstale_evals.world.grid import GOAL, HOLE, Cell, apply_move, goal_of
from spatialstale_evals.world.lifetimes import Lifetime
from spatialstale_evals.world.observation import in_view


@dataclass(frozen=True)
class Walk:
    """One episode of the reference walk."""

    steps: int
    outcome: str
    #: Cells the notes hold as the episode starts (0 in the first).
    noted: int
    #: Cells the notes hold after its write-back.
    noted_after: int
    #: Views of the notes: one as the episode starts, again whenever ``history`` dropped the last.
    views: int = 1
    #: Whether the write-back wrote the notes (it cannot without a sighting in its context).
    writes: bool = True


def _merged(turns: list[dict[Cell, str]]) -> dict[Cell, str]:
    seen: dict[Cell, str] = {}
    for turn in turns:
        seen |= turn
    return seen


def reference_walks(
    life: Lifetime, episodes: int, radius: int | None, max_steps: int | None = None, history: int | None = None
) -> list[Walk]:
    """The first ``episodes`` episodes of ``life`` as the reference agent walks
    them at view radius ``radius`` (None: the whole lake) with ``max_steps``
    steps each (None: the lifetime's budget), keeping ``history`` earlier turns
    of the episode in its context (None: all of them). What it saw in a turn
    the history dropped is forgotten; it views its notes again when the last
    view was dropped; its write-back rewrites the notes from what its context
    still holds (the notes only if a view is among the kept turns), and
    writes nothing when the context holds no sighting at all."""
    shape = (life.height, life.width)
    budget = max_steps or life.max_steps
    notes: dict[Cell, str] = {}
    walks = []
    for world in life.episodes[:episodes]:
        goal = goal_of(world.grid)
        agent, steps, outcome = (0, 0), 0, "timeout"
        turns: list[dict[Cell, str]] = []  # what each step's prompt showed (a death: its cell as a hole)
        viewed: list[bool] = []  # whether each step's turn viewed the notes
        while steps < budget:
            kept = slice(0 if history is None else max(0, steps - history), steps)
            grid = world.grid_at(steps)
            turns.append(
                {
                    (r, c): kind
                    for r, row in enumerate(grid)
                    for c, kind in enumerate(row)
                    if in_view(agent, (r, c), radius)
                }
            )
            viewed.append(not any(viewed[kept]))
            seen = _merged(turns[kept] + turns[-1:])
            moved = apply_move(grid, agent, route(notes | seen, seen, shape, agent, goal))
            steps += 1
            kind = grid[moved[0]][moved[1]]
            if kind == HOLE and moved != agent:
                turns[-1][moved], outcome = HOLE, "death"
                break
            agent = moved
            if kind == GOAL:
                outcome = "success"
                break
        kept = slice(0 if history is None else max(0, steps - history), steps)
        remembered = _merged(turns[kept])
        after = ((notes if any(viewed[kept]) else {}) | remembered) if remembered else notes
        walks.append(
            Walk(
                steps=steps,
                outcome=outcome,
                noted=len(notes),
                noted_after=len(after),
                views=sum(viewed),
                writes=bool(remembered),
            )
        )
        notes = after
    return walks
