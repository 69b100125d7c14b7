"""The labelled corpus of note lines (``tests/fixtures/lifelong_notes_corpus.json``)
checked against the parser, entry by entry, and its result by form.

Each entry is a note as an agent writes it (one line, or several: JSON, a
table, a map, a list under a header) on an 8x8 lake, its form, and its label:
the claims a careful human reads (``SAFE 3,4; HOLE 5,6``), ``AMBIGUOUS`` (the
meaning is uncertain; with claims when only part of it is), or ``NOTHING``.
An entry's outcome is ``correct`` (the claims read are the label's and an
uncertain entry is counted ambiguous), ``nothing`` (a readable entry of which
nothing, or only part, was read), ``opposite`` (a claim read whose opposite
the label holds), ``ambiguous_as_firm`` (a claim read from the uncertain part
of an entry), ``extra`` (any other claim the label does not hold) or
``uncounted`` (an uncertain entry read as nothing but not counted ambiguous).

``python tests/_notes_corpus.py`` (``PYTHONPATH`` at the checkout) prints the table.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from spatialstale_evals.lifetime.notes import parse_notes

CORPUS = Path(__file__).parent / "fixtures" / "lifelong_notes_corpus.json"
SIZE = 8
OUTCOMES = ("correct", "nothing", "opposite", "ambiguous_as_firm", "extra", "uncounted")


def load() -> list[dict]:
    """The corpus entries, each text joined into one string."""
    entries = json.loads(CORPUS.read_text(encoding="utf-8"))
    for e in entries:
        e["text"] = "\n".join(e["text"]) if isinstance(e["text"], list) else e["text"]
    return entries


def label_of(label: str) -> tuple[set[tuple[tuple[int, int], str]], bool]:
    """(claims, uncertain) of a label."""
    claims, uncertain = set(), False
    for item in (part.strip() for part in label.split(";")):
        if item == "AMBIGUOUS":
            uncertain = True
        elif item != "NOTHING":
            claim, cell = item.split()
            r, c = cell.split(",")
            claims.add(((int(r), int(c)), claim))
    return claims, uncertain


def outcome(entry: dict) -> tuple[str, set, set]:
    """The entry's outcome (module docstring), the claims read, the label's claims."""
    notes = parse_notes({"/memories/notes.md": entry["text"]}, SIZE, SIZE)
    read = {(cell, claim) for cell, made in notes.claims.items() for claim in made}
    want, uncertain = label_of(entry["label"])
    if any((cell, {"SAFE": "HOLE", "HOLE": "SAFE"}[claim]) in want for cell, claim in read):
        return "opposite", read, want
    if read - want:
        return ("ambiguous_as_firm" if uncertain else "extra"), read, want
    if read != want:
        return "nothing", read, want
    if uncertain and not notes.ambiguous_lines:
        return "uncounted", read, want
    return "correct", read, want


def table() -> dict[str, Counter]:
    """Outcomes per form, and the readable entries per form (``readable``)."""
    by_form: dict[str, Counter] = {}
    for e in load():
        got, _, want = outcome(e)
        counts = by_form.setdefault(e["form"], Counter())
        counts[got] += 1
        counts["entries"] += 1
        if want:
            counts["readable"] += 1
            counts["readable_correct"] += got == "correct"
    return by_form


if __name__ == "__main__":
    forms = table()
    total = sum(forms.values(), Counter())
    cols = ("entries", *OUTCOMES, "readable", "readable_correct")
    print("| form | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for name, counts in [*forms.items(), ("all", total)]:
        print(f"| {name} | " + " | ".join(str(counts[c]) for c in cols) + " |")
    share = total["readable_correct"] / total["readable"]
    print(f"\nreadable entries read correctly: {total['readable_correct']}/{total['readable']} = {share:.3f}")
    for e in load():
        got, read, want = outcome(e)
        if got != "correct":
            print(f"{got:18} {e['form']:12} {e['text'][:70]!r} read={sorted(read)[:4]}")
