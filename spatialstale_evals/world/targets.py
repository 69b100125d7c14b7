"""The cells the ``probe`` task asks about (docs/specification.md#probe), chosen from the instance alone.

A probe asks about one memory entry at the **final grid** (every change and,
under L3, every scheduled event applied) with the agent at the start: the
moment every entry's truth is settled, the same for every regime. Four kinds
of target, by the entry's claim and the cell's truth then:

- ``stale_thaw``: SAFE over a cell that is now a hole (F -> H);
- ``stale_freeze``: DANGER over a cell that is now ice (H -> F);
- ``valid_safe``: SAFE over ice that is still ice (never S or G: they cannot change);
- ``valid_danger``: DANGER over a hole that is still a hole.

The valid kinds are the controls, as many as the stale targets with the same
claim (on an instance with nothing stale, such as L0's, up to the per-kind
number of each): "always DANGER" or "reject every premise" scores at chance,
not 1.0, and an agent that believes memory scores exactly 0.5 balanced. Within a kind, cells are taken nearest the
**memory route** first (the shortest path from S to G through the cells memory
calls SAFE, ``memory_route``; on it, then next to it, ...), then by row and
column, so the probes are about cells that matter for acting; for the SAFE
claims, cells with an implicit placement (below) come before those without,
so that all three dimensions ask about the same cells wherever they can.

The ``implicit`` probe stands the agent on a **placement** next to the target
(``placements``), from which the memory route's next step is the target. Only
SAFE claims can be a route step, so it has ``stale_thaw`` targets (pass: not
stepping into the hole) and ``valid_safe`` controls (pass: taking the step).
For a control the step must also be the only shortest move on the true grid,
so an agent that simply avoids the target fails it and one that reads the
observation passes. Placements are **paired by move**: each placed thaw
target has a control placed for the same move (UP, DOWN, LEFT or RIGHT;
``match_moves``), so on every instance the implicit probe asks each move of
the thaw targets exactly as often as of the controls, and an agent that moves
without looking (always RIGHT, or at random) scores 0.5 balanced. Routes run
from S at the top left to G at the bottom right, so most steps are DOWN or
RIGHT; unpaired, the thaw targets' placements leaned DOWN and the controls'
RIGHT, which a blind mover could exploit. A target without a paired placement
is skipped (counted), thaw target and control alike.
Freeze targets are left out of ``implicit``: memory routes around a DANGER
claim, so no placement makes the newly safe cell "the next step of memory's
route", and no single move shows that the agent noticed it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal, get_args

from spatialstale_evals.world.grid import (
    DELTAS,
    FROZEN,
    GOAL,
    HOLE,
    MOVE_ORDER,
    Cell,
    Grid,
    goal_of,
    in_bounds,
    neighbours,
    shortest_path,
    start_of,
)
from spatialstale_evals.world.instance import Instance
from spatialstale_evals.world.memory import DANGER, SAFE, MemoryEntry

TargetKind = Literal["stale_thaw", "stale_freeze", "valid_safe", "valid_danger"]
KINDS: tuple[TargetKind, ...] = get_args(TargetKind)
#: The kinds whose entry is stale now; the others are the controls.
STALE_KINDS: tuple[TargetKind, ...] = ("stale_thaw", "stale_freeze")
#: The kinds the implicit probe can place (SAFE claims: a route can step on them).
ROUTE_KINDS: tuple[TargetKind, ...] = ("stale_thaw", "valid_safe")
#: The kinds whose cell is safe to step on now (the others are holes now).
SAFE_NOW_KINDS: tuple[TargetKind, ...] = ("stale_freeze", "valid_safe")
#: Each control kind and the stale kind with the same claim it is matched to.
CONTROL_OF: dict[TargetKind, TargetKind] = {"valid_safe": "stale_thaw", "valid_danger": "stale_freeze"}


@dataclass(frozen=True)
class Target:
    """One probed entry: its kind, the truth now (is the cell safe to step
    on?), its distance from the memory route, and where the implicit probe
    stands the agent (None: no legal placement)."""

    entry: MemoryEntry
    kind: TargetKind
    safe_now: bool
    route_distance: int
    placement: Cell | None

    @property
    def cell(self) -> Cell:
        return self.entry.cell

    def to_json(self) -> dict:
        return {
            "memory_id": self.entry.id,
            "cell": list(self.cell),
            "kind": self.kind,
            "claim": self.entry.claim,
            "safe_now": self.safe_now,
            "route_distance": self.route_distance,
            "placement": list(self.placement) if self.placement else None,
        }


def kind_of(entry: MemoryEntry, grid: Sequence[str]) -> TargetKind | None:
    """The target kind of a cell entry on ``grid``; None for S, G and notes."""
    if entry.is_note:
        return None
    now = grid[entry.row][entry.col]
    if now not in (FROZEN, HOLE):
        return None
    safe_now = now == FROZEN
    if entry.claim == SAFE:
        return "valid_safe" if safe_now else "stale_thaw"
    if entry.claim == DANGER:
        return "stale_freeze" if safe_now else "valid_danger"
    return None


def memory_grid(memory: Sequence[MemoryEntry], grid: Sequence[str]) -> Grid:
    """The lake as memory describes it: SAFE -> F, DANGER -> H (the goal stays
    G). The belief the scripted ``memory`` agent plans on, cell for cell."""
    rows = [[HOLE] * len(grid[0]) for _ in grid]
    for e in memory:
        if not e.is_note and in_bounds(grid, e.cell):
            rows[e.row][e.col] = FROZEN if e.claim == SAFE else HOLE
    gr, gc = goal_of(grid)
    rows[gr][gc] = GOAL
    return tuple("".join(row) for row in rows)


def memory_route(memory: Sequence[MemoryEntry], grid: Sequence[str]) -> list[Cell]:
    """The shortest path from S to G through cells memory calls SAFE (ties by
    action order, as ``grid.shortest_path``); empty when memory shows none."""
    return shortest_path(memory_grid(memory, grid), start_of(grid), goal_of(grid)) or []


def distances(grid: Sequence[str], sources: Sequence[Cell], passable: bool = False) -> dict[Cell, int]:
    """Breadth-first steps from the nearest of ``sources``: over every cell
    (``passable=False``, a distance on the board) or over non-hole cells only."""
    dist = {cell: 0 for cell in sources}
    queue = deque(sources)
    while queue:
        cur = queue.popleft()
        for nxt in neighbours(grid, cur):
            if nxt not in dist and (not passable or grid[nxt[0]][nxt[1]] != HOLE):
                dist[nxt] = dist[cur] + 1
                queue.append(nxt)
    return dist


def placements(target: MemoryEntry, kind: TargetKind, memory: Sequence[MemoryEntry], grid: Grid) -> dict[str, Cell]:
    """Every cell the implicit probe could stand the agent on, by the move that
    steps onto the target from it (in action order): a neighbour of the target
    that is ice now and claimed SAFE, from which the memory route's first step
    is the target; for a control, the target must also be the only shortest
    move on ``grid``. Empty when there is none (or the kind is not a route kind)."""
    if kind not in ROUTE_KINDS:
        return {}
    belief, goal = memory_grid(memory, grid), goal_of(grid)
    to_goal = distances(grid, [goal], passable=True)
    found: dict[str, Cell] = {}
    for action, (dr, dc) in DELTAS.items():
        cell = (target.row - dr, target.col - dc)  # the move ``action`` from ``cell`` lands on the target
        if not in_bounds(grid, cell) or grid[cell[0]][cell[1]] != FROZEN or belief[cell[0]][cell[1]] != FROZEN:
            continue
        route = shortest_path(belief, cell, goal)
        if not route or len(route) < 2 or route[1] != target.cell:
            continue
        if kind == "valid_safe":
            best = [n for n in neighbours(grid, cell) if to_goal.get(n, -1) == to_goal.get(cell, 0) - 1]
            if best != [target.cell]:
                continue
        found[action] = cell
    return found


def match_moves(thaws: Sequence[dict[str, Cell]], controls: Sequence[dict[str, Cell]]) -> dict[int, tuple[int, str]]:
    """Pairs each thaw target (by index) with a control (index) that can be
    placed for the same move, as many pairs as possible (augmenting paths,
    earlier thaws and controls first, so the pairing is a function of their
    order); each pair's move is the first both admit in action order."""
    owner: dict[int, int] = {}  # control -> thaw

    def augment(t: int, seen: set[int]) -> bool:
        for c, moves in enumerate(controls):
            if c in seen or not moves.keys() & thaws[t].keys():
                continue
            seen.add(c)
            if c not in owner or augment(owner[c], seen):
                owner[c] = t
                return True
        return False

    for t in range(len(thaws)):
        augment(t, set())
    return {t: (c, next(a for a in MOVE_ORDER if a in thaws[t] and a in controls[c])) for c, t in owner.items()}


