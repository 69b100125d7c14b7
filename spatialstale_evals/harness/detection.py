"""The detect task's solver and scorer: audit every detection window of an
instance with the shared audit, then score entry-level confusion counts."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from inspect_ai.model import get_model
from inspect_ai.scorer import Score, Target, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from spatialstale_evals.harness import metrics
from spatialstale_evals.harness.audit import audit_entries
from spatialstale_evals.harness.samples import InstanceSet, record_instance
from spatialstale_evals.world.memory import SAFE, MemoryEntry

CONFUSION_KEYS = (
    "tp",
    "fp",
    "fn",
    "tn",
    "stale_thaw",
    "stale_freeze",
    "thaw_flagged",
    "freeze_flagged",
    "valid_safe",
    "valid_safe_flagged",
)
PARSE_KEYS = (
    "parse_failures",
    "missing",
    "invalid",
    "unknown_ids",
    "duplicate_ids",
    "unparseable_replies",
    "refusals",
)
COUNT_KEYS = (*CONFUSION_KEYS, "entries", *PARSE_KEYS, "calls")


def confusion(
    memory: Iterable[MemoryEntry], flagged: set[str], thaw: Iterable[str], freeze: Iterable[str]
) -> dict[str, int]:
    """Entry-level counts of one audit window against the truth."""
    thaw, freeze = set(thaw), set(freeze)
    counts = dict.fromkeys(CONFUSION_KEYS, 0)
    for entry in memory:
        stale, hit = entry.id in thaw or entry.id in freeze, entry.id in flagged
        counts["tp" if stale and hit else "fn" if stale else "fp" if hit else "tn"] += 1
        if entry.id in thaw:
            counts["stale_thaw"] += 1
            counts["thaw_flagged"] += hit
        elif entry.id in freeze:
            counts["stale_freeze"] += 1
            counts["freeze_flagged"] += hit
        elif entry.claim == SAFE:
            counts["valid_safe"] += 1
            counts["valid_safe_flagged"] += hit
    return counts


def pooled(windows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    totals = {key: sum(w.get(key, 0) for w in windows) for key in COUNT_KEYS}
    totals["f1"] = metrics.f1_from_counts(totals["tp"], totals["fp"], totals["fn"])
    totals["windows"] = len(windows)
    return totals


@solver
def audit_windows(instances: InstanceSet, modality: str, batch_size: int, output: str, threshold: float) -> Solver:
    """Run the shared audit on every detection window (one for L1/L2, one per
    L3 event) and keep the verdicts for the scorer."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        instance = instances.begin(state)
        model = get_model()
        records: list[dict[str, Any]] = []
        try:
            for window, (step, grid) in zip(state.metadata["windows"], instance.detection_windows()):
                result = await audit_entries(
                    model,
                    grid,
                    (0, 0),
                    instance.memory,
                    modality=modality,
                    batch_size=batch_size,
                    output=output,
                    threshold=threshold,
                    label=f"audit step {step}",
                )
                records.append(
                    {
                        "step": step,
                        "flagged": sorted(result.flagged),
                        "judgements": [j.to_json() for j in result.judgements.values()],
                        **confusion(instance.memory, result.flagged, window["thaw"], window["freeze"]),
                        "entries": len(instance.memory),
                        "calls": result.calls,
                        **{k: result.counts.get(k, 0) for k in PARSE_KEYS},
                    }
                )
        finally:
            # Also when an Inspect limit (tokens, time, messages) stops the
            # audit: Inspect still scores the sample, on the windows finished.
            state.store.set("detect_windows", records)
            record_instance(state, instance)
        state.output.completion = f"{sum(len(r['flagged']) for r in records)} flags over {len(records)} window(s)"
        return state

    return solve


#: The task metrics, in the order the log shows them.
DETECTION_METRICS = [
    metrics.precision(),
    metrics.recall(),
    metrics.f1(),
    metrics.f1_mean(),
    metrics.thaw_recall(),
    metrics.freeze_recall(),
    metrics.flag_rate_valid_safe(),
    metrics.flag_rate_stale_thaw(),
    metrics.parse_failure_rate(),
]


@scorer(metrics=DETECTION_METRICS)
def detection_scorer():
    """Entry-level TP/FP/FN/TN pooled over the sample's windows."""

    async def score(state: TaskState, target: Target) -> Score:
        records = state.store.get("detect_windows", [])
        totals = pooled(records)
        return Score(
            value=totals,
            explanation=(
                f"F1 {totals['f1']:.3f} (tp {totals['tp']}, fp {totals['fp']}, fn {totals['fn']}) over "
                f"{len(records)} window(s); {totals['parse_failures']} entries without a usable verdict"
            ),
            metadata={"windows": records},
        )

    return score
