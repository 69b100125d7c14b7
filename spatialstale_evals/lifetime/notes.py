"""The agent's own notes, read as cell claims and scored against the lake.

The parser reads every file of the memory store (any path, any name) entry by
entry: a line, or a structured block (JSON, a Markdown table, a copied map, a
list under a ``Holes:`` header) in ``note_blocks``, read by the one line
grammar of ``note_forms``. The forms are documented in docs/lifelong.md
("How notes are read"); the rule is *when in doubt, read nothing; never the
opposite*. A line that is uncertain (``maybe``, ``?``, opposite claims about
one cell that no update word orders) is an ambiguous line: counted, no claim.
A non-blank line that is no Markdown heading, holds no claim, no ``?`` cell of
a copied map and no past claim is an unparsed line: counted, never penalised.
A cell off the grid, or a number of five digits or more, is no cell.

The scores (``note_scores``) are over distinct (cell, claim) pairs: a cell
claimed both ways (on different lines) is a conflicting cell and holds one
true and one false claim. Everything here is a pure function of the notes and
the truth.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from spatialstale_evals.lifetime.note_blocks import read_text
from spatialstale_evals.lifetime.note_forms import HOLE_CLAIM, SAFE, read_line
from spatialstale_evals.world.grid import HOLE, Cell, Grid

CLAIMS = (SAFE, HOLE_CLAIM)


@dataclass
class Notes:
    """What the store's files claim: cell -> the claims made of it, the
    unparsed and the ambiguous lines, and the store's size."""

    claims: dict[Cell, set[str]] = field(default_factory=dict)
    unparsed_lines: int = 0
    ambiguous_lines: int = 0
    memory_bytes: int = 0
    files: int = 0

    def claim(self, cell: Cell) -> str | None:
        """The one claim made of ``cell``; ``conflicting`` when both, None when none."""
        made = self.claims.get(cell)
        if not made:
            return None
        return next(iter(made)) if len(made) == 1 else "conflicting"


def line_claims(line: str, height: int, width: int) -> tuple[list[tuple[Cell, str]], bool]:
    """The (cell, claim) pairs of one line, and whether the line was read at
    all (a claim, a ``?`` cell of a copied map, a past claim, or ambiguity)."""
    reading = read_line(line, height, width)
    return reading.claims, reading.read


def parse_notes(files: Mapping[str, str], height: int, width: int) -> Notes:
    """Every claim of every file (module docstring)."""
    notes = Notes(files=len(files))
    for text in files.values():
        text = text if isinstance(text, str) else str(text)
        notes.memory_bytes += len(text.encode("utf-8", errors="replace"))
        for entry in read_text(text, height, width):
            for cell, claim in entry.reading.claims:
                notes.claims.setdefault(cell, set()).add(claim)
            notes.ambiguous_lines += entry.reading.ambiguous
            notes.unparsed_lines += 0 if entry.reading.read else entry.lines
    return notes


def truth(grid: Grid, cell: Cell) -> str:
    """The claim that is true of ``cell`` on ``grid``."""
    return HOLE_CLAIM if grid[cell[0]][cell[1]] == HOLE else SAFE


def claim_of_kind(kind: str) -> str:
    """The claim a sighting of a cell of type ``kind`` supports."""
    return HOLE_CLAIM if kind == HOLE else SAFE


#: The keys of ``note_scores``: counts, summed over samples by the metrics.
NOTE_KEYS = (
    "claims",
    "claims_true",
    "stale_claims",
    "hazard_claims",
    "conflicting_cells",
    "claimed_cells",
    "seen_cells",
    "covered_cells",
    "unparsed_lines",
    "ambiguous_lines",
    "memory_bytes",
)


def note_scores(notes: Notes, grid: Grid, seen: Iterable[Cell]) -> dict[str, int]:
    """The notes against the lake now (``grid``) and the cells the agent has
    ever seen (``seen``): claims (distinct cell-claim pairs) and how many are
    true now; stale claims (false now); hazard claims (SAFE on a cell that is
    now a hole); conflicting cells (claimed both ways); covered cells (seen
    cells with a claim): ``note_coverage`` is covered / seen,
    ``note_accuracy`` claims_true / claims."""
    pairs = [(cell, claim) for cell, made in notes.claims.items() for claim in made]
    true = sum(claim == truth(grid, cell) for cell, claim in pairs)
    hazard = sum(claim == SAFE and grid[cell[0]][cell[1]] == HOLE for cell, claim in pairs)
    seen = set(seen)
    return {
        "claims": len(pairs),
        "claims_true": true,
        "stale_claims": len(pairs) - true,
        "hazard_claims": hazard,
        "conflicting_cells": sum(len(made) > 1 for made in notes.claims.values()),
        "claimed_cells": len(notes.claims),
        "seen_cells": len(seen),
        "covered_cells": len(seen & set(notes.claims)),
        "unparsed_lines": notes.unparsed_lines,
        "ambiguous_lines": notes.ambiguous_lines,
        "memory_bytes": notes.memory_bytes,
    }


def repair_counts(start: Notes, sightings: Mapping[Cell, str], end: Notes) -> dict[str, int]:
    """How the notes an episode began with fared against what the agent saw in
    it (``sightings``: each cell's type at its last sighting in the episode):
    ``repairable`` claims the sightings contradict; ``repaired`` those whose
    cell the notes at the end of the episode's write-back claim exactly as
    last seen; ``removed`` those whose cell they no longer claim at all."""
    repairable = repaired = removed = 0
    for cell, made in start.claims.items():
        if cell not in sightings:
            continue
        seen = claim_of_kind(sightings[cell])
        wrong = sum(claim != seen for claim in made)
        if not wrong:
            continue
        repairable += wrong
        after = end.claims.get(cell, set())
        repaired += wrong * (after == {seen})
        removed += wrong * (not after)
    return {"repairable": repairable, "repaired": repaired, "removed": removed}


#: How a death is traced to the notes the episode began with (``fallback``:
#: the harness's greedy step, not the agent's, entered the hole).
DEATH_CAUSES = ("safe_note", "no_note", "hole_note", "conflicting_note", "fallback")


def death_cause(notes: Notes, cell: Cell, fallback: bool = False) -> str:
    """The note behind a death on ``cell``: one that called it SAFE, none, one
    that called it a hole (ignored), or both; ``fallback`` when the fatal step
    was the harness's fallback step, which no note of the agent's chose."""
    if fallback:
        return "fallback"
    made = notes.claim(cell)
    return {SAFE: "safe_note", HOLE_CLAIM: "hole_note", "conflicting": "conflicting_note"}.get(made, "no_note")


def format_notes(cells: Mapping[Cell, str]) -> str:
    """Notes in the recommended format, one line per cell (row-major):
    ``SAFE at (r,c)`` or ``HOLE at (r,c)`` from each cell's type."""
    return "".join(f"{claim_of_kind(kind)} at ({r},{c})\n" for (r, c), kind in sorted(cells.items()))
