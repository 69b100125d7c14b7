"""How the suite's metrics are made, and the metrics two families share.

Each family defines its own metrics in its package (``detection/metrics.py``,
``navigation/metrics.py``, ``probing/scoring.py``, ...), each a pure ratio over
a count record (``*_of``) and, right after it, the task metric that applies it,
with the helpers here; the answer counts (``ANSWER_METRICS``: empty and cut
replies) are probe's and stale's alike, registered once here.

The report's tables call the same ratio functions on the same records, so the
log's metrics and the report cannot disagree. A ratio with a zero denominator
is None: undefined, logged as NaN by every task's metrics and shown as "-" in
the report (never 0.0, which a reader of the log would take for a measured
zero). Metrics whose name is made at run time (a probe dimension, a STALE
cell) are built by ``named_metric``; the rest are ``@metric`` functions over
``pooled``: both register an Inspect metric, so ``inspect score`` finds them. The
per-episode rates and their standard errors are Inspect's own ``mean`` and
``stderr`` through ``aggregate``.

A sample's counts are in its ``Score.metadata["counts"]``, its
``Score.value`` holds its headline values (``harness/score_counts.py``).
Pooled metrics sum the counts over all samples (micro averages), which stays
exact under ``--epochs``: the suite's reducer (``counts_mean``) scales every
sample's counts by the same 1/epochs, and a ratio of sums does not notice.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from inspect_ai.scorer import Metric, SampleScore, metric

from spatialstale_evals.harness.counts import ANSWER_FLAGS, Counts, flagged_answers
from spatialstale_evals.harness.score_counts import metric_counts

Ratio = Callable[..., float | None]


class Summable(Protocol):
    """A count record type: ``total`` sums samples' counts into one record."""

    def total(self, records: Iterable[Mapping[str, Any]]) -> Any: ...


def defined(value: float | None) -> float:
    """A ratio as a metric logs it: None (an empty denominator) is NaN."""
    return math.nan if value is None else float(value)


def pooled(ratio_of: Ratio, record: type[Counts] | Summable) -> Metric:
    """A task metric that sums every sample's counts into ``record`` and applies ``ratio_of`` (NaN when undefined)."""

    def compute(scores: list[SampleScore]) -> float:
        return defined(ratio_of(record.total(metric_counts(scores))))  # type: ignore[misc]

    return compute


def named_metric(name: str, compute: Metric) -> Metric:
    """The Inspect metric ``name`` computing ``compute`` (registered, as ``@metric`` registers)."""
    return metric(name=name)(lambda: compute)()


def _flagged(flag: str) -> Metric:
    def compute(scores: list[SampleScore]) -> float:
        return flagged_answers(metric_counts(scores), flag)

    return compute


#: ``empty_answers`` and ``truncated_answers``: how many replies were empty / cut,
#: over a probe or a stale run alike (one registered metric per name).
ANSWER_METRICS: dict[str, Metric] = {flag: named_metric(flag, _flagged(flag)) for flag in ANSWER_FLAGS}
