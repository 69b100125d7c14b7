"""The lifelong task's note parser and note scores: every supported form
round-trips, junk never raises and is counted, and the scores equal counts
made here by hand from small lakes."""

from __future__ import annotations

import math
import random

import pytest

from spatialstale_evals.lifetime.notes import (
    death_cause,
    format_notes,
    note_scores,
    parse_notes,
    repair_counts,
)

GRID = ("SFFH", "FHFF", "FFHF", "HFFG")  # 4x4

FORMS = {
    "recommended": lambda r, c, hole: f"{'HOLE' if hole else 'SAFE'} at ({r},{c})",
    "paper": lambda r, c, hole: (
        f"[mem_{r * 4 + c:03d}] DANGER at ({r},{c}): Hole - dangerous, do not step"
        if hole
        else f"[mem_{r * 4 + c:03d}] SAFE at ({r},{c}): Frozen ice - safe to walk"
    ),
    "colon": lambda r, c, hole: f"({r},{c}): {'hole' if hole else 'safe'}",
    "observation": lambda r, c, hole: f"({r},{c})={'H' if hole else 'F'}",
    "spaced": lambda r, c, hole: f"- ( {r} , {c} ) is a {'hole' if hole else 'safe cell'}",
    "word_first": lambda r, c, hole: f"{'danger' if hole else 'ice'} at ({r},{c}) seen on the way",
}


@pytest.mark.parametrize("form", list(FORMS))
def test_generated_notes_round_trip_in_every_supported_form(form):
    rng = random.Random(form)
    truth = {(r, c): rng.random() < 0.4 for r in range(4) for c in range(4)}
    text = "# my notes\n\n" + "\n".join(FORMS[form](r, c, hole) for (r, c), hole in truth.items())
    notes = parse_notes({"/memories/lake.md": text}, 4, 4)
    assert notes.claims == {cell: {"HOLE" if hole else "SAFE"} for cell, hole in truth.items()}
    assert notes.unparsed_lines == 0  # the heading and the blank line are not claims
    assert notes.memory_bytes == len(text.encode())


def test_a_copied_map_is_read_cell_by_cell_and_unseen_cells_claim_nothing():
    text = (
        "Row 0: (0,0)=S (0,1)=F (0,2)=? (0,3)=?\nRow 1: (1,0)=? (1,1)=? (1,2)=? (1,3)=?\nAgent at (0,0). Goal at (3,3)."
    )
    notes = parse_notes({"/memories/map.txt": text}, 4, 4)
    assert notes.claims == {(0, 0): {"SAFE"}, (0, 1): {"SAFE"}}
    assert notes.unparsed_lines == 1  # the position line claims nothing; the all-? row is read


def test_junk_never_raises_and_is_counted_as_unparsed():
    files = {
        "/memories/prose.md": "The lake is big.\nI went down then right.\nnot safe at (1,1)\n(3,4) is not safe",
        "/memories/deep/nested/dir/x.md": "(9,9): hole\n(1,1) hole?? maybe",
        "/memories/bin": "\x00\x01\ufffd\x7f" * 50 + "\n" + "".join(chr(i) for i in range(1, 300)),
        "/memories/huge.md": ("blah " * 20 + "\n") * 5000 + "HOLE at (1,1)\n",
    }
    notes = parse_notes(files, 4, 4)
    assert notes.claims == {(1, 1): {"HOLE"}}
    # prose 4 + nested 2 ("(1,1) hole??": no separator before the word) + huge 5000, and the binary file's
    # 3 lines (its one "\n" is chr(10) of the second part; other control characters end no line)
    assert notes.unparsed_lines == 4 + 2 + 5000 + 3
    assert notes.memory_bytes == sum(len(t.encode()) for t in files.values())


def test_contradictions_are_conflicting_cells_with_one_true_and_one_false_claim():
    files = {"/memories/a.md": "SAFE at (1,1)\nSAFE at (0,1)", "/memories/b.md": "(1,1): hole\n(0,1)=F"}
    notes = parse_notes(files, 4, 4)
    scores = note_scores(notes, GRID, seen=[(0, 1), (1, 1), (2, 2)])
    # (1,1) is H: its HOLE claim is true, its SAFE claim false and a hazard; (0,1) is F, claimed SAFE twice
    assert scores == {
        "claims": 3,
        "claims_true": 2,
        "stale_claims": 1,
        "hazard_claims": 1,
        "conflicting_cells": 1,
        "claimed_cells": 2,
        "seen_cells": 3,
        "covered_cells": 2,
        "unparsed_lines": 0,
        "memory_bytes": sum(len(t) for t in files.values()),
    }
    assert death_cause(notes, (1, 1)) == "conflicting_note"


def test_note_scores_against_a_changed_lake():
    written = {(0, 1): "F", (0, 3): "H", (1, 1): "H", (2, 2): "H", (0, 0): "S"}
    notes = parse_notes({"/memories/lake.md": format_notes(written)}, 4, 4)
    changed = ("SHFF", "FFFF", "FFHF", "HFFG")  # (0,1) thawed, (0,3) and (1,1) froze
    scores = note_scores(notes, changed, seen=written)
    assert (scores["claims"], scores["claims_true"], scores["stale_claims"], scores["hazard_claims"]) == (5, 2, 3, 1)
    assert scores["covered_cells"] == scores["seen_cells"] == 5
    assert [death_cause(notes, c) for c in [(0, 1), (2, 2), (3, 0)]] == ["safe_note", "hole_note", "no_note"]


def test_repairs_count_contradicted_claims_fixed_by_the_write_back():
    start = parse_notes({"/memories/lake.md": "SAFE at (0,1)\nHOLE at (1,1)\nHOLE at (2,2)\nSAFE at (1,0)"}, 4, 4)
    sightings = {(0, 1): "H", (1, 1): "F", (2, 2): "H", (1, 0): "H"}  # three contradicted, (2,2) confirmed
    end = parse_notes({"/memories/lake.md": "HOLE at (0,1)\nHOLE at (1,1)\nHOLE at (2,2)"}, 4, 4)
    assert repair_counts(start, sightings, end) == {"repairable": 3, "repaired": 1, "removed": 1}
    assert repair_counts(start, {}, end)["repairable"] == 0  # nothing seen: nothing to repair (rate NaN)


def test_empty_store_scores_zero_claims_and_nan_ratios_are_left_to_the_metrics():
    scores = note_scores(parse_notes({}, 4, 4), GRID, seen=[])
    assert scores["claims"] == scores["seen_cells"] == scores["memory_bytes"] == 0
    assert math.isnan(float("nan"))  # the ratio of 0/0 is NaN downstream (metrics test)
