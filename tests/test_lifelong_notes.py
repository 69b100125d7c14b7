"""The lifelong task's note parser and note scores: every supported form
round-trips, junk never raises and is counted, the labelled corpus
(``tests/_notes_corpus.py``) is never read as the opposite nor firm where it is
uncertain, digit runs are unreadable lines, and the scores equal counts made
here by hand from small lakes."""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from pathlib import Path

import _notes_corpus
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
    assert notes.claims == {(1, 1): {"HOLE"}}  # "not safe at (1,1)" and the huge file's last line
    # prose 2 + "(3,4) is not safe" (off the 4x4 grid) + "(9,9): hole" + huge 5000, and the binary file's
    # 3 lines (its one "\n" is chr(10) of the second part; other control characters end no line)
    assert notes.unparsed_lines == 2 + 1 + 1 + 5000 + 3
    assert notes.ambiguous_lines == 1  # "(1,1) hole?? maybe"
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
        "ambiguous_lines": 0,
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


# --- the labelled corpus: never the opposite, never firm when uncertain ---------------------------------

CORPUS = _notes_corpus.load()


def test_the_corpus_holds_over_200_entries_of_every_documented_form():
    forms = {e["form"] for e in CORPUS}
    assert len(CORPUS) >= 200
    documented = {"recommended", "cell_state", "negation", "update", "list", "row_col", "json", "table", "map"}
    assert documented | {"ambiguous", "nothing", "model"} <= forms
    multi_line = [e for e in CORPUS if "\n" in e["text"]]
    assert {e["form"] for e in multi_line} >= {"json", "table", "map", "list"}


@pytest.mark.parametrize("entry", CORPUS, ids=[f"{i}-{e['form']}" for i, e in enumerate(CORPUS)])
def test_no_corpus_entry_is_read_as_the_opposite_or_as_firm_when_uncertain(entry):
    got, read, want = _notes_corpus.outcome(entry)
    assert got not in ("opposite", "ambiguous_as_firm", "extra"), (entry, sorted(read), sorted(want))


def test_the_documented_forms_and_the_issues_examples_read_exactly():
    for line, claims in {
        "no hole at (3,4)": {(3, 4): {"SAFE"}},
        "not a hole at (3,4)": {(3, 4): {"SAFE"}},
        "there is no hole at (3,4)": {(3, 4): {"SAFE"}},
        "was safe at (3,4), now it's a hole": {(3, 4): {"HOLE"}},
        "isn't safe at (3,4)": {(3, 4): {"HOLE"}},
        "never safe at (3,4)": {(3, 4): {"HOLE"}},
        "HOLE at (3,4) is now SAFE": {(3, 4): {"SAFE"}},
        "(3,4): hole -> safe": {(3, 4): {"SAFE"}},
        "Holes: (3,4), (5,6)": {(3, 4): {"HOLE"}, (5, 6): {"HOLE"}},
        "SAFE: (3,4)": {(3, 4): {"SAFE"}},
        "row 3 col 4: hole": {(3, 4): {"HOLE"}},
        "(3,4) is now safe": {(3, 4): {"SAFE"}},
        "safe at (3,4) and (3,5)": {(3, 4): {"SAFE"}, (3, 5): {"SAFE"}},
        '{"(3,4)": "hole"}': {(3, 4): {"HOLE"}},
        "| cell | state |\n|---|---|\n| (3,4) | hole |": {(3, 4): {"HOLE"}},
    }.items():
        notes = parse_notes({"/memories/n.md": line}, 8, 8)
        assert (notes.claims, notes.ambiguous_lines, notes.unparsed_lines) == (claims, 0, 0), line
    for line in ("maybe hole at (2,2)", "HOLE at (2,2)?", "(2,2) probably safe", "(2,2) might be a hole",
                 "(2,2) is safe. (2,2) is a hole."):
        notes = parse_notes({"/memories/n.md": line}, 8, 8)
        assert (notes.claims, notes.ambiguous_lines, notes.unparsed_lines) == ({}, 1, 0), line


def test_the_share_the_docs_state_is_the_corpus_result():
    total = sum(_notes_corpus.table().values(), Counter())
    assert total["opposite"] == total["ambiguous_as_firm"] == total["extra"] == 0
    docs = (Path(__file__).resolve().parents[1] / "docs" / "lifelong.md").read_text(encoding="utf-8")
    said = r"(\d+)\s+of\s+the\s+corpus's\s+(\d+)\s+entries.*?;\s+(\d+)\s+of\s+its\s+(\d+)\s+readable\s+entries"
    stated = re.search(said, docs, re.S)
    assert stated is not None, "docs/lifelong.md states the corpus result"
    assert tuple(map(int, stated.groups())) == (
        sum(1 for _ in CORPUS) - total["opposite"] - total["ambiguous_as_firm"] - total["extra"],
        len(CORPUS),
        total["readable_correct"],
        total["readable"],
    )


