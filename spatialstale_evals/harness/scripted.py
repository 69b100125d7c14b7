"""Scripted reference agents: deterministic policies that read our prompts the
way a model would and answer audits and ``move`` calls.

They put model scores in context (``observer`` is the upper bound, ``memory``
the pure "trust your memory" agent, ``random`` the floor) and drive the test
suite. They see only what a model sees: the prompt text and image.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Sequence

from spatialstale_evals.harness.observe import Prompt, read_grid
from spatialstale_evals.harness.prompts import NAVIGATE_STEP, template_pattern
from spatialstale_evals.world.grid import (
    ACTIONS,
    DELTAS,
    FROZEN,
    HOLE,
    Cell,
    apply_move,
    in_bounds,
    shortest_path,
)
from spatialstale_evals.world.memory import DANGER, ENTRY_PATTERN
from spatialstale_evals.world.observation import parse_position_line

POLICIES = ("observer", "memory", "random")
#: The navigator's step line, read with the pattern of the template that writes it.
_STEP = template_pattern(NAVIGATE_STEP.split("\n", 1)[0])


def position(prompt: Prompt) -> tuple[Cell, Cell]:
    """(agent, goal) from the navigator's step line or the observation's position line."""
    match = _STEP.search(prompt.text)
    if match:
        return (int(match["row"]), int(match["col"])), (int(match["goal_row"]), int(match["goal_col"]))
    found = parse_position_line(prompt.text)
    if found is None:
        raise ValueError("prompt states no position")
    return found


def entries(prompt: Prompt) -> list[tuple[str, str, Cell]]:
    """(id, claim, cell) of every memory entry in the prompt, read with the
    pattern of the entry format (``world/memory.py``)."""
    return [
        (m.group("id"), m.group("claim"), (int(m.group("row")), int(m.group("col"))))
        for m in ENTRY_PATTERN.finditer(prompt.text)
    ]


def _rng(seed: int, *parts: object) -> random.Random:
    digest = hashlib.sha256(repr((seed, *parts)).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def audit_reply(policy: str, prompt: Prompt, seed: int = 0, salt: object = None) -> str:
    """A JSON audit of every entry in the prompt."""
    continuous = '"staleness"' in prompt.text
    rng = _rng(seed, salt, prompt.text)
    grid = read_grid(prompt) if policy != "random" else None
    items = []
    for eid, claim, (r, c) in entries(prompt):
        if grid is None:
            stale = rng.random() < 0.5
        else:
            stale = (claim == DANGER) != (grid[r][c] == HOLE)
        item: dict[str, object] = {"memory_id": eid}
        if continuous:
            item["staleness"] = 1.0 if stale else 0.0
        else:
            item["is_stale"] = stale
            item["confidence"] = 1.0
        item["reasoning"] = f"({r},{c}) is {'not ' if not stale else ''}changed"
        items.append(item)
    return json.dumps(items)


def _first_step(path: list[Cell] | None) -> str | None:
    if not path or len(path) < 2:
        return None
    (r0, c0), (r1, c1) = path[0], path[1]
    return next(a for a, d in DELTAS.items() if d == (r1 - r0, c1 - c0))


def _stay_safe(grid: Sequence[str], agent: Cell, passable: set[str]) -> str:
    """No route: bump a wall if one is adjacent (stay put), else step to the
    first passable neighbour, else UP."""
    for action in ACTIONS:
        if apply_move(grid, agent, action) == agent:
            return action
    for action in ACTIONS:
        r, c = apply_move(grid, agent, action)
        if grid[r][c] in passable:
            return action
    return ACTIONS[0]


def memory_belief(prompt: Prompt, height: int, width: int, goal: Cell) -> tuple[str, ...]:
    """The grid as the shown memory describes it: SAFE -> F, DANGER -> H, no
    entry -> '?' (not planned through)."""
    cells = [["?"] * width for _ in range(height)]
    for _, claim, (r, c) in entries(prompt):
        if in_bounds(cells, (r, c)):  # type: ignore[arg-type]
            cells[r][c] = HOLE if claim == DANGER else FROZEN
    cells[goal[0]][goal[1]] = "G"
    return tuple("".join(row) for row in cells)


def move_choice(policy: str, prompt: Prompt, seed: int = 0, salt: object = None) -> str:
    """The direction the policy moves in."""
    agent, goal = position(prompt)
    observed = read_grid(prompt)
    if policy == "random":
        legal = [a for a in ACTIONS if apply_move(observed, agent, a) != agent]
        return _rng(seed, salt, prompt.text).choice(legal)
    if policy == "observer":
        plan_on, passable = observed, {"S", "F", "G"}
    else:
        plan_on = memory_belief(prompt, len(observed), len(observed[0]), goal)
        passable = {"F", "G"}
    blocked = tuple("".join(k if k in passable else HOLE for k in row) for row in plan_on)
    step = _first_step(shortest_path(blocked, agent, goal))
    return step or _stay_safe(blocked, agent, passable)
