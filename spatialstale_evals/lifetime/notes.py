"""The agent's own notes, read as cell claims and scored against the lake.

What the parser reads, line by line, in every file of the memory store (any
path, any name):

* the recommended format: ``SAFE at (r,c)`` and ``HOLE at (r,c)``, and the
  paper's entry lines (``[mem_021] SAFE at (2,5): ...``, ``DANGER at (4,7)``),
  with any text around them; ``DANGER`` is a hole claim;
* a claim word of more than one letter, other than start and goal, before
  the cell (``hole at (3,4)``, ``ice at (0,2)``; so the observation's
  ``Goal at (7,7).`` line claims nothing);
* a cell followed by ``:``, ``=``, ``-``, ``->`` or ``is`` and a claim word
  (after an optional ``a``/``an``): ``(3,4): hole``, ``(3,4) = safe``,
  ``(3,4) is a hole``, and the text
  observation's own cell format ``(3,4)=F`` (``S``, ``G`` and ``F`` are safe,
  ``H`` a hole, ``?`` no claim), so a copied map row is read cell by cell.

Claim words (case-insensitive): safe, ice, frozen, start, goal, F, S, G are
SAFE; hole, danger, dangerous, deadly, H are HOLE. A word preceded by ``not``
or ``no longer`` is no claim. Spaces inside the cell are allowed
(``( 3 , 4 )``); a cell off the grid is no claim. A line may hold several
claims. A non-blank line that is not a Markdown heading (``#``) and holds no
claim, and no ``?`` cell of a copied map, is an unparsed line: counted, never
penalised.

The scores (``note_scores``) are over distinct (cell, claim) pairs: a cell
claimed both ways is a conflicting cell and holds one true and one false
claim. Everything here is a pure function of the notes and the truth.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from spatialstale_evals.world.grid import HOLE, Cell, Grid

SAFE, HOLE_CLAIM = "SAFE", "HOLE"
CLAIMS = (SAFE, HOLE_CLAIM)
_SAFE_WORDS = ("safe", "ice", "frozen", "start", "goal", "f", "s", "g")
_HOLE_WORDS = ("hole", "danger", "dangerous", "deadly", "h")
WORDS = {**{w: SAFE for w in _SAFE_WORDS}, **{w: HOLE_CLAIM for w in _HOLE_WORDS}}
_WORD = "|".join(sorted(WORDS, key=len, reverse=True))
#: Before a cell, only words of more than one letter that are not the position
#: line's (``Agent at (0,0). Goal at (7,7).`` is no claim).
_LONG_WORD = "|".join(sorted((w for w in WORDS if len(w) > 1 and w not in ("start", "goal")), key=len, reverse=True))
_CELL = r"\(\s*(\d+)\s*,\s*(\d+)\s*\)"
_NEGATED = r"(?<!not )(?<!no longer )"
#: ``HOLE at (3,4)``, ``[mem_039] DANGER at (4,7)``, ``ice at (0,2)``.
WORD_AT_CELL = re.compile(rf"{_NEGATED}\b({_LONG_WORD})\s+at\s+{_CELL}", re.IGNORECASE)
#: ``(3,4): hole``, ``(3,4)=F``, ``(3,4) is ice``, ``(3,4) -> safe``.
CELL_IS_WORD = re.compile(rf"{_CELL}\s*(?::|=|->|-|\bis\b)\s*(?:an?\s+)?({_WORD})\b", re.IGNORECASE)
#: An out-of-view cell of a copied map row: read, no claim.
UNSEEN_CELL = re.compile(rf"{_CELL}\s*=\s*\?")


@dataclass
class Notes:
    """What the store's files claim: cell -> the claims made of it, the
    unparsed lines, and the store's size."""

    claims: dict[Cell, set[str]] = field(default_factory=dict)
    unparsed_lines: int = 0
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
    all (it had a claim, or a ``?`` cell of a copied map)."""
    found: list[tuple[Cell, str]] = []
    for match in WORD_AT_CELL.finditer(line):
        found.append(((int(match[2]), int(match[3])), WORDS[match[1].lower()]))
    for match in CELL_IS_WORD.finditer(line):
        found.append(((int(match[1]), int(match[2])), WORDS[match[3].lower()]))
    inside = [(cell, claim) for cell, claim in found if 0 <= cell[0] < height and 0 <= cell[1] < width]
    return inside, bool(inside) or bool(UNSEEN_CELL.search(line))


def parse_notes(files: Mapping[str, str], height: int, width: int) -> Notes:
    """Every claim of every file (module docstring)."""
    notes = Notes(files=len(files))
    for text in files.values():
        text = text if isinstance(text, str) else str(text)
        notes.memory_bytes += len(text.encode("utf-8", errors="replace"))
        for line in text.split("\n"):  # as the memory tool numbers lines: \n only
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                continue
            claims, read = line_claims(line, height, width)
            for cell, claim in claims:
                notes.claims.setdefault(cell, set()).add(claim)
            notes.unparsed_lines += not read
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
