"""The agent's memory snapshot: one text entry per cell, written on g0.

Entries are built before any change, so every entry is true of g0 and only the
world drifting away from it can make one stale. The random walks decide only
each entry's ``source`` (walk vs synthetic fill); coverage is complete either
way, which is the paper's point (no coverage confound).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from spatialstale_evals.world.grid import (
    FROZEN,
    GOAL,
    HOLE,
    MOVE_ORDER,
    START,
    Cell,
    Grid,
    apply_move,
)

WALKS = 20
WALK_CAP = 50

SAFE, DANGER = "SAFE", "DANGER"
#: The claim of a distractor note (``distractors``): about no cell, so never stale.
NOTE = "NOTE"
DESCRIPTIONS = {
    FROZEN: "Frozen ice - safe to walk",
    HOLE: "Hole - dangerous, do not step",
    START: "Start tile - safe to walk",
    GOAL: "Goal tile - safe to walk",
}
#: (exact) ``[mem_021] SAFE at (2,5): Frozen ice - safe to walk``
ENTRY_PATTERN = re.compile(r"\[(?P<id>mem_\d+)\] (?P<claim>SAFE|DANGER) at \((?P<row>\d+),(?P<col>\d+)\): (?P<desc>.+)")

#: A distractor note (``distractor_notes``): ``[note_03] Note: Each turn allows exactly one move.``
NOTE_PATTERN = re.compile(r"\[(?P<id>note_\d+)\] Note: (?P<desc>.+)")


@dataclass(frozen=True)
class MemoryEntry:
    """One line of the store: a claim about a cell (``SAFE``/``DANGER``), or a
    distractor note (``NOTE``: about no cell, never stale; row and col -1)."""

    id: str
    row: int
    col: int
    claim: str
    text: str
    source: str

    @property
    def cell(self) -> Cell:
        return (self.row, self.col)

    @property
    def is_note(self) -> bool:
        return self.claim == NOTE

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


def claim_of(kind: str) -> str:
    """The claim an entry makes of a cell of type ``kind``."""
    return DANGER if kind == HOLE else SAFE


def kind_of(claim: str) -> str:
    """The cell type a claim describes (ice for SAFE: S and G never change)."""
    return HOLE if claim == DANGER else FROZEN


def flipped(claim: str) -> str:
    """The other claim: what a stale entry's cell now warrants (a change is an F<->H flip)."""
    return SAFE if claim == DANGER else DANGER


def entry_text(entry_id: str, row: int, col: int, kind: str) -> str:
    claim = claim_of(kind)
    return f"[{entry_id}] {claim} at ({row},{col}): {DESCRIPTIONS[kind]}"


def walk_visits(g0: Grid, rng: np.random.Generator) -> dict[Cell, list[tuple[int, int]]]:
    """Where WALKS uniform random walks from S went (each ending on H, G or
    after WALK_CAP steps): cell -> every (walk, step) that stood on it, walks
    numbered from 1, the start of a walk being step 0. The exploration the
    memory was written from (its ``source``, and the ``detailed`` style's
    provenance)."""
    visits: dict[Cell, list[tuple[int, int]]] = {}
    for walk in range(1, WALKS + 1):
        pos = (0, 0)
        visits.setdefault(pos, []).append((walk, 0))
        for step in range(1, WALK_CAP + 1):
            pos = apply_move(g0, pos, MOVE_ORDER[int(rng.integers(len(MOVE_ORDER)))])
            visits.setdefault(pos, []).append((walk, step))
            if g0[pos[0]][pos[1]] in (HOLE, GOAL):
                break
    return visits


def random_walk_cells(g0: Grid, rng: np.random.Generator) -> set[Cell]:
    """Cells visited by the exploration walks."""
    return set(walk_visits(g0, rng))


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
                    claim=claim_of(kind),
                    text=entry_text(eid, r, c, kind),
                    source="walk" if (r, c) in visited else "synthetic",
                )
            )
    return entries


# -- distractor notes (``distractors``) ----------------------------------------

#: Non-spatial notes, written by us: plausible, about the game or the agent's
#: own past, never naming a cell, and true whatever the lake does.
NOTE_TEXTS = (
    "The lake was explored in twenty walks, each one starting from the start tile.",
    "Walking off the edge of the lake leaves you where you are, and the step still counts.",
    "The goal tile lies in the corner opposite the start.",
    "Stepping into a hole ends the episode at once.",
    "There is exactly one start tile and exactly one goal tile.",
    "It was very cold during the exploration walks.",
    "The morning light made the ice glare; looking twice helped.",
    "I should count my steps so as not to run out of the budget.",
    "Each turn allows exactly one move.",
    "These notes were written before the episode began.",
    "The wind picked up during the later walks.",
    "Moving back and forth wastes steps.",
    "Frozen ice is safe to stand on; holes are not.",
    "I took a short rest between two of the walks.",
    "The lake is a rectangular grid of cells.",
    "Reaching the goal is the only way to win.",
)


def note_id(k: int) -> str:
    return f"note_{k:02d}"


def note_text(entry_id: str, text: str) -> str:
    """(exact) ``[note_03] Note: Each turn allows exactly one move.``"""
    return f"[{entry_id}] Note: {text}"


def distractor_notes(rng: np.random.Generator, count: int) -> list[MemoryEntry]:
    """``count`` distinct notes drawn from ``NOTE_TEXTS`` (ids ``note_00`` ...)."""
    if count > len(NOTE_TEXTS):
        raise ValueError(f"at most {len(NOTE_TEXTS)} distractor notes; got {count}")
    picks = rng.choice(len(NOTE_TEXTS), size=count, replace=False)
    return [
        MemoryEntry(id=note_id(k), row=-1, col=-1, claim=NOTE, text=note_text(note_id(k), NOTE_TEXTS[i]), source="note")
        for k, i in enumerate(picks)
    ]


def mix(memory: Sequence[MemoryEntry], notes: Sequence[MemoryEntry], rng: np.random.Generator) -> list[MemoryEntry]:
    """The store with ``notes`` at positions drawn from ``rng`` (the entries keep their order)."""
    size = len(memory) + len(notes)
    slots = set(int(i) for i in rng.choice(size, size=len(notes), replace=False))
    entries, extra = iter(memory), iter(notes)
    return [next(extra) if i in slots else next(entries) for i in range(size)]
