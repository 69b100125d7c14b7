"""The lifelong scorer and its metrics.

A sample's counts (``Score.metadata["counts"]``) are a flat dict: over all
its episodes (``success``, ``claims``, ``knowable_safe``, ``spl`` ...) and per
episode index (the same name with ``_<k>``, k from 1); its score value shows a
few scores of them (``HEADLINE``) and the episodes played. The metrics are
scores of counts summed over samples (micro averages, exact under epochs as
the suite's other metrics): pooled, and per episode index in one grouped
metric (``by_episode``). A score whose denominator is empty (no claims yet,
nothing to repair, no knowable cell) is NaN, not 0: "undefined" is not
"never".

The metric names are the task's own: the outcome rates are
``episode_success_rate`` ... (navigate's ``success_rate``, ``death_rate`` and
``timeout_rate`` are another task's metrics, registered under those names).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from inspect_ai.scorer import Metric, SampleScore, Score, Target, metric, scorer
from inspect_ai.solver import TaskState
from inspect_ai.util import store_as

from spatialstale_evals.harness.metrics import named_metric
from spatialstale_evals.harness.score_counts import COUNTS, metric_counts
from spatialstale_evals.lifetime.compactions import CompactionLog, compaction_counts
from spatialstale_evals.lifetime.episode import OUTCOMES, LifetimeState
from spatialstale_evals.lifetime.measures import CLASSES, balanced
from spatialstale_evals.lifetime.notes import DEATH_CAUSES, NOTE_KEYS
from spatialstale_evals.lifetime.records import KNOWABLE_KEYS
from spatialstale_evals.lifetime.shared import shared_counts
from spatialstale_evals.world.env import SUCCESS

#: Per-episode counts kept per episode index too.
INDEXED = (
    *OUTCOMES, "played", *NOTE_KEYS, *KNOWABLE_KEYS, "knowable", "told", "steps", "spl", "spl_episodes",
    "excess_steps", "hazards_acted_on", "repairable", "repaired", "tokens",
)  # fmt: skip


def episode_counts(record: Mapping[str, Any]) -> dict[str, float]:
    """One episode's counts."""
    counts: dict[str, float] = {k: float(record["outcome"] == k) for k in OUTCOMES}
    counts["played"] = 1.0
    counts.update({k: float(v) for k, v in record["notes"].items()})
    knowable = record.get("knowable") or {}
    counts.update({k: float(knowable.get(k, 0)) for k in KNOWABLE_KEYS})
    counts["knowable"] = sum(counts[f"knowable_{c}"] for c in CLASSES)
    counts["told"] = sum(counts[f"told_{c}"] for c in CLASSES)
    counts["steps"] = float(record.get("steps") or 0)
    spl = record.get("spl")
    counts["spl"], counts["spl_episodes"] = (0.0, 0.0) if spl is None else (float(spl), 1.0)
    excess = record.get("excess_steps")
    counts["excess_steps"] = float(excess) if excess is not None and record["outcome"] == SUCCESS else 0.0
    counts["hazards_acted_on"] = float(bool(record.get("hazard_acted_on")))
    counts["repairable"] = float(record["repair"]["repairable"])
    counts["repaired"] = float(record["repair"]["repaired"])
    counts["repair_removed"] = float(record["repair"]["removed"])
    counts.update({f"death_{c}": float(record["death_cause"] == c) for c in DEATH_CAUSES})
    counts["fallbacks"] = float(len(record["fallbacks"]))
    counts["memory_calls"] = float(record["memory_calls"])
    counts["tokens"] = float(record["tokens"])
    counts.update(shared_counts(record))  # memory=shared: per author and per (writer, reader); else nothing
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


#: The pooled ratios: name -> (numerator key, denominator key, what it is).
RATIOS: dict[str, tuple[str, str, str]] = {
    "episode_success_rate": ("success", "played", "Episodes that reached the goal / episodes played."),
    "episode_death_rate": ("death", "played", "Episodes that ended in a hole / episodes played."),
    "episode_timeout_rate": ("timeout", "played", "Episodes that ran out of steps / episodes played."),
    "episode_limit_rate": ("limit", "played", "Episodes an Inspect limit stopped / episodes played."),
    "spl": (
        "spl", "spl_episodes",
        "Success weighted by path length: success x shortest / max(shortest, steps), the safe shortest path on "
        "the lake at the episode's start; mean over episodes.",
    ),
    "excess_steps": ("excess_steps", "success", "Steps beyond the shortest path, per successful episode."),
    "episode_steps": ("steps", "played", "Steps per episode played."),
    "note_precision": ("claims_true", "claims", "Claims true at the episode start / claims (every claim counted)."),
    "note_recall": ("told", "knowable", "Knowable cells (seen in earlier episodes) told right / knowable cells."),
    "note_coverage": ("covered_cells", "seen_cells", "Knowable cells the notes claim / knowable cells."),
    "repair_rate": (
        "repaired", "repairable",
        "Claims contradicted by a sighting in the episode that its write-back corrected / such claims.",
    ),
    "stale_claims": ("stale_claims", "played", "Claims the lake contradicts, per episode start."),
    "hazard_claims": ("hazard_claims", "played", "SAFE claims on cells that are holes, per episode start."),
    "hazard_death_rate": (
        "hazards_acted_on", "played",
        "Episodes that died in a hole their notes called SAFE (a hazard claim acted on) / episodes played.",
    ),
    "conflicting_cells": ("conflicting_cells", "played", "Cells claimed both ways, per episode start."),
    "unparsed_lines": ("unparsed_lines", "played", "Lines no claim was read from, per episode start."),
    "memory_bytes": ("memory_bytes", "played", "The memory store's size in bytes, per episode start."),
    "fallback_rate": ("fallbacks", "played", "Fallback steps per episode."),
}  # fmt: skip
#: The balanced scores: name -> (the numerator key's prefix, what it is); each class's
#: share is ``<prefix>_<class> / knowable_<class>`` (``measures.balanced``).
BALANCED: dict[str, tuple[str, str]] = {
    "note_balanced": (
        "told",
        "Mean over the classes of knowable cells (now SAFE, now a hole) of the share the notes tell exactly right; "
        "a constant writer scores 0.5, no notes 0.",
    ),
    "note_attainable": ("sighted", "note_balanced of the last sightings themselves: the attainable bound."),
}
#: Every score's name, in the order the metrics log them.
SCORES = (*RATIOS, *BALANCED)
#: The scores shown per episode index (``by_episode``).
INDEXED_RATIOS = (
    "episode_success_rate", "episode_death_rate", "episode_timeout_rate", "spl", "excess_steps", "note_balanced",
    "note_attainable", "note_precision", "note_recall", "repair_rate", "hazard_claims",
)  # fmt: skip
#: Scores kept out of the log's metrics (counted, shown in the report's summary).
UNLOGGED = ("fallback_rate",)


