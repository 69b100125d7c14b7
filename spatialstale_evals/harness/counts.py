"""What two families count alike: how one audit window is counted against
the truth (detect's windows and navigate's audits: ``confusion``,
``edit_counts``), the answer flags of probe and stale, and how count records
are summed. Each family's own record is in its package
(``detection/counts.py``, ``navigation/counts.py``), its ratios beside its
metrics.

Pure Python (no Inspect, no pandas).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, TypeVar

from spatialstale_evals.world.grid import FROZEN, Grid
from spatialstale_evals.world.memory import SAFE, MemoryEntry, flipped
from spatialstale_evals.world.staleness import FREEZE, THAW

PARSE_KEYS = (
    "parse_failures",
    "missing",
    "invalid",
    "unknown_ids",
    "duplicate_ids",
    "unparseable_replies",
    "refusals",
)
#: Replies a grader could not fairly grade, counted by the tasks that ask
#: questions (probe per dimension, stale per sample): empty (no text, no tool
#: call) and cut at a length limit. One metric each (``harness/metrics.py``).
ANSWER_FLAGS = ("empty_answers", "truncated_answers")
T = TypeVar("T", bound="Counts")


def ratio(num: float, den: float) -> float | None:
    return float(num) / float(den) if den else None


def f1_from_counts(tp: float, fp: float, fn: float) -> float:
    """F1 = 2TP / (2TP + FP + FN); 0.0 when there is no true positive (a window
    with nothing stale and nothing flagged included)."""
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def sum_keys(records: Iterable[Mapping[str, Any]], names: Sequence[str]) -> dict[str, float]:
    """The sum of each of ``names`` over ``records`` (missing or NaN: 0)."""
    sums = dict.fromkeys(names, 0.0)
    for record in records:
        for name in names:
            value = record.get(name)
            sums[name] += 0.0 if value is None or value != value else float(value)
    return sums


def flagged_answers(records: Sequence[Mapping[str, Any]], flag: str) -> float:
    """How many replies carry ``flag`` (one of ``ANSWER_FLAGS``) over samples'
    counts: a sample's own total (key ``flag``: whole answers) and its totals
    per part (keys ``<part>_<flag>``, a probe's dimensions), summed."""
    whole = sum(int(r.get(flag, 0)) for r in records)
    parts = [k for k in dict.fromkeys(k for r in records for k in r) if k.endswith(f"_{flag}")]
    return float(whole + sum(sum_keys(records, parts).values()))


@dataclass(frozen=True)
class Counts:
    """Summable counts; ``n`` is how many records were summed."""

    n: float = 0

    @classmethod
    def total(cls: type[T], records: Iterable[Mapping[str, Any]]) -> T:
        """The field-wise sum of ``records`` (samples' counts or table rows; keys
        that are not fields are ignored, missing ones count 0)."""
        records = list(records)
        return cls(n=len(records), **sum_keys(records, [f.name for f in fields(cls) if f.name != "n"]))


@dataclass(frozen=True)
class ConfusionCounts(Counts):
    """The entry-level counts of audit windows against the truth (what
    ``confusion`` counts): the confusion matrix, the stale entries by kind and
    how many of each were flagged, the valid-SAFE control and the distractor
    notes."""

    tp: float = 0
    fp: float = 0
    fn: float = 0
    tn: float = 0
    stale_thaw: float = 0
    stale_freeze: float = 0
    thaw_flagged: float = 0
    freeze_flagged: float = 0
    valid_safe: float = 0
    valid_safe_flagged: float = 0
    distractors: float = 0
    distractors_flagged: float = 0


@dataclass(frozen=True)
class EditCounts(Counts):
    """The counts of proposed corrections (``output="edit"``, edit proposals):
    flagged entries with a corrected claim, those whose claim is right (the
    entry is stale and the claim is what its cell is now), flagged entries
    without one."""

    corrections: float = 0
    corrections_right: float = 0
    corrections_missing: float = 0


def count_keys(cls: type[Counts]) -> tuple[str, ...]:
    """The keys of a count record: the fields of ``cls`` but ``n``, in their order."""
    return tuple(f.name for f in fields(cls) if f.name != "n")


#: The keys of ``confusion``'s counts: ``ConfusionCounts``' fields.
CONFUSION_KEYS = count_keys(ConfusionCounts)
#: The keys of ``edit_counts``' counts: ``EditCounts``' fields.
EDIT_KEYS = count_keys(EditCounts)
def confusion(
    memory: Iterable[MemoryEntry], flagged: set[str], labels: Mapping[str, str | None], g0: Grid
) -> dict[str, int]:
    """Entry-level counts of one audit window against the truth (``labels``:
    entry id -> thaw / freeze / None). The valid-SAFE control counts only
    entries over frozen cells: S and G are SAFE too but can never go stale.
    A distractor note is never stale: a flag on it is a false positive, also
    counted apart (``distractors_flagged``), so the counts over cell entries
    are the rest."""
    counts = dict.fromkeys(CONFUSION_KEYS, 0)
    for entry in memory:
        kind, hit = labels.get(entry.id), entry.id in flagged
        counts["tp" if kind and hit else "fn" if kind else "fp" if hit else "tn"] += 1
        if kind == THAW:
            counts["stale_thaw"] += 1
            counts["thaw_flagged"] += hit
        elif kind == FREEZE:
            counts["stale_freeze"] += 1
            counts["freeze_flagged"] += hit
        elif entry.is_note:
            counts["distractors"] += 1
            counts["distractors_flagged"] += hit
        elif entry.claim == SAFE and g0[entry.row][entry.col] == FROZEN:
            counts["valid_safe"] += 1
            counts["valid_safe_flagged"] += hit
    return counts


def edit_counts(
    memory: Iterable[MemoryEntry], flagged: set[str], corrections: Mapping[str, str], labels: Mapping[str, str | None]
) -> dict[str, int]:
    """The proposed corrections of one audit window against the truth. A
    correction is right when its entry is stale and the claim is the one that
    holds now: the entry's claim flipped, as a change is an F<->H flip (a
    distractor note is never stale, so no correction of one is right). A
    flagged entry without a correction is counted apart; a valid verdict's
    correction is not asked for and not read (``parse_audit_reply``)."""
    counts = dict.fromkeys(EDIT_KEYS, 0)
    for entry in memory:
        if entry.id not in flagged:
            continue
        claim = corrections.get(entry.id)
        if claim is None:
            counts["corrections_missing"] += 1
            continue
        counts["corrections"] += 1
        counts["corrections_right"] += bool(labels.get(entry.id)) and claim == flipped(entry.claim)
    return counts
