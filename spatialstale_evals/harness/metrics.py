"""Task metrics. Scores are dicts of counts; metrics pool the counts over all
samples (micro averages), which stays exact under ``--epochs``: the default
mean reducer scales every sample's counts by the same 1/epochs, and a ratio
of sums does not notice."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from inspect_ai.scorer import Metric, SampleScore, metric


def _sum(scores: Sequence[SampleScore], key: str) -> float:
    return sum(float(s.score.value[key]) for s in scores)  # type: ignore[index]


def _ratio(scores: Sequence[SampleScore], num: str, den: str | tuple[str, ...]) -> float:
    dens = (den,) if isinstance(den, str) else den
    denominator = sum(_sum(scores, d) for d in dens)
    return _sum(scores, num) / denominator if denominator else 0.0


def _mean(scores: Sequence[SampleScore], key: str) -> float:
    return _sum(scores, key) / len(scores) if scores else 0.0


def _stderr(scores: Sequence[SampleScore], key: str) -> float:
    n = len(scores)
    if n < 2:
        return 0.0
    mu = _mean(scores, key)
    var = sum((float(s.score.value[key]) - mu) ** 2 for s in scores) / (n - 1)  # type: ignore[index]
    return math.sqrt(var / n)


def _typed(fn: Callable[[list[SampleScore]], float]) -> Metric:
    """Inspect passes SampleScores only to metrics whose parameter says so."""

    def compute(scores: list[SampleScore]) -> float:
        return fn(scores)

    return compute


def f1_from_counts(tp: float, fp: float, fn: float) -> float:
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


# -- detection -----------------------------------------------------------------


@metric
def precision() -> Metric:
    """Pooled TP / (TP + FP) over all entries and windows."""
    return _typed(lambda scores: _ratio(scores, "tp", ("tp", "fp")))


@metric
def recall() -> Metric:
    """Pooled TP / (TP + FN)."""
    return _typed(lambda scores: _ratio(scores, "tp", ("tp", "fn")))


@metric
def f1() -> Metric:
    """Pooled (micro) F1."""
    return _typed(lambda scores: f1_from_counts(_sum(scores, "tp"), _sum(scores, "fp"), _sum(scores, "fn")))


@metric
def f1_mean() -> Metric:
    """Mean of per-sample F1 (the per-seed F1 the paper correlates with success)."""
    return _typed(lambda scores: _mean(scores, "f1"))


@metric
def thaw_recall() -> Metric:
    """Recall on thawed entries (SAFE claims whose cell is now a hole: the deadly misses)."""
    return _typed(lambda scores: _ratio(scores, "thaw_flagged", "stale_thaw"))


@metric
def freeze_recall() -> Metric:
    """Recall on frozen entries (DANGER claims whose cell is now safe)."""
    return _typed(lambda scores: _ratio(scores, "freeze_flagged", "stale_freeze"))


@metric
def flag_rate_valid_safe() -> Metric:
    """How often a still-true SAFE entry is flagged. Compare with flag_rate_stale_thaw:
    equal rates mean the audit ignores the observation (the paper's Figure 4 control)."""
    return _typed(lambda scores: _ratio(scores, "valid_safe_flagged", "valid_safe"))


@metric
def flag_rate_stale_thaw() -> Metric:
    """How often a SAFE entry whose cell is now a hole is flagged."""
    return _typed(lambda scores: _ratio(scores, "thaw_flagged", "stale_thaw"))


@metric
def parse_failure_rate() -> Metric:
    """Entries that got no usable verdict / entries audited."""
    return _typed(lambda scores: _ratio(scores, "parse_failures", "entries"))


# -- navigation ----------------------------------------------------------------


@metric
def success_rate() -> Metric:
    return _typed(lambda scores: _mean(scores, "success"))


@metric
def success_stderr() -> Metric:
    return _typed(lambda scores: _stderr(scores, "success"))


@metric
def death_rate() -> Metric:
    return _typed(lambda scores: _mean(scores, "death"))


@metric
def death_stderr() -> Metric:
    return _typed(lambda scores: _stderr(scores, "death"))


@metric
def timeout_rate() -> Metric:
    return _typed(lambda scores: _mean(scores, "timeout"))


@metric
def timeout_stderr() -> Metric:
    return _typed(lambda scores: _stderr(scores, "timeout"))


@metric
def steps_success() -> Metric:
    """Mean episode length of successes (the paper's trajectory decomposition)."""
    return _typed(lambda scores: _ratio(scores, "steps_if_success", "success"))


@metric
def steps_death() -> Metric:
    """Mean episode length of deaths."""
    return _typed(lambda scores: _ratio(scores, "steps_if_death", "death"))


@metric
def steps_timeout() -> Metric:
    """Mean episode length of timeouts."""
    return _typed(lambda scores: _ratio(scores, "steps_if_timeout", "timeout"))


@metric
def death_on_stale_rate() -> Metric:
    """Episodes that ended in a hole whose memory entry was stale, over all episodes."""
    return _typed(lambda scores: _mean(scores, "death_on_stale"))


@metric
def fallback_rate() -> Metric:
    """Decisions with no valid ``move`` call (greedy fallback) over all decisions."""
    return _typed(lambda scores: _ratio(scores, "fallbacks", "steps"))
