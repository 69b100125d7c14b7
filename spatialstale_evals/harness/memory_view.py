"""The navigator's memory view: which entries it is shown, and how a judged
entry reads (the filter modes of SPEC 8.3).

A strategy's judgements leave one decision per entry: ``keep`` (judged true,
or never judged), ``contradicted`` (judged out of date) or ``unverified``
(the runtime resolver has not seen its cell). The view renders them:

- ``keep``: the entry as written;
- ``contradicted``, by ``filter_mode``: ``delete`` (the paper: the entry is
  not shown), ``mark`` (its claim replaced by an explicit unknown marker) or
  ``history`` (kept verbatim, labelled as contradicted since the step it was
  judged at): "the point is labelling, not amnesia";
- ``unverified``: as written, labelled as unverified history.

The exact strings are in ``harness/prompts.py`` (``FILTER_MARK``,
``FILTER_HISTORY``, ``UNVERIFIED``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from spatialstale_evals.harness import prompts
from spatialstale_evals.world.memory import MemoryEntry

#: How a contradicted entry is shown (the navigate task's ``filter_mode``).
FilterMode = Literal["delete", "mark", "history"]
FILTER_MODES: tuple[FilterMode, ...] = ("delete", "mark", "history")
Decision = Literal["keep", "contradicted", "unverified"]
#: How a note in the view reads: as written, marked unknown, labelled contradicted, labelled unverified.
Status = Literal["as_written", "marked", "history", "unverified"]


@dataclass(frozen=True)
class Note:
    """One line of the memory view."""

    entry: MemoryEntry
    text: str
    status: Status = "as_written"

    @property
    def shows_claim(self) -> bool:
        """Whether the view presents the entry's claim as true: as written, or
        unverified; not marked unknown, nor labelled contradicted."""
        return self.status in ("as_written", "unverified")


def note(entry: MemoryEntry, decision: Decision, mode: FilterMode, step: int | None) -> Note | None:
    """How one entry reads under its decision; None when it is not shown."""
    if decision == "keep":
        return Note(entry, entry.text)
    if decision == "unverified":
        return Note(entry, entry.text + prompts.UNVERIFIED, "unverified")
    if mode == "delete":
        return None
    if mode == "mark":
        marked = prompts.FILTER_MARK_NOTE if entry.is_note else prompts.FILTER_MARK
        return Note(entry, marked.format(id=entry.id, row=entry.row, col=entry.col), "marked")
    return Note(entry, entry.text + prompts.FILTER_HISTORY.format(step=step), "history")


def build_view(
    memory: Sequence[MemoryEntry],
    decisions: Mapping[str, Decision],
    mode: FilterMode = "delete",
    steps: Mapping[str, int] | None = None,
) -> list[Note]:
    """The view of ``memory`` in store order; entries without a decision are kept."""
    notes = (note(e, decisions.get(e.id, "keep"), mode, (steps or {}).get(e.id)) for e in memory)
    return [n for n in notes if n is not None]
