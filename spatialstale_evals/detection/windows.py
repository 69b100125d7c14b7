"""The detect task's solver and scorer: audit every detection window of an
instance with the shared audit, then score entry-level confusion counts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from inspect_ai.log import transcript
from inspect_ai.model import ChatMessage, Model, get_model
from inspect_ai.scorer import Score, Target, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from spatialstale_evals.detection.counts import DetectionCounts, detection_value
from spatialstale_evals.detection.explain import explanation_lines, flagged_answer
from spatialstale_evals.detection.metrics import DETECTION_METRICS, precision_of, recall_of
from spatialstale_evals.detection.state import DetectionState
from spatialstale_evals.harness.audit import FORMATS, audit_entries, audit_span, audit_summary
from spatialstale_evals.harness.counts import PARSE_KEYS, confusion, edit_counts
from spatialstale_evals.harness.memory_text import MemoryStyle, written
from spatialstale_evals.harness.metrics import defined
from spatialstale_evals.harness.observe import Observed
from spatialstale_evals.harness.samples import InstanceSet, record_instance, stored_instance
from spatialstale_evals.harness.score_counts import COUNTS
from spatialstale_evals.world.instance import Instance, Window
from spatialstale_evals.world.render import RenderStyle

#: Store key of the per-window records the scorer reads.


@dataclass(frozen=True)
class DetectionSettings(Observed):
    """Everything a detect task fixes for its samples: its parameters, as
    validated by the task, in the order its samples' metadata names them
    (``Observed.parameters``). No defaults here: they are the task's
    (``harness.params.defaults``), in one place."""

    modality: str
    batch_size: int
    output: str
    threshold: float
    memory_style: MemoryStyle
    distractors: int
    render: RenderStyle
    structured_output: bool
    size: str


async def audit_window(
    model: Model,
    instance: Instance,
    window: Window,
    settings: DetectionSettings,
    conversation: list[ChatMessage] | None = None,
) -> dict[str, Any]:
    """One window's verdicts and counts against its truth (``instance`` as
    this run writes its store: its window labels cover the distractor notes),
    and the counts of its proposed corrections when the output has them. The
    audit is one span in the transcript, followed by its summary line; its
    prompts and replies are appended to ``conversation``."""
    label = f"audit step {window.step}"
    async with audit_span(label):
        result = await audit_entries(
            model,
            window.grid,
            (0, 0),
            instance.memory,
            modality=settings.observation,
            batch_size=settings.batch_size,
            output=settings.output,
            threshold=settings.threshold,
            label=label,
            structured=settings.structured_output,
            conversation=conversation,
        )
    edits = FORMATS[settings.output].edits
    flagged = sorted(result.flagged)
    record = {
        "step": window.step,
        "flagged": flagged,
        "judgements": [j.to_json() for j in result.judgements.values()],
        **confusion(instance.memory, result.flagged, window.labels, instance.g0),
        **(edit_counts(instance.memory, result.flagged, result.corrections, window.labels) if edits else {}),
        "entries": len(instance.memory),
        "calls": result.calls,
        **{k: result.counts.get(k, 0) for k in PARSE_KEYS},
    }
    summary = audit_summary(len(instance.memory), result.calls, record, "flagged", flagged)
    transcript().info(summary, source=label)
    return record


@solver
def audit_windows(instances: InstanceSet, settings: DetectionSettings) -> Solver:
    """Run the shared audit on every detection window (one for L1/L2, one per
    L3 event) and keep the verdicts for the scorer. The sample's messages are
    the audit's conversation: the system message, then each call's prompt and
    reply, window after window (each call was sent alone, with the system
    message: the Messages tab shows what the auditor saw and said)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        canonical = instances.begin(state)
        instance = written(canonical, settings.memory_style, settings.distractors)  # the store as this run writes it
        model = get_model()
        records: list[dict[str, Any]] = []
        state.messages = []  # the audit conversation replaces the placeholder input (as navigate's does)
        try:
            for window in instance.windows:
                records.append(await audit_window(model, instance, window, settings, state.messages))
        finally:
            # Also when an Inspect limit (tokens, time, messages) stops the
            # audit: Inspect still scores the sample, on the windows finished.
            state.store_as(DetectionState).windows = records
            record_instance(state, canonical)
        state.output.completion = f"{sum(len(r['flagged']) for r in records)} flags over {len(records)} window(s)"
        return state

    return solve


def detection_headline(totals: dict[str, float]) -> dict[str, float]:
    """What the sample list shows of a detect sample: its F1, precision and
    recall (NaN when undefined) and its entries without a usable verdict."""
    counts = DetectionCounts.total([totals])
    return {
        "f1": totals["f1"],
        "precision": defined(precision_of(counts)),
        "recall": defined(recall_of(counts)),
        "parse_failures": totals["parse_failures"],
    }


@scorer(metrics=DETECTION_METRICS)
def detection_scorer():
    """Entry-level TP/FP/FN/TN pooled over the sample's windows: the headline
    values as the score's value, every count in its metadata (``counts``); the
    explanation names, per window, the stale entries missed and the entries
    flagged wrongly (``explain.window_line``)."""

    async def score(state: TaskState, target: Target) -> Score:
        records = state.store_as(DetectionState).windows
        totals = detection_value(records)
        edits = (
            f"; {totals['corrections_right']} of {totals['tp'] + totals['fn']} stale entries corrected right "
            f"({totals['corrections']} corrections proposed)"
            if "corrections" in totals
            else ""
        )
        named = explanation_lines(stored_instance(state), records)
        return Score(
            value=detection_headline(totals),
            answer=flagged_answer(records),
            explanation=(
                f"F1 {totals['f1']:.3f} (tp {totals['tp']}, fp {totals['fp']}, fn {totals['fn']}) over "
                f"{len(records)} window(s); {totals['parse_failures']} entries without a usable verdict{edits}"
                + (f"\n\n{named}" if named else "")
            ),
            metadata={"windows": records, COUNTS: totals},
        )

    return score
