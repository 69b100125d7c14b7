"""Ground truth: which entries a changed grid has made stale, and in which direction."""

from __future__ import annotations

from collections.abc import Sequence

from spatialstale_evals.world.grid import FROZEN, HOLE, Cell
from spatialstale_evals.world.memory import MemoryEntry

THAW, FREEZE = "thaw", "freeze"


def hazard(kind: str) -> int:
    """h(H) = 1, h(F) = h(S) = h(G) = 0: an entry is stale when its cell's hazard changed
    (docs/specification.md#the-world)."""
    return 1 if kind == HOLE else 0


def change_kind(g0: Sequence[str], grid: Sequence[str], cell: Cell) -> str | None:
    """``thaw`` (F->H, a safe claim turned deadly), ``freeze`` (H->F) or None."""
    r, c = cell
    before, after = g0[r][c], grid[r][c]
    if before == FROZEN and after == HOLE:
        return THAW
    if before == HOLE and after == FROZEN:
        return FREEZE
    return None


def stale_labels(memory: Sequence[MemoryEntry], g0: Sequence[str], grid: Sequence[str]) -> dict[str, str | None]:
    """Entry id -> ``thaw`` / ``freeze`` when stale, None when still valid (a
    distractor note, about no cell, always)."""
    return {e.id: None if e.is_note else change_kind(g0, grid, e.cell) for e in memory}