def test_ambiguous_lines_are_counted_into_the_note_scores():
    notes = parse_notes({"/memories/n.md": "SAFE at (0,1)\nmaybe HOLE at (1,1)\nHOLE at (2,2)?\nblah"}, 4, 4)
    scores = note_scores(notes, GRID, seen=[])
    assert (scores["claims"], scores["ambiguous_lines"], scores["unparsed_lines"]) == (1, 2, 1)


def test_format_notes_reads_back_exactly_on_every_grid_size():
    rng = random.Random(7)
    for size in (4, 8, 16, 32):
        cells = {(r, c): rng.choice("SFHG") for r in range(size) for c in range(size) if rng.random() < 0.6}
        notes = parse_notes({"/memories/lake.md": format_notes(cells)}, size, size)
        assert notes.claims == {cell: {"HOLE" if k == "H" else "SAFE"} for cell, k in cells.items()}
        assert notes.unparsed_lines == notes.ambiguous_lines == 0


# --- digit runs (issue 37): bounded numbers, never an exception -------------------------------------------

DIGIT_TEMPLATES = [
    "SAFE at (1,{d})",
    "HOLE at ({d},1)",
    "({d},{d}): hole",
    "row {d} col 2: hole",
    "r{d}c1 hole",
    "[1,{d}]: safe",
    '{{"cell": [{d}, 1], "state": "hole"}}',
    '{{"holes": [[1, {d}]], "safe": [[{d}.5, 0]]}}',
    '{{"({d},1)": "hole"}}',
    "| row | col | type |\n|---|---|---|\n| {d} | 1 | H |",
    "| ({d},1) | hole |",
    "Holes:\n- (1,{d})",
    "Map (S=start, H=hole):\n0: {d}",
    "(1,1)={d}",
]


@given(
    n=st.integers(1_000, 100_000),
    template=st.sampled_from(DIGIT_TEMPLATES),
    digit=st.sampled_from("0123456789"),
)
@settings(max_examples=60, deadline=None)
def test_digit_runs_of_a_thousand_to_a_hundred_thousand_never_raise_and_are_unreadable(n, template, digit):
    text = template.format(d=digit * n)
    notes = parse_notes({"/memories/n.md": text, "/memories/ok.md": "HOLE at (1,1)"}, 8, 8)
    assert notes.claims == {(1, 1): {"HOLE"}}  # the digit run claims nothing; the good file is still read
    assert notes.unparsed_lines + notes.ambiguous_lines >= 1  # counted, never silently dropped


def test_a_digit_run_beside_claims_leaves_them_read():
    text = "SAFE at (0,1) " + "9" * 100_000 + "\nSAFE at (1," + "7" * 5000 + ")\nHOLE at (2,2)"
    notes = parse_notes({"/memories/n.md": text}, 4, 4)
    assert notes.claims == {(0, 1): {"SAFE"}, (2, 2): {"HOLE"}}
    assert notes.unparsed_lines == 1


NOTE_PIECES = [
    "SAFE", "HOLE", "hole", "safe", "not", "no longer", "was", "now", "->", "maybe", "?", ":", "=", ",", ";", ".",
    "and", "(3,4)", "( 1 , 2 )", "[2,3]", "r1c2", "row 2 col 3", "(9,9)", "H", "F", "S", "G", "|", "|---|", "{", "}",
    "[", "]", '"cell"', '"holes"', '"state"', "[[1,2]]", "true", "false", "Map:", "Holes:", "- ", "#", "```", "SFHG",
    "????", "\n", "\n", " ", "12345678", "changed from", "to", "at", "is", "isn't", "never", "x", "X = hole",
]


@given(st.lists(st.sampled_from(NOTE_PIECES) | st.text(max_size=6), max_size=60))
@settings(max_examples=150, deadline=None)
def test_any_mix_of_note_pieces_parses_without_error_to_claims_on_the_grid(pieces):
    text = " ".join(pieces)
    notes = parse_notes({"/memories/n.md": text}, 4, 4)
    assert all(0 <= r < 4 and 0 <= c < 4 and made <= {"SAFE", "HOLE"} for (r, c), made in notes.claims.items())
    assert notes.unparsed_lines <= len(text.split("\n"))
