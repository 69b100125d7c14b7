"""Where a sample's counts are kept, and how its epochs are reduced.

A scorer's ``Score.value`` holds a few headline values per sample (what
``inspect view`` shows as the sample list's score columns: detect's F1,
navigate's outcome and steps, ...); every count the metrics and the report
sum is in ``Score.metadata["counts"]`` (``COUNTS``). A sample's log keeps
each epoch's score as its scorer gave it.

Inspect hands a task's metrics each sample's score after its epochs are
reduced, and its own reducers reduce the value only: the reduced score keeps
the first epoch's metadata. So every task of the suite reduces its epochs
with ``counts_mean`` (``counted_epochs``, its ``Task(epochs=...)``), which
means the headline values as Inspect's ``mean`` does and the counts key-wise
in the same way: the counts the pooled metrics sum are what Inspect's ``mean``
left when the counts were the value, so every ratio of pooled counts stays
exact under ``--epochs``. A reducer passed with ``--epochs-reducer`` replaces
the task's: Inspect's own keep the first epoch's metadata, so with more than
one epoch the metrics that sum counts would read each sample's first epoch
only (the metrics over the headline values, ``success_rate``, ``f1_mean`` ...,
use that reducer as usual). With no reduction at all every epoch's own counts
reach the metrics, which sum them exactly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from inspect_ai import Epochs
from inspect_ai.scorer import SampleScore, Score, ScoreReducer, mean_score, score_reducer

#: The ``Score.metadata`` key of a sample's counts.
COUNTS = "counts"


def counts_of(score: Score) -> Mapping[str, Any] | None:
    """A score's counts: ``metadata["counts"]``, or for a score of a log
    written before they moved there, its value (then a dict of every count)."""
    counts = (score.metadata or {}).get(COUNTS)
    if isinstance(counts, Mapping):
        return counts
    return score.value if isinstance(score.value, Mapping) else None


def metric_counts(scores: Sequence[SampleScore]) -> list[Mapping[str, Any]]:
    """The counts of every scored sample, as the metrics sum them."""
    return [c for s in scores if (c := counts_of(s.score)) is not None]


@score_reducer
def counts_mean() -> ScoreReducer:
    """The epochs' mean, of the counts too: the headline values reduced by
    Inspect's ``mean``, and ``metadata["counts"]`` the key-wise mean of the
    epochs' counts by the same function (the rest of the metadata: the first
    epoch's, as Inspect's reducers keep it)."""
    mean = mean_score()

    def reduce(scores: list[Score]) -> Score:
        reduced = mean(scores)
        counted = [c for s in scores if isinstance(c := (s.metadata or {}).get(COUNTS), Mapping)]
        if not counted:
            return reduced
        counts = mean([Score(value=dict(c)) for c in counted]).value
        metadata = {**(reduced.metadata or {}), COUNTS: counts}
        return reduced.model_copy(update={"metadata": metadata})

    return reduce


def counted_epochs(epochs: int = 1) -> Epochs:
    """A task's epochs, reduced by ``counts_mean`` (``--epochs`` replaces the
    number and keeps this reducer; ``--epochs-reducer`` replaces the reducer)."""
    return Epochs(epochs, counts_mean())
