"""The built-in scripted policies' reading of a prompt and their route:
``observer``, ``memory``, ``mixed`` and ``random`` (``spatialstale/<policy>``),
shared by the families whose turns they answer (detect's and navigate's
audits, navigate's, probe's and lifelong's moves, probe's questions: each
family's own reply is its ``scripted.py``, ``harness/scripted_turn.py`` the turn
they share; ``scripted/api.py`` routes a request to them).

They put model scores in context and drive the test suite. They see only what
a model sees: the prompt text and image. Each plans a shortest route on the
grid it believes in:

- ``observer`` believes the observation: the upper bound under full
  observability; under partial observability it knows only what it sees.
- ``memory`` believes its shown memory only (SAFE -> ice, DANGER -> hole) and
  never enters a cell it has no SAFE entry for: the pure "trust your memory"
  agent, whose deaths measure the stale-memory hazard of the instance set.
- ``mixed`` believes the observation where it sees and its memory view
  elsewhere: a careful agent with memory, the reference for partial
  observability. It reads the view's labels: an entry labelled contradicted
  (``filter_mode=history``) means the opposite of its claim; an UNKNOWN one
  (``mark``) means nothing; a corrected one (``correct``) is an entry like
  any other, with the corrected claim.
- ``random`` moves uniformly among moves that stay on the grid (the floor).

Cells believed unknown (``?``: out of view with no memory of them) are
passable for ``observer`` and ``mixed`` but cost ``world.grid.UNKNOWN_COST`` steps each,
so a route through known-safe cells is preferred; ``memory`` never enters them.
Without unknown cells (full observability) the route is the breadth-first
shortest path, ties broken by ``MOVE_ORDER``.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Sequence
from typing import NamedTuple

from spatialstale_evals.harness.observe import Prompt, read_grid
from spatialstale_evals.harness.prompts import (
    AUDIT_CONTINUOUS,
    AUDIT_EDIT,
    FILTER_HISTORY,
    FILTER_HISTORY_TRUTH,
    NAVIGATE_STEP,
    template_pattern,
)
from spatialstale_evals.world.grid import (
    CELL_TYPES,
    FROZEN,
    GOAL,
    HOLE,
    MOVE_ORDER,
    UNSEEN,
    Cell,
    Grid,
    apply_move,
    cheapest_path,
    first_move,
    in_bounds,
    shortest_path,
)
from spatialstale_evals.world.memory import DANGER, ENTRY_PATTERN, NOTE_PATTERN, flipped
from spatialstale_evals.world.observation import parse_position_line
from spatialstale_evals.world.staleness import hazard

#: The navigator's step line, read with the pattern of the template that writes it.
_STEP = template_pattern(NAVIGATE_STEP.split("\n", 1)[0])
#: The ``history`` labels of a contradicted entry (by an observation, by the ground truth), likewise.
_CONTRADICTED = [template_pattern(label) for label in (FILTER_HISTORY, FILTER_HISTORY_TRUTH)]
#: The line of the continuous-output request that names its field (``audit.REQUESTS``).
_CONTINUOUS = next(line for line in AUDIT_CONTINUOUS.splitlines() if line.startswith('"staleness"'))
#: The line of the edit request that asks for the corrected claim, likewise.
_EDIT = next(line for line in AUDIT_EDIT.splitlines() if line.startswith('"corrected"'))
#: What each planner may step on: the observed safe types, and unknown cells at a cost.
SEEN_SAFE = {kind for kind in CELL_TYPES if not hazard(kind)}


class Entry(NamedTuple):
    """One memory entry of a prompt: its id, claim, cell, and whether its label says it is contradicted."""

    id: str
    claim: str
    cell: Cell
    contradicted: bool


def position(prompt: Prompt) -> tuple[Cell, Cell]:
    """(agent, goal) from the navigator's step line or the observation's position line."""
    match = _STEP.search(prompt.text)
    if match:
        return (int(match["row"]), int(match["col"])), (int(match["goal_row"]), int(match["goal_col"]))
    found = parse_position_line(prompt.text)
    if found is None:
        raise ValueError("prompt states no position")
    return found


def entries(prompt: Prompt) -> list[Entry]:
    """Every memory entry in the prompt (an UNKNOWN one has no claim and is not
    one), read with the pattern of the entry format (``world/memory.py``)."""
    return [
        Entry(
            m.group("id"),
            m.group("claim"),
            (int(m.group("row")), int(m.group("col"))),
            any(label.search(m.group("desc")) for label in _CONTRADICTED),
        )
        for m in ENTRY_PATTERN.finditer(prompt.text)
    ]


def _rng(seed: int, *parts: object) -> random.Random:
    digest = hashlib.sha256(repr((seed, *parts)).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def audit_reply(policy: str, prompt: Prompt, seed: int = 0, salt: object = None) -> str:
    """A JSON audit of every entry in the prompt: a cell entry judged against
    the grid the policy reads, a distractor note (about no cell) as valid by
    every policy but ``random``, which flips a coin on everything. Asked for
    edits, a stale verdict proposes the opposite claim (what the grid read
    shows: the perfect editor, for ``observer``)."""
    continuous, edit = _CONTINUOUS in prompt.text, _EDIT in prompt.text
    rng = _rng(seed, salt, prompt.text)
    grid = read_grid(prompt) if policy != "random" else None
    items = []
    for eid, claim, (r, c), _ in entries(prompt):
        if grid is None:
            stale = rng.random() < 0.5
        else:
            stale = (claim == DANGER) != (grid[r][c] == HOLE)
        item: dict[str, object] = {"memory_id": eid}
        if continuous:
            item["staleness"] = 1.0 if stale else 0.0
        else:
            item["is_stale"] = stale
            if edit:
                item["corrected"] = flipped(claim) if stale else None
            item["confidence"] = 1.0
        item["reasoning"] = f"({r},{c}) is {'not ' if not stale else ''}changed"
        items.append(item)
    for match in NOTE_PATTERN.finditer(prompt.text):
        stale = grid is None and rng.random() < 0.5
        verdict: dict[str, object] = {"staleness": float(stale)} if continuous else {"is_stale": stale}
        if edit:
            verdict["corrected"] = None
        if not continuous:
            verdict["confidence"] = 1.0
        items.append({"memory_id": match["id"], **verdict, "reasoning": "a note about no cell"})
    return json.dumps(items)


def _stay_safe(grid: Sequence[str], agent: Cell, passable: set[str]) -> str:
    """No route: bump a wall if one is adjacent (stay put), else step to the
    first passable neighbour, in ``MOVE_ORDER``, else UP."""
    for action in MOVE_ORDER:
        if apply_move(grid, agent, action) == agent:
            return action
    for action in MOVE_ORDER:
        r, c = apply_move(grid, agent, action)
        if grid[r][c] in passable:
            return action
    return MOVE_ORDER[0]


def memory_belief(prompt: Prompt, height: int, width: int, goal: Cell, read_labels: bool = False) -> Grid:
    """The grid as the shown memory describes it: SAFE -> F, DANGER -> H, no
    entry -> '?'. With ``read_labels`` an entry labelled contradicted counts
    as the opposite claim."""
    cells = [[UNSEEN] * width for _ in range(height)]
    for entry in entries(prompt):
        r, c = entry.cell
        if in_bounds(cells, (r, c)):  # type: ignore[arg-type]
            danger = (entry.claim == DANGER) != (read_labels and entry.contradicted)
            cells[r][c] = HOLE if danger else FROZEN
    cells[goal[0]][goal[1]] = GOAL
    return tuple("".join(row) for row in cells)


def overlay(seen: Grid, belief: Grid) -> Grid:
    """What is seen, and the belief where nothing is."""
    return tuple("".join(b if s == UNSEEN else s for s, b in zip(srow, brow)) for srow, brow in zip(seen, belief))


def plan(belief: Grid, agent: Cell, goal: Cell, passable: set[str]) -> str:
    """The first move of the agent's route on ``belief`` (unknown cells are
    passable at a cost when ``passable`` has ``?``), or a safe stay."""
    blocked = tuple("".join(k if k in passable else HOLE for k in row) for row in belief)
    if UNSEEN in passable and any(UNSEEN in row for row in blocked):
        path = cheapest_path(blocked, agent, goal)
    else:
        path = shortest_path(blocked, agent, goal)
    return first_move(path) or _stay_safe(blocked, agent, passable - {UNSEEN})


def random_move(prompt: Prompt, observed: Grid, agent: Cell, seed: int, salt: object) -> str:
    """A uniform move among those that stay on the grid (the floor)."""
    legal = [a for a in MOVE_ORDER if apply_move(observed, agent, a) != agent]
    return _rng(seed, salt, prompt.text).choice(legal)


def observer_belief(prompt: Prompt, observed: Grid, goal: Cell) -> Grid:
    return observed


def mixed_belief(prompt: Prompt, observed: Grid, goal: Cell) -> Grid:
    return overlay(observed, memory_belief(prompt, len(observed), len(observed[0]), goal, read_labels=True))


def memory_only_belief(prompt: Prompt, observed: Grid, goal: Cell) -> Grid:
    return memory_belief(prompt, len(observed), len(observed[0]), goal)


#: Each planning agent: the grid it believes in, and what it steps on (the
#: memory agent's belief writes every SAFE claim, the start's too, as ice).
BELIEFS: dict[str, tuple[Callable[[Prompt, Grid, Cell], Grid], set[str]]] = {
    "observer": (observer_belief, SEEN_SAFE | {UNSEEN}),
    "memory": (memory_only_belief, {FROZEN, GOAL}),
    "mixed": (mixed_belief, SEEN_SAFE | {UNSEEN}),
}
#: Every scripted agent (``spatialstale/<policy>``).
POLICIES = (*BELIEFS, "random")


def move_choice(policy: str, prompt: Prompt, seed: int = 0, salt: object = None) -> str:
    """The direction the policy moves in."""
    agent, goal = position(prompt)
    observed = read_grid(prompt)
    if policy not in BELIEFS:
        return random_move(prompt, observed, agent, seed, salt)
    believe, passable = BELIEFS[policy]
    return plan(believe(prompt, observed, goal), agent, goal, passable)


def believed_safe(policy: str, prompt: Prompt, cell: Cell, seed: int, salt: object) -> bool:
    """Whether the policy would step on ``cell``: on its belief (observer: the
    observation, memory: its entries, mixed: both), or a coin for ``random``."""
    if policy not in BELIEFS:
        return _rng(seed, salt, prompt.text).random() < 0.5
    _, goal = position(prompt)
    believe, passable = BELIEFS[policy]
    return believe(prompt, read_grid(prompt), goal)[cell[0]][cell[1]] in passable - {UNSEEN}


#: The policies that use memory, so read it when it is behind the memory tool.
READS_MEMORY = ("memory", "mixed")
