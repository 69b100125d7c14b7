"""The navigator's memory view: which entries it is shown, and how a judged
entry reads (docs/specification.md#the-runtime-resolver-and-filter-modes).

A strategy's judgements leave one decision per entry: ``keep`` (judged true,
or never judged), ``contradicted`` (judged out of date) or ``unverified``
(the runtime resolver has not seen its cell). The view renders them:

- ``keep``: the entry as written;
- ``contradicted``, by ``filter_mode``: ``delete`` (the paper: the entry is
  not shown), ``mark`` (its claim replaced by an explicit unknown marker),
  ``history`` (kept verbatim, labelled as contradicted since the step it was
  judged at): "the point is labelling, not amnesia"; the label names its
  authority: an observation (an audit of cells in view, the resolver's
  sightings) or, for ``oracle``, the ground truth, which never claims a
  sighting that did not happen (``Authority``); or ``correct`` (edit
  proposals: rewritten with the claim the judgement proposes, labelled as
  corrected, with the claim it was written with: repair instead of deletion;
  an entry judged without a proposed claim, or with its own claim proposed
  again, or a distractor note (about no cell) is not shown, as with ``delete``);
- ``unverified``: as written, labelled as unverified history.

The exact strings are in ``harness/prompts.py`` (``FILTER_MARK``,
``FILTER_HISTORY``, ``FILTER_HISTORY_TRUTH``, ``FILTER_CORRECTED``, ``UNVERIFIED``); a corrected entry
is written in the entry format (``world/memory.py``) with the new claim.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

from spatialstale_evals.harness import prompts
from spatialstale_evals.world.memory import MemoryEntry, entry_text, kind_of

#: How a contradicted entry is shown (the navigate task's ``filter_mode``).
FilterMode = Literal["delete", "mark", "history", "correct"]
FILTER_MODES: tuple[FilterMode, ...] = get_args(FilterMode)
#: The filter modes that show what a judgement proposes the entry should say
#: (they need a strategy whose judgements propose it: ``MemoryPolicy.corrects``).
NEEDS_CORRECTIONS: frozenset[str] = frozenset({"correct"})
Decision = Literal["keep", "contradicted", "unverified"]
#: What found a contradicted entry out of date: something the agent observed, or the ground truth.
Authority = Literal["observation", "truth"]
#: The ``history`` label of each authority.
HISTORY_LABELS: dict[str, str] = {"observation": prompts.FILTER_HISTORY, "truth": prompts.FILTER_HISTORY_TRUTH}
#: How a note in the view reads: as written, marked unknown, labelled
#: contradicted, rewritten with a corrected claim, labelled unverified.
Status = Literal["as_written", "marked", "history", "corrected", "unverified"]


@dataclass(frozen=True)
class Note:
    """One line of the memory view (``claim``: the claim a corrected one presents)."""

    entry: MemoryEntry
    text: str
    status: Status = "as_written"
    claim: str | None = None

    @property
    def shows_claim(self) -> bool:
        """Whether the view presents the entry's claim as true: as written, or
        unverified; not marked unknown, labelled contradicted, nor corrected
        (a correction always states the other claim: ``note``)."""
        return self.status in ("as_written", "unverified")


def corrected_note(entry: MemoryEntry, claim: str, step: int | None) -> Note:
    """The entry rewritten with ``claim``, labelled with the claim it was written with."""
    text = entry_text(entry.id, entry.row, entry.col, kind_of(claim))
    return Note(entry, text + prompts.FILTER_CORRECTED.format(step=step, claim=entry.claim), "corrected", claim)


def note(
    entry: MemoryEntry,
    decision: Decision,
    mode: FilterMode,
    step: int | None,
    correction: str | None = None,
    authority: Authority = "observation",
) -> Note | None:
    """How one entry reads under its decision; None when it is not shown."""
    if decision == "keep":
        return Note(entry, entry.text)
    if decision == "unverified":
        return Note(entry, entry.text + prompts.UNVERIFIED, "unverified")
    if mode == "correct" and correction not in (None, entry.claim) and not entry.is_note:
        return corrected_note(entry, correction, step)
    if mode in ("delete", "correct"):
        return None
    if mode == "mark":
        marked = prompts.FILTER_MARK_NOTE if entry.is_note else prompts.FILTER_MARK
        return Note(entry, marked.format(id=entry.id, row=entry.row, col=entry.col), "marked")
    return Note(entry, entry.text + HISTORY_LABELS[authority].format(step=step), "history")


def build_view(
    memory: Sequence[MemoryEntry],
    decisions: Mapping[str, Decision],
    mode: FilterMode = "delete",
    steps: Mapping[str, int] | None = None,
    corrections: Mapping[str, str] | None = None,
    authority: Authority = "observation",
) -> list[Note]:
    """The view of ``memory`` in store order; entries without a decision are
    kept; ``corrections``: the claim proposed for a contradicted entry;
    ``authority``: what found the contradicted entries out of date."""
    steps, corrections = steps or {}, corrections or {}
    notes = (
        note(e, decisions.get(e.id, "keep"), mode, steps.get(e.id), corrections.get(e.id), authority) for e in memory
    )
    return [n for n in notes if n is not None]
