"""The detection metrics: each a pure ratio over a detect sample's counts
(``detection/counts.py``, ``*_of``) and, right after it, the task metric that
applies it (``harness/metrics.py``: ``pooled``). The report's tables call the
same ratio functions on the same records, so the log and the report agree."""

from __future__ import annotations

from inspect_ai.scorer import Metric, aggregate, mean, metric

from spatialstale_evals.detection.counts import DetectionCounts
from spatialstale_evals.harness.counts import f1_from_counts, ratio
from spatialstale_evals.harness.metrics import pooled


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
