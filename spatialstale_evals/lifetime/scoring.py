"""The lifelong scorer and its metrics.

A sample's counts (``Score.metadata["counts"]``) are a flat dict: over all
its episodes (``success``, ``claims``, ``repairable`` ...) and per episode
index (the same name with ``_<k>``, k from 1); its score value shows a few
ratios of them (``HEADLINE_RATIOS``) and the episodes played. The metrics
are ratios of counts summed over samples (micro averages, exact under epochs
as the suite's other metrics): pooled, and per episode index in one grouped metric (``by_episode``). A ratio
whose denominator is empty (no claims yet, nothing to repair) is NaN, not 0:
"undefined" is not "never".
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from inspect_ai.scorer import Metric, SampleScore, Score, Target, metric, scorer
from inspect_ai.solver import TaskState
from inspect_ai.util import store_as

from spatialstale_evals.harness.score_counts import COUNTS, metric_counts
from spatialstale_evals.lifetime.episode import OUTCOMES, LifetimeState
from spatialstale_evals.lifetime.notes import DEATH_CAUSES, NOTE_KEYS

#: Per-episode counts kept per episode index too.
INDEXED = (*OUTCOMES, "played", *NOTE_KEYS, "repairable", "repaired", "tokens")


def episode_counts(record: Mapping[str, Any]) -> dict[str, float]:
    """One episode's counts."""
    counts: dict[str, float] = {k: float(record["outcome"] == k) for k in OUTCOMES}
    counts["played"] = 1.0
    counts.update({k: float(v) for k, v in record["notes"].items()})
    counts["repairable"] = float(record["repair"]["repairable"])
    counts["repaired"] = float(record["repair"]["repaired"])
    counts["repair_removed"] = float(record["repair"]["removed"])
    counts.update({f"death_{c}": float(record["death_cause"] == c) for c in DEATH_CAUSES})
    counts["fallbacks"] = float(len(record["fallbacks"]))
    counts["memory_calls"] = float(record["memory_calls"])
    counts["tokens"] = float(record["tokens"])
    return counts


def score_value(records: Iterable[Mapping[str, Any]], episodes: int) -> dict[str, float]:
    """The sample's counts: summed over its episodes, and per episode index
    (an episode a limit stopped before it began counts as not played)."""
    value: dict[str, float] = {}
    by_index = {int(r["episode"]): episode_counts(r) for r in records}
    for counts in by_index.values():
        for key, v in counts.items():
            value[key] = value.get(key, 0.0) + v
    for k in range(1, episodes + 1):
        counts = by_index.get(k, {})
        value.update({f"{key}_{k}": counts.get(key, 0.0) for key in INDEXED})
    if not by_index:
        value.update({key: 0.0 for key in episode_counts(_EMPTY_RECORD)})
    return value


_EMPTY_RECORD: dict[str, Any] = {
    "outcome": None,
    "notes": {k: 0 for k in NOTE_KEYS},
    "repair": {"repairable": 0, "repaired": 0, "removed": 0},
    "death_cause": None,
    "fallbacks": [],
    "memory_calls": 0,
    "tokens": 0,
}


def ratio(num: float, den: float) -> float:
    """num / den, NaN when den is 0."""
    return num / den if den else math.nan


#: The pooled ratios: name -> (numerator key, denominator key).
RATIOS: dict[str, tuple[str, str]] = {
    "success_rate": ("success", "played"),
    "death_rate": ("death", "played"),
    "timeout_rate": ("timeout", "played"),
    "note_accuracy": ("claims_true", "claims"),
    "note_coverage": ("covered_cells", "seen_cells"),
    "repair_rate": ("repaired", "repairable"),
    "stale_claims": ("stale_claims", "played"),
    "hazard_claims": ("hazard_claims", "played"),
    "conflicting_cells": ("conflicting_cells", "played"),
    "unparsed_lines": ("unparsed_lines", "played"),
    "memory_bytes": ("memory_bytes", "played"),
    "fallback_rate": ("fallbacks", "played"),
}
#: The ratios shown per episode index (``by_episode``).
INDEXED_RATIOS = ("success_rate", "death_rate", "timeout_rate", "note_accuracy", "repair_rate", "hazard_claims")


