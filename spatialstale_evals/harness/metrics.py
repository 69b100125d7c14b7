"""Task metrics: the ratios of ``harness/counts.py`` as Inspect metrics, and
Inspect's own ``mean``/``stderr`` (through ``aggregate``) for the per-episode
rates.

Scores are dicts of counts. Pooled metrics sum the counts over all samples
(micro averages), which stays exact under ``--epochs``: the default mean
reducer scales every sample's counts by the same 1/epochs, and a ratio of sums
does not notice. An undefined ratio (zero denominator) reads 0.0 here.
"""

from __future__ import annotations

from collections.abc import Callable

from inspect_ai.scorer import Metric, SampleScore, aggregate, mean, metric, stderr

from spatialstale_evals.harness import counts
from spatialstale_evals.harness.counts import Counts, DetectionCounts, NavigationCounts


def _pooled(ratio: Callable[..., float | None], record: type[Counts]) -> Metric:
    def compute(scores: list[SampleScore]) -> float:
        value = ratio(record.total(s.score.value for s in scores))  # type: ignore[misc]
        return 0.0 if value is None else value

    return compute


# -- detection -----------------------------------------------------------------


@metric
def precision() -> Metric:
    """Pooled TP / (TP + FP) over all entries and windows."""
    return _pooled(counts.precision, DetectionCounts)


@metric
def recall() -> Metric:
    """Pooled TP / (TP + FN)."""
    return _pooled(counts.recall, DetectionCounts)


@metric
def f1() -> Metric:
    """Pooled (micro) F1."""
    return _pooled(counts.f1, DetectionCounts)


@metric
def f1_mean() -> Metric:
    """Mean of per-sample F1 (the per-seed F1 the paper correlates with success)."""
    return aggregate("f1", mean())


@metric
def thaw_recall() -> Metric:
    """Recall on thawed entries (SAFE claims whose cell is now a hole: the deadly
    misses); the flag rate on stale-thaw entries of the paper's Figure 4 control."""
    return _pooled(counts.thaw_recall, DetectionCounts)


@metric
def freeze_recall() -> Metric:
    """Recall on frozen entries (DANGER claims whose cell is now safe)."""
    return _pooled(counts.freeze_recall, DetectionCounts)


@metric
def flag_rate_valid_safe() -> Metric:
    """How often a still-true SAFE entry over frozen ice is flagged; compare with
    thaw_recall (equal: the audit ignores the observation; the paper's Figure 4)."""
    return _pooled(counts.flag_rate_valid_safe, DetectionCounts)


@metric
def parse_failure_rate() -> Metric:
    """Entries that got no usable verdict / entries audited."""
    return _pooled(counts.parse_failure_rate, DetectionCounts)


# -- navigation ----------------------------------------------------------------


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


@metric
def steps_success() -> Metric:
    """Mean episode length of successes (the paper's trajectory decomposition)."""
    return _pooled(counts.mean_steps("success"), NavigationCounts)


@metric
def steps_death() -> Metric:
    """Mean episode length of deaths."""
    return _pooled(counts.mean_steps("death"), NavigationCounts)


@metric
def steps_timeout() -> Metric:
    """Mean episode length of timeouts."""
    return _pooled(counts.mean_steps("timeout"), NavigationCounts)


@metric
def death_on_stale_rate() -> Metric:
    """Episodes that ended in a hole whose memory entry was stale, over all episodes."""
    return aggregate("death_on_stale", mean())


@metric
def fallback_rate() -> Metric:
    """Decisions with no valid ``move`` call (greedy fallback) over all decisions."""
    return _pooled(counts.fallback_rate, NavigationCounts)


#: The task metrics, in the order the logs show them.
DETECTION_METRICS = [
    precision(),
    recall(),
    f1(),
    f1_mean(),
    thaw_recall(),
    freeze_recall(),
    flag_rate_valid_safe(),
    parse_failure_rate(),
]
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
