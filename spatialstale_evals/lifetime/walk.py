"""The reference walk of a lifetime, simulated on the lakes without any model
call: how many steps each episode takes an agent that sees only its window
and keeps notes, and how many cells its notes hold at each episode start.
The cost model (``cost.py``) counts a lifetime's requests from it.

The agent plans as the scripted ``diligent`` does (``scripted.route``): the
cheapest route on what it saw in this episode, its notes outside that,
unknown cells at a higher cost, holes never; when that leaves no way, on what
it saw alone. Its notes after each episode are every cell it knows, each as
last seen (``diligent``'s write-back), so under a changing regime they hold
stale cells that cost detours, as its real notes do. Steps follow the env's
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


def reference_walks(life: Lifetime, episodes: int, radius: int | None, max_steps: int | None = None) -> list[Walk]:
    """The first ``episodes`` episodes of ``life`` as the reference agent walks
    them at view radius ``radius`` (None: the whole lake) with ``max_steps``
    steps each (None: the lifetime's budget)."""
    shape = (life.height, life.width)
    budget = max_steps or life.max_steps
    notes: dict[Cell, str] = {}
    walks = []
    for world in life.episodes[:episodes]:
        goal = goal_of(world.grid)
        agent, seen, steps, outcome = (0, 0), {}, 0, "timeout"
        while steps < budget:
            grid = world.grid_at(steps)
            seen |= {
                (r, c): kind
                for r, row in enumerate(grid)
                for c, kind in enumerate(row)
                if in_view(agent, (r, c), radius)
            }
            moved = apply_move(grid, agent, route(notes | seen, seen, shape, agent, goal))
            steps += 1
            kind = grid[moved[0]][moved[1]]
            if kind == HOLE and moved != agent:
                seen[moved], outcome = HOLE, "death"
                break
            agent = moved
            if kind == GOAL:
                outcome = "success"
                break
        walks.append(Walk(steps=steps, outcome=outcome, noted=len(notes), noted_after=len(notes | seen)))
        notes |= seen
    return walks
