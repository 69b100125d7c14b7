"""The navigation metrics: the per-episode rates (Inspect's ``mean`` and
``stderr`` through ``aggregate``) and the pooled ratios over a navigate
sample's counts (``navigation/counts.py``, ``*_of``), each ratio right before
the task metric that applies it. The report's tables call the same ratio
functions on the same records, so the log and the report agree."""

from __future__ import annotations

from inspect_ai.scorer import Metric, aggregate, mean, metric, stderr

from spatialstale_evals.harness.counts import ratio
from spatialstale_evals.harness.metrics import Ratio, pooled
from spatialstale_evals.navigation.counts import NavigationCounts


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