def totals(values: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """Counts summed over samples."""
    summed: dict[str, float] = {}
    for value in values:
        for key, v in value.items():
            summed[key] = summed.get(key, 0.0) + float(v)
    return summed


def pooled_ratio(summed: Mapping[str, float], name: str, suffix: str = "") -> float:
    """The score ``name`` (``RATIOS`` or ``BALANCED``) of summed counts (of
    episode index ``suffix``, ``_k``); NaN when undefined."""
    if name in BALANCED:
        prefix = BALANCED[name][0]
        return balanced(
            (summed.get(f"{prefix}_{c}{suffix}", 0.0), summed.get(f"knowable_{c}{suffix}", 0.0)) for c in CLASSES
        )
    num, den, _ = RATIOS[name]
    return ratio(summed.get(num + suffix, 0.0), summed.get(den + suffix, 0.0))


def _score_metric(name: str) -> Metric:
    def compute(scores: list[SampleScore]) -> float:
        return pooled_ratio(totals(metric_counts(scores)), name)

    compute.__doc__ = (RATIOS[name][2] if name in RATIOS else BALANCED[name][1]) + " (NaN when undefined)"
    return compute


_INDEX = re.compile(r"^played_(\d+)$")


@metric
def by_episode() -> Metric:
    """The scores of ``INDEXED_RATIOS`` per episode index (``spl_1``,
    ``note_balanced_2`` ...): learning under L0, decay under L1-L3."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        summed = totals(metric_counts(scores))
        indices = sorted((m[1] for key in summed if (m := _INDEX.match(key))), key=lambda k: (len(k), k))
        return {f"{name}_{k}": pooled_ratio(summed, name, f"_{k}") for name in INDEXED_RATIOS for k in indices}

    return compute


LIFELONG_METRICS = [named_metric(name, _score_metric(name)) for name in SCORES if name not in UNLOGGED]
LIFELONG_METRICS.append(by_episode())


#: What the sample list shows of a lifetime (at most six values with ``played``):
#: outcomes memory can move, the Trust Gap's failure, and the note score no trivial writer can game.
HEADLINE = ("spl", "episode_success_rate", "episode_death_rate", "hazard_death_rate", "note_balanced")


def lifelong_headline(counts: Mapping[str, float]) -> dict[str, float]:
    """The lifetime's headline values: ``HEADLINE`` of its counts (NaN when
    undefined) and the episodes it played."""
    return {name: pooled_ratio(counts, name) for name in HEADLINE} | {"played": counts["played"]}


@scorer(metrics=LIFELONG_METRICS)
def lifelong_scorer(episodes: int):
    """The lifetime's headline values; its counts and episode records as metadata."""

    async def score(state: TaskState, target: Target) -> Score:
        records = store_as(LifetimeState).records
        outcomes = ", ".join(f"{r['episode']}: {r['outcome']}" for r in records) or "no episode played"
        counts = score_value(records, episodes)
        metadata: dict[str, Any] = {"episodes": records}
        log = store_as(CompactionLog)  # memory=transcript's (none elsewhere: counts as before)
        if log.records or log.failures:
            counts |= compaction_counts(log.records, log.failures)
            metadata["compactions"] = log.records
        return Score(
            value=lifelong_headline(counts),
            answer=outcomes,
            explanation=explanation(records),
            metadata=metadata | {COUNTS: counts},
        )

    return score


def _shown(value: float | None) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.2f}"


def explanation(records: Iterable[Mapping[str, Any]]) -> str:
    """One line per episode, as a list (``inspect view`` renders it as
    markdown): outcome and SPL, and the notes it began with."""
    lines = []
    for r in records:
        n = r["notes"]
        death = f" in {tuple(r['death_cell'])} ({r['death_cause']})" if r["death_cell"] else ""
        lines.append(
            f"- episode {r['episode']}: {r['outcome']} after {r['steps']} steps{death} "
            f"(shortest {r.get('shortest')}, SPL {_shown(r.get('spl'))}); notes at its start: "
            f"note_balanced {_shown(r.get('note_balanced'))} (attainable {_shown(r.get('note_attainable'))}), "
            f"{n['claims']} claims, {n['claims_true']} true, {n['hazard_claims']} hazards; "
            f"repaired {r['repair']['repaired']} of {r['repair']['repairable']}"
        )
    return "\n".join(lines)