def totals(values: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """Counts summed over samples."""
    summed: dict[str, float] = {}
    for value in values:
        for key, v in value.items():
            summed[key] = summed.get(key, 0.0) + float(v)
    return summed


def pooled_ratio(summed: Mapping[str, float], name: str, suffix: str = "") -> float:
    """The ratio ``name`` of summed counts (of episode index ``suffix``, ``_k``)."""
    num, den = RATIOS[name]
    played = "played" + suffix if den == "played" else den + suffix
    return ratio(summed.get(num + suffix, 0.0), summed.get(played, 0.0))


def _ratio_metric(name: str) -> Metric:
    def compute(scores: list[SampleScore]) -> float:
        return pooled_ratio(totals(metric_counts(scores)), name)

    return compute


@metric
def success_rate() -> Metric:
    """Episodes that reached the goal / episodes played."""
    return _ratio_metric("success_rate")


@metric
def death_rate() -> Metric:
    """Episodes that ended in a hole / episodes played."""
    return _ratio_metric("death_rate")


@metric
def timeout_rate() -> Metric:
    """Episodes that ran out of steps / episodes played."""
    return _ratio_metric("timeout_rate")


@metric
def note_accuracy() -> Metric:
    """Claims true at the episode start / claims (NaN with no claim at all)."""
    return _ratio_metric("note_accuracy")


@metric
def note_coverage() -> Metric:
    """Cells ever seen that the notes claim / cells ever seen, at episode starts."""
    return _ratio_metric("note_coverage")


@metric
def repair_rate() -> Metric:
    """Claims contradicted by a sighting in the episode that its write-back
    corrected / such claims (NaN when there was nothing to repair)."""
    return _ratio_metric("repair_rate")


@metric
def hazard_claims() -> Metric:
    """SAFE claims on cells that are holes, per episode start."""
    return _ratio_metric("hazard_claims")


@metric
def stale_claims() -> Metric:
    """Claims the lake contradicts, per episode start."""
    return _ratio_metric("stale_claims")


@metric
def conflicting_cells() -> Metric:
    """Cells claimed both ways, per episode start."""
    return _ratio_metric("conflicting_cells")


@metric
def unparsed_lines() -> Metric:
    """Lines no claim was read from, per episode start (counted, never penalised)."""
    return _ratio_metric("unparsed_lines")


@metric
def memory_bytes() -> Metric:
    """The memory store's size in bytes, per episode start."""
    return _ratio_metric("memory_bytes")


_INDEX = re.compile(r"^played_(\d+)$")


@metric
def by_episode() -> Metric:
    """Success, death and timeout rates, note accuracy, repair rate and hazard
    claims per episode index (``success_rate_1`` ...): learning under L0, decay
    under L1-L3."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        summed = totals(metric_counts(scores))
        indices = sorted((m[1] for key in summed if (m := _INDEX.match(key))), key=lambda k: (len(k), k))
        return {f"{name}_{k}": pooled_ratio(summed, name, f"_{k}") for name in INDEXED_RATIOS for k in indices}

    return compute


LIFELONG_METRICS = [
    success_rate(),
    death_rate(),
    timeout_rate(),
    note_accuracy(),
    note_coverage(),
    repair_rate(),
    stale_claims(),
    hazard_claims(),
    conflicting_cells(),
    unparsed_lines(),
    memory_bytes(),
    by_episode(),
]


#: What the sample list shows of a lifetime: these ratios of its own counts.
HEADLINE_RATIOS = ("success_rate", "death_rate", "note_accuracy", "repair_rate", "hazard_claims")


def lifelong_headline(counts: Mapping[str, float]) -> dict[str, float]:
    """The lifetime's headline values: ``HEADLINE_RATIOS`` of its counts (NaN
    when undefined) and the episodes it played."""
    return {name: pooled_ratio(counts, name) for name in HEADLINE_RATIOS} | {"played": counts["played"]}


@scorer(metrics=LIFELONG_METRICS)
def lifelong_scorer(episodes: int):
    """The lifetime's headline values; its counts and episode records as metadata."""

    async def score(state: TaskState, target: Target) -> Score:
        records = store_as(LifetimeState).records
        outcomes = ", ".join(f"{r['episode']}: {r['outcome']}" for r in records) or "no episode played"
        counts = score_value(records, episodes)
        return Score(
            value=lifelong_headline(counts),
            answer=outcomes,
            explanation=explanation(records),
            metadata={"episodes": records, COUNTS: counts},
        )

    return score


def explanation(records: Iterable[Mapping[str, Any]]) -> str:
    """One line per episode, as a list (``inspect view`` renders it as
    markdown): outcome, and the notes it began with."""
    lines = []
    for r in records:
        n = r["notes"]
        death = f" in {tuple(r['death_cell'])} ({r['death_cause']})" if r["death_cell"] else ""
        lines.append(
            f"- episode {r['episode']}: {r['outcome']} after {r['steps']} steps{death}; notes at its start: "
            f"{n['claims']} claims, {n['claims_true']} true, {n['hazard_claims']} hazards; "
            f"repaired {r['repair']['repaired']} of {r['repair']['repairable']}"
        )
    return "\n".join(lines)
