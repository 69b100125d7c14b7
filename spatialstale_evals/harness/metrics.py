"""Every metric of the suite, defined once: a pure ratio over a count record
(``harness/counts.py``, ``*_of``) and, right after it, the task metric that
applies it.

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

from inspect_ai.scorer import Metric, SampleScore, aggregate, mean, metric, stderr

from spatialstale_evals.harness.counts import (
    ANSWER_FLAGS,
    Counts,
    DetectionCounts,
    NavigationCounts,
    f1_from_counts,
    flagged_answers,
    ratio,
)
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


# -- detection -----------------------------------------------------------------


def precision_of(c: DetectionCounts) -> float | None:
    return ratio(c.tp, c.tp + c.fp)


@metric
def precision() -> Metric:
    """Pooled TP / (TP + FP) over all entries and windows."""
    return pooled(precision_of, DetectionCounts)


def recall_of(c: DetectionCounts) -> float | None:
    return ratio(c.tp, c.tp + c.fn)


@metric
def recall() -> Metric:
    """Pooled TP / (TP + FN)."""
    return pooled(recall_of, DetectionCounts)


def f1_of(c: DetectionCounts) -> float:
    return f1_from_counts(c.tp, c.fp, c.fn)


@metric
def f1() -> Metric:
    """Pooled (micro) F1."""
    return pooled(f1_of, DetectionCounts)


@metric
def f1_mean() -> Metric:
    """Mean of per-sample F1 (the per-seed F1 the paper correlates with success)."""
    return aggregate("f1", mean())


def thaw_recall_of(c: DetectionCounts) -> float | None:
    return ratio(c.thaw_flagged, c.stale_thaw)


@metric
def thaw_recall() -> Metric:
    """Recall on thawed entries (SAFE claims whose cell is now a hole: the deadly
    misses); also the flag rate on stale-thaw entries of the paper's Figure 4 control."""
    return pooled(thaw_recall_of, DetectionCounts)


def freeze_recall_of(c: DetectionCounts) -> float | None:
    return ratio(c.freeze_flagged, c.stale_freeze)


@metric
def freeze_recall() -> Metric:
    """Recall on frozen entries (DANGER claims whose cell is now safe)."""
    return pooled(freeze_recall_of, DetectionCounts)


def flag_rate_valid_safe_of(c: DetectionCounts) -> float | None:
    return ratio(c.valid_safe_flagged, c.valid_safe)


@metric
def flag_rate_valid_safe() -> Metric:
    """How often a still-true SAFE entry over frozen ice is flagged (S and G can
    never go stale and are not counted); compare with thaw_recall: equal, the
    audit ignores the observation (the paper's Figure 4 control)."""
    return pooled(flag_rate_valid_safe_of, DetectionCounts)


def distractor_flag_rate_of(c: DetectionCounts) -> float | None:
    return ratio(c.distractors_flagged, c.distractors)


@metric
def distractor_flag_rate() -> Metric:
    """How often a distractor note (``distractors``, never stale) is flagged;
    each such flag is also one of the false positives of ``precision``."""
    return pooled(distractor_flag_rate_of, DetectionCounts)


def parse_failure_rate_of(c: DetectionCounts) -> float | None:
    return ratio(c.parse_failures, c.entries)


@metric
def parse_failure_rate() -> Metric:
    """Entries that got no usable verdict / entries audited."""
    return pooled(parse_failure_rate_of, DetectionCounts)


def edit_accuracy_of(c: DetectionCounts) -> float | None:
    return ratio(c.corrections_right, c.tp + c.fn)


@metric
def edit_accuracy() -> Metric:
    """Stale entries flagged with the right corrected claim / stale entries
    (``output="edit"``, docs/specification.md#edit-proposals): at most ``recall``, less by every flag
    that proposes no correction or the wrong one."""
    return pooled(edit_accuracy_of, DetectionCounts)


def edit_precision_of(c: DetectionCounts) -> float | None:
    return ratio(c.corrections_right, c.corrections)


@metric
def edit_precision() -> Metric:
    """Right corrections / all corrections proposed (a correction of a valid
    entry is never right: there was nothing to correct)."""
    return pooled(edit_precision_of, DetectionCounts)


# -- navigation ----------------------------------------------------------------


def rate_of(outcome: str) -> Ratio:
    """The share of episodes counted by ``outcome`` (success, death, timeout,
    death_on_stale): what ``mean()`` over per-episode flags gives."""

    def share(c: NavigationCounts) -> float | None:
        return ratio(getattr(c, outcome), c.n)

    return share


@metric
def success_rate() -> Metric:
    """Share of episodes that reached the goal."""
    return aggregate("success", mean())


@metric
def success_stderr() -> Metric:
    """Standard error of the success rate over samples (each sample's epochs averaged first)."""
    return aggregate("success", stderr())


@metric
def death_rate() -> Metric:
    """Share of episodes that ended in a hole."""
    return aggregate("death", mean())


@metric
def death_stderr() -> Metric:
    return aggregate("death", stderr())


@metric
def timeout_rate() -> Metric:
    """Share of episodes that used up their step budget."""
    return aggregate("timeout", mean())


@metric
def timeout_stderr() -> Metric:
    return aggregate("timeout", stderr())


def steps_of(outcome: str) -> Ratio:
    """Mean episode length of the episodes that ended in ``outcome`` (the paper's
    trajectory-length decomposition)."""

    def steps(c: NavigationCounts) -> float | None:
        return ratio(getattr(c, f"steps_if_{outcome}"), getattr(c, outcome))

    return steps


@metric
def steps_success() -> Metric:
    """Mean episode length of successes (the paper's trajectory decomposition)."""
    return pooled(steps_of("success"), NavigationCounts)


@metric
def steps_death() -> Metric:
    """Mean episode length of deaths."""
    return pooled(steps_of("death"), NavigationCounts)


@metric
def steps_timeout() -> Metric:
    """Mean episode length of timeouts."""
    return pooled(steps_of("timeout"), NavigationCounts)


@metric
def death_on_stale_rate() -> Metric:
    """Episodes that ended in a hole whose memory entry was stale, over all episodes."""
    return aggregate("death_on_stale", mean())


def fallback_rate_of(c: NavigationCounts) -> float | None:
    return ratio(c.fallbacks, c.steps)


@metric
def fallback_rate() -> Metric:
    """Decisions with no valid ``move`` call (greedy fallback) over all decisions."""
    return pooled(fallback_rate_of, NavigationCounts)


#: The task metrics, in the order the logs show them.
DETECTION_METRICS = [
    precision(),
    recall(),
    f1(),
    f1_mean(),
    thaw_recall(),
    freeze_recall(),
    flag_rate_valid_safe(),
    distractor_flag_rate(),
    parse_failure_rate(),
]
#: Beside the detection metrics when the audit proposes edits.
EDIT_METRICS = [edit_accuracy(), edit_precision()]
NAVIGATION_METRICS = [
    success_rate(),
    success_stderr(),
    death_rate(),
    death_stderr(),
    timeout_rate(),
    timeout_stderr(),
    steps_success(),
    steps_death(),
    steps_timeout(),
    death_on_stale_rate(),
    fallback_rate(),
]
