"""What a compaction kept, scored like notes: the claims a conversation holds
about cells, read with the notes' parser, against the lake and the agent's
sightings at the moment of the compaction.

A conversation is read message by message, in order, each message's text by
``notes.parse_notes`` (so a step prompt's observation, ``(r,c)=F``, is a SAFE
claim of each cell it shows, a viewed notes file its lines, a compaction
summary its sentences); a cell's claims are those of the *last* message that
claims it, since a later message supersedes an earlier one (as the parser's
update forms do inside a note). What the parser is unsure of it reads as
nothing: a death's answer (``into a hole at (r,c)``) is no claim.

Each compaction is recorded (``compaction_record``): when (episode, step,
request of the lifetime), the strategy, the tokens before and after as
Inspect's own ``CompactionEvent`` counted them, the claims of the messages it
was given and of those it kept (kept, lost, changed), and the kept claims'
note scores: ``note_balanced`` and its attainable bound over the cells the
agent had sighted by then, precision, hazard claims. The records are the
sample's (``CompactionLog``, per sample like the memory store), shown in the
transcript beside Inspect's compaction event and summed into the sample's
counts (``compaction_counts``: ``kept_*``; the scorer adds them only to
samples that compacted, so other runs' counts are as before).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from inspect_ai.model import ChatMessage
from inspect_ai.util import StoreModel
from pydantic import Field

from spatialstale_evals.lifetime.measures import CLASSES, balanced
from spatialstale_evals.lifetime.notes import Notes, note_scores, parse_notes
from spatialstale_evals.lifetime.records import KNOWABLE_KEYS, knowable_counts
from spatialstale_evals.world.grid import Cell, Grid


class CompactionLog(StoreModel):
    """The sample's compactions, one record each (``compaction_record``)."""

    records: list[dict[str, Any]] = Field(default_factory=list)
    #: Requests whose compaction Inspect found insufficient (sent whole).
    failures: int = 0


def message_text(message: ChatMessage) -> str:
    """A message's text as the parser reads it (its text parts; tool calls' arguments are not text)."""
    return message.text


def context_notes(messages: Sequence[ChatMessage], height: int, width: int) -> Notes:
    """The claims a conversation holds (module docstring): each message read
    alone, a cell's claims those of the last message that claims it."""
    out = Notes(files=len(messages))
    for message in messages:
        read = parse_notes({"message": message_text(message)}, height, width)
        out.claims.update(read.claims)
        out.unparsed_lines += read.unparsed_lines
        out.ambiguous_lines += read.ambiguous_lines
        out.memory_bytes += read.memory_bytes
    return out


def _defined(value: float) -> float | None:
    return None if value != value else value  # NaN -> None (records are JSON)


def compaction_record(
    before: Sequence[ChatMessage], after: Sequence[ChatMessage], grid: Grid, sightings: Mapping[Cell, str],
    event: Mapping[str, Any], when: Mapping[str, Any],
) -> dict[str, Any]:  # fmt: skip
    """One compaction: ``before`` the messages it was given, ``after`` those it
    kept (the input then sent, a summary included), scored on ``grid`` (the
    lake now) over ``sightings`` (each cell the agent has seen, as last seen);
    ``event`` Inspect's compaction event's fields, ``when`` where it happened."""
    height, width = len(grid), len(grid[0])
    old, new = context_notes(before, height, width), context_notes(after, height, width)
    knowable = knowable_counts(new, grid, sightings)
    scores = note_scores(new, grid, sightings)
    lost = [c for c in old.claims if c not in new.claims]
    changed = [c for c in old.claims if c in new.claims and new.claims[c] != old.claims[c]]
    kept = [c for c in old.claims if new.claims.get(c) == old.claims[c]]
    before_known = knowable_counts(old, grid, sightings)
    return {
        **when,
        **event,
        "messages_before": len(before),
        "messages_after": len(after),
        "cells_claimed_before": len(old.claims),
        "cells_claimed_after": len(new.claims),
        "cells_kept": len(kept),
        "cells_lost": len(lost),
        "cells_changed": len(changed),
        "lost": [list(c) for c in sorted(lost)],
        "kept": scores,
        "knowable": knowable,
        "note_balanced": _defined(balanced((knowable[f"told_{c}"], knowable[f"knowable_{c}"]) for c in CLASSES)),
        "note_attainable": _defined(
            balanced((knowable[f"sighted_{c}"], knowable[f"knowable_{c}"]) for c in CLASSES)
        ),
        "note_precision": _defined(scores["claims_true"] / scores["claims"] if scores["claims"] else float("nan")),
        "note_balanced_before": _defined(
            balanced((before_known[f"told_{c}"], before_known[f"knowable_{c}"]) for c in CLASSES)
        ),
    }


#: The count keys a sample's compactions add (``compaction_counts``).
KEPT_KEYS = (
    "compactions", "compaction_failures", "kept_claims", "kept_claims_true", "kept_hazard_claims", "kept_cells_lost",
    *(f"kept_{k}" for k in KNOWABLE_KEYS),
)  # fmt: skip


def compaction_counts(records: Sequence[Mapping[str, Any]], failures: int = 0) -> dict[str, float]:
    """A sample's compactions summed: how many (and how many failed), the kept
    claims (all, true, hazard), the cells lost, and the knowable counts of what
    each kept (``kept_knowable_safe`` ...: ``kept_balanced`` is ``note_balanced`` of them)."""
    counts = dict.fromkeys(KEPT_KEYS, 0.0)
    counts["compaction_failures"] = float(failures)
    for r in records:
        counts["compactions"] += 1
        counts["kept_claims"] += r["kept"]["claims"]
        counts["kept_claims_true"] += r["kept"]["claims_true"]
        counts["kept_hazard_claims"] += r["kept"]["hazard_claims"]
        counts["kept_cells_lost"] += r["cells_lost"]
        for k in KNOWABLE_KEYS:
            counts[f"kept_{k}"] += r["knowable"][k]
    return counts