def _balanced(thaws: list[Target], pool: list[Target], moves: dict[str, dict[str, Cell]]) -> list[Target]:
    """The valid-SAFE controls of ``thaws`` (as many), every placed thaw target
    paired with a control placed for the same move (``match_moves``): so the
    implicit probe's thaw targets and controls ask for each move equally often,
    and an agent that ignores the lake (always RIGHT, a random move) scores
    0.5 balanced. A thaw target or control left unpaired is not placed (its
    implicit probe is skipped); the remaining controls are taken by rank."""
    thaw_moves = [moves[t.entry.id] for t in thaws]
    pairs = match_moves(thaw_moves, [moves[c.entry.id] for c in pool])
    placed = {c: (t, action) for t, (c, action) in pairs.items()}
    for i, t in enumerate(thaws):
        action = pairs[i][1] if i in pairs else None
        thaws[i] = replace(t, placement=thaw_moves[i][action] if action else None)
    controls = [replace(c, placement=moves[c.entry.id][placed[j][1]]) for j, c in enumerate(pool) if j in placed]
    rest = [replace(c, placement=None) for j, c in enumerate(pool) if j not in placed]
    return sorted(controls + rest[: max(len(thaws) - len(controls), 0)], key=target_order)


def choose_targets(instance: Instance, per_kind: int) -> list[Target]:
    """Up to ``per_kind`` stale targets of each kind and as many controls with
    the same claim (a valid SAFE per stale thaw, a valid DANGER per
    stale freeze; on an instance with nothing stale, as on L0, up to
    ``per_kind`` of each control), ranked by ``target_order``, in ``KINDS``
    order, the implicit placements paired by move (``_balanced``) when there
    are thaw targets: a function of the instance."""
    grid = instance.final_grid()
    cells = [e for e in instance.memory if not e.is_note]
    route = memory_route(cells, grid)
    near = distances(grid, route) if route else {}
    far = instance.height + instance.width  # no route: every cell equally far
    pools: dict[str, list[Target]] = {}
    moves: dict[str, dict[str, Cell]] = {}  # by entry id
    for kind in KINDS:
        pool = []
        for e in cells:
            if kind_of(e, grid) != kind:
                continue
            found = placements(e, kind, cells, grid)
            first = next(iter(found.values()), None)
            target = Target(e, kind, grid[e.row][e.col] != HOLE, near.get(e.cell, far), first)
            moves[e.id] = found
            pool.append(target)
        # SAFE claims with a placement first: every dimension can ask about them
        pools[kind] = sorted(pool, key=target_order)
    chosen = {kind: pools[kind][:per_kind] for kind in KINDS}
    if any(chosen[k] for k in STALE_KINDS):  # as many controls as stale targets of the same claim
        chosen["valid_danger"] = chosen["valid_danger"][: len(chosen["stale_freeze"])]
        thaws = chosen["stale_thaw"]
        chosen["valid_safe"] = _balanced(thaws, pools["valid_safe"], moves)
        chosen["stale_thaw"] = sorted(thaws, key=target_order)
    return [t for kind in KINDS for t in chosen[kind]]


def target_order(t: Target) -> tuple[bool, int, int, int]:
    """How targets of a kind are ranked: SAFE claims with a placement first,
    then nearest the memory route, then by row and column."""
    return (t.kind in ROUTE_KINDS and t.placement is None, t.route_distance, t.entry.row, t.entry.col)
