"""The agent's memory snapshot: one text entry per cell, written on g0.

Entries are built before any change, so every entry is true of g0 and only the
world drifting away from it can make one stale. The random walks decide only
each entry's ``source`` (walk vs synthetic fill); coverage is complete either
way, which is the paper's point (no coverage confound).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from spatialstale_evals.world.grid import (
    ACTIONS,
    FROZEN,
    GOAL,
    HOLE,
    START,
    Cell,
    Grid,
    apply_move,
)

WALKS = 20
WALK_CAP = 50

SAFE, DANGER = "SAFE", "DANGER"
DESCRIPTIONS = {
    FROZEN: "Frozen ice - safe to walk",
    HOLE: "Hole - dangerous, do not step",
    START: "Start tile - safe to walk",
    GOAL: "Goal tile - safe to walk",
}
#: (exact) ``[mem_021] SAFE at (2,5): Frozen ice - safe to walk``
ENTRY_PATTERN = re.compile(r"\[(?P<id>mem_\d+)\] (?P<claim>SAFE|DANGER) at \((?P<row>\d+),(?P<col>\d+)\): (?P<desc>.+)")


@dataclass(frozen=True)
class MemoryEntry:
    id: str
    row: int
    col: int
    claim: str
    text: str
    source: str

    @property
    def cell(self) -> Cell:
        return (self.row, self.col)

    def to_json(self) -> dict:
        return {
            "id": self.id,
            "row": self.row,
            "col": self.col,
            "claim": self.claim,
            "text": self.text,
            "source": self.source,
        }

    @classmethod
    def from_json(cls, data: dict) -> MemoryEntry:
        return cls(
            id=str(data["id"]),
            row=int(data["row"]),
            col=int(data["col"]),
            claim=str(data["claim"]),
            text=str(data["text"]),
            source=str(data["source"]),
        )


def id_width(n_cells: int) -> int:
    """Digits in an entry id: at least 3 (the paper's ``mem_002`` on 8x8), more
    when N-1 needs them (``mem_1023`` on 32x32)."""
    return max(3, len(str(n_cells - 1)))


def memory_id(row: int, col: int, width: int, n_cells: int) -> str:
    return f"mem_{row * width + col:0{id_width(n_cells)}d}"


def entry_text(entry_id: str, row: int, col: int, kind: str) -> str:
    claim = DANGER if kind == HOLE else SAFE
    return f"[{entry_id}] {claim} at ({row},{col}): {DESCRIPTIONS[kind]}"


def random_walk_cells(g0: Grid, rng: np.random.Generator) -> set[Cell]:
    """Cells visited by WALKS uniform random walks from S, each ending on H, G
    or after WALK_CAP steps."""
    visited: set[Cell] = set()
    for _ in range(WALKS):
        pos = (0, 0)
        visited.add(pos)
        for _ in range(WALK_CAP):
            pos = apply_move(g0, pos, ACTIONS[int(rng.integers(len(ACTIONS)))])
            visited.add(pos)
            if g0[pos[0]][pos[1]] in (HOLE, GOAL):
                break
    return visited


def build_memory(g0: Grid, rng: np.random.Generator) -> list[MemoryEntry]:
    """One entry per cell in row-major order, true of g0."""
    height, width = len(g0), len(g0[0])
    visited = random_walk_cells(g0, rng)
    entries = []
    for r in range(height):
        for c in range(width):
            kind = g0[r][c]
            eid = memory_id(r, c, width, height * width)
            entries.append(
                MemoryEntry(
                    id=eid,
                    row=r,
                    col=c,
                    claim=DANGER if kind == HOLE else SAFE,
                    text=entry_text(eid, r, c, kind),
                    source="walk" if (r, c) in visited else "synthetic",
                )
            )
    return entries
