"""The probe task's scorer and ratios: each ratio one function over summed
counts, used by its Inspect metrics and by ``spatialstale report`` alike (as
``detection/metrics.py`` does for detect).

Accuracy = passed / asked, where asked = pass + fail + unparseable: a reply
without a usable answer is a failure to answer, counted against the model (and
apart, in ``parse_failure_rate``). Skipped probes (no placement) are not asked.
On stale targets the accuracy is STALE's named quantity (``state_resolution``,
``premise_resistance``, ``policy_adaptation``); on the controls it shows whether
the model just answers "changed" to everything. Balanced accuracy averages
the accuracy over the two classes of right answer (``ANSWER_CLASSES``: for
``explicit`` the cell's truth, safe or a hole; otherwise stale vs control), so
it is 0.5 for an agent that always says DANGER, always rejects the premise or
always avoids the target. ``empty_answers`` and ``truncated_answers`` count
the replies that were empty (no text, no move: unparseable, so failed) and
those a length limit cut (scored as they are).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from inspect_ai.scorer import Metric, Score, Target, scorer
from inspect_ai.solver import TaskState

from spatialstale_evals.harness.counts import ANSWER_FLAGS, ratio, sum_keys
from spatialstale_evals.harness.metrics import ANSWER_METRICS, defined, named_metric, pooled
from spatialstale_evals.harness.score_counts import COUNTS
from spatialstale_evals.probing.explain import explanation_lines
from spatialstale_evals.probing.probes import (
    COUNT_KEYS,
    DIMENSION_KINDS,
    DIMENSIONS,
    PROBES,
    count_key,
    probe_counts,
)
from spatialstale_evals.probing.state import ProbeState
from spatialstale_evals.world.targets import KINDS, SAFE_NOW_KINDS, STALE_KINDS

ProbeRatio = Callable[[Mapping[str, float]], float | None]
#: The outcomes of a probe that was asked.
ASKED = ("pass", "fail", "unparseable")


def total(records: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """The sum of every ``COUNT_KEYS`` count over ``records`` (missing or NaN: 0)."""
    return sum_keys(records, COUNT_KEYS)


def summed(c: Mapping[str, float], dimension: str, kinds: Iterable[str], outcomes: Iterable[str]) -> float:
    """The counts of ``dimension`` over ``kinds`` and ``outcomes``."""
    return sum(c[count_key(dimension, k, o)] for k in kinds for o in outcomes)


def accuracy_of(dimension: str, kinds: Iterable[str]) -> ProbeRatio:
    kinds = tuple(k for k in kinds if k in DIMENSION_KINDS[dimension])
    return lambda c: ratio(summed(c, dimension, kinds, ["pass"]), summed(c, dimension, kinds, ASKED))


def stale_kinds(dimension: str) -> tuple[str, ...]:
    return tuple(k for k in DIMENSION_KINDS[dimension] if k in STALE_KINDS)


def control_kinds(dimension: str) -> tuple[str, ...]:
    return tuple(k for k in DIMENSION_KINDS[dimension] if k not in STALE_KINDS)


#: The two classes of the right answer per dimension, whose accuracies the
#: balanced accuracy averages: explicit by the cell's truth (safe now / a hole
#: now), premise and implicit by whether memory is right (stale / control).
ANSWER_CLASSES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    d: (stale_kinds(d), control_kinds(d)) for d in DIMENSIONS
} | {"explicit": (SAFE_NOW_KINDS, tuple(k for k in KINDS if k not in SAFE_NOW_KINDS))}


def balanced_of(dimension: str) -> ProbeRatio:
    """The mean accuracy over the dimension's two answer classes: 0.5 for any
    agent that gives one answer to everything (always DANGER, always "the
    premise is false", always avoid)."""

    def compute(c: Mapping[str, float]) -> float | None:
        a, b = (accuracy_of(dimension, kinds)(c) for kinds in ANSWER_CLASSES[dimension])
        return None if a is None or b is None else (a + b) / 2

    return compute


def parse_failure_rate_of(c: Mapping[str, float]) -> float | None:
    asked = sum(summed(c, d, DIMENSION_KINDS[d], ASKED) for d in DIMENSIONS)
    return ratio(sum(summed(c, d, DIMENSION_KINDS[d], ["unparseable"]) for d in DIMENSIONS), asked)


def skipped_rate_of(c: Mapping[str, float]) -> float | None:
    """Implicit probes without a placement / implicit targets."""
    kinds = DIMENSION_KINDS["implicit"]
    return ratio(summed(c, "implicit", kinds, ["skipped"]), summed(c, "implicit", kinds, [*ASKED, "skipped"]))


def answers_flagged(flag: str, dimensions: Iterable[str] = DIMENSIONS) -> ProbeRatio:
    """How many replies of ``dimensions`` carry ``flag`` (``empty_answers`` / ``truncated_answers``)."""
    return lambda c: float(sum(c[f"{d}_{flag}"] for d in dimensions))


def _ratios() -> dict[str, ProbeRatio]:
    out: dict[str, ProbeRatio] = {}
    for d in DIMENSIONS:
        out[PROBES[d].stale_metric] = accuracy_of(d, stale_kinds(d))  # STALE's name for it
        out[f"{d}_control"] = accuracy_of(d, control_kinds(d))
        out[f"{d}_balanced"] = balanced_of(d)
    for d in DIMENSIONS:
        for kind in stale_kinds(d):
            out[f"{d}_{kind.removeprefix('stale_')}"] = accuracy_of(d, [kind])
    for flag in ANSWER_FLAGS:  # counts, not ratios: how many replies were empty / cut
        out[flag] = answers_flagged(flag)
    out["probe_parse_failure_rate"] = parse_failure_rate_of  # not parse_failure_rate: detect's metric has that name
    out["implicit_skipped_rate"] = skipped_rate_of
    return out


#: Every probe ratio by its metric name, in the order the logs show them.
PROBE_RATIOS: dict[str, ProbeRatio] = _ratios()


class ProbeCounts:
    """The probe counts as ``metrics.pooled`` sums them."""

    total = staticmethod(total)


def _metric(name: str, ratio_of: ProbeRatio) -> Metric:
    """The task metric ``name``: ``ratio_of`` over the sample counts summed (NaN when undefined)."""
    return named_metric(name, pooled(ratio_of, ProbeCounts))


#: The answer counts are the harness's (one metric of each name for probe and stale).
PROBE_METRICS = [ANSWER_METRICS.get(name) or _metric(name, ratio_of) for name, ratio_of in PROBE_RATIOS.items()]


def probe_headline(counts: Mapping[str, float]) -> dict[str, float]:
    """What the sample list shows of a probe sample: each dimension's balanced
    accuracy over its targets (NaN when a class of answer had no target, or
    the dimension was not asked) and its replies without a usable answer."""
    c = total([counts])
    headline = {f"{d}_balanced": defined(balanced_of(d)(c)) for d in DIMENSIONS}
    return headline | {"parse_failures": sum(summed(c, d, DIMENSION_KINDS[d], ["unparseable"]) for d in DIMENSIONS)}


@scorer(metrics=PROBE_METRICS)
def probe_scorer():
    """The sample's probe outcomes counted per dimension x target kind (in the
    metadata, ``counts``, with every probe), its headline values as the value;
    in the explanation one line per probe with its verdict."""

    async def score(state: TaskState, target: Target) -> Score:
        records = state.store_as(ProbeState).records
        counts = probe_counts(records)
        passed = sum(r["outcome"] == "pass" for r in records)
        asked = sum(r["outcome"] != "skipped" for r in records)
        lines = explanation_lines(records)
        return Score(
            value=probe_headline(counts),
            explanation=f"{passed} of {asked} probes passed ({len(records) - asked} skipped)"
            + (f"\n\n{lines}" if lines else ""),
            metadata={"probes": records, COUNTS: counts},
        )

    return score
