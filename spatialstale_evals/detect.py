"""SpatialSTALE ``detect``: can a model tell which of its memory entries the
current observation contradicts?

    inspect eval spatialstale_evals/detect.py --model openai/gpt-4o
    inspect eval spatialstale_evals/detect.py -T regime=L2 -T modality=image --model ...
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task

from spatialstale_evals.detection.explain import sample_text
from spatialstale_evals.detection.metrics import DETECTION_METRICS, EDIT_METRICS
from spatialstale_evals.detection.windows import DetectionSettings, audit_windows, detection_scorer
from spatialstale_evals.harness.audit import FORMATS, AuditOutput, check_output
from spatialstale_evals.harness.memory_text import FACTORS, MemoryStyle, check_memory
from spatialstale_evals.harness.observe import OBSERVATIONS, Modality
from spatialstale_evals.harness.params import check_choice, check_positive_int
from spatialstale_evals.harness.score_counts import counted_epochs
from spatialstale_evals.harness.task_body import GridTaskBody, image_args
from spatialstale_evals.metadata import task_version
from spatialstale_evals.world.dataset import Size
from spatialstale_evals.world.regimes import RegimeName
from spatialstale_evals.world.render import CELL_PX, Marker, PaletteName


@task
@image_args
def detect(
    regime: RegimeName = "L1",
    modality: Modality = "text",
    batch_size: int = 10,
    output: AuditOutput = "binary",
    threshold: float = 0.7,
    dataset: str | None = None,
    size: Size = "8x8",
    memory_style: MemoryStyle = "plain",
    distractors: int = 0,
    image_labels: bool = True,
    image_palette: PaletteName = "paper",
    image_cell_px: int = CELL_PX,
    image_marker: Marker = "triangle",
    structured_output: bool = False,
    **unknown: Any,
) -> Task:
    """Staleness detection: audit every memory entry against the current grid.

    One sample per instance. L1/L2 have one detection window (after the
    pre-game changes); L3 has one per scheduled event, each a full audit of all
    entries against the cumulative grid, with counts pooled per sample.
    A parameter this signature does not name is an error. The defaults are the
    paper's protocol.

    Args:
        regime: Change regime: ``L1`` (scattered), ``L2`` (clustered), ``L3`` (online)
            or ``L0`` (ours: nothing changes; every flag is a false positive).
        modality: How the grid is shown: ``text`` (the coordinate list) or
            ``image`` (the rendered PNG). Memory entries are text in both.
        batch_size: Entries per audit call (B). The paper uses 10 and ablates
            1, 5, 10, 20 and 64; each window costs ceil(N / B) calls.
        output: ``binary`` (``is_stale`` true/false, the paper's default),
            ``continuous`` (a ``staleness`` score in [0, 1], flagged at ``threshold``)
            or ``edit`` (ours: ``is_stale`` and the ``corrected`` claim; adds
            ``edit_accuracy`` and ``edit_precision``).
        threshold: Flag threshold tau for ``continuous`` output (paper's best: 0.7);
            another value with another output is an error.
        dataset: Dataset folder made by ``spatialstale datasets generate``;
            default the canonical ``spatialstale-v1`` shipped in the package.
        size: Grid size: ``8x8`` (the paper's), ``16x16`` or ``32x32``, each a
            canonical set of 50 instances per regime; with ``dataset``, that folder
            if it is of this size, else its sub-folder named after it (docs/dataset.md).
        memory_style: How each entry is written: ``plain`` (the paper's text),
            ``detailed`` (with its provenance from the exploration walks) or
            ``confident`` (with an assertion of certainty). docs/memory.md, Factors.
        distractors: Non-spatial notes mixed into the store (0 to 16), drawn
            from the seed and audited with the entries; never stale, so a flag
            on one is a false positive, also counted apart (``distractor_flag_rate``).
        image_*: The rendering options (image modality): ``harness/task_body.py``, ``IMAGE_ARGS``.
        structured_output: Pass the verdict schema of ``output`` as Inspect's
            ``response_schema`` with every audit call, for providers that
            constrain replies to it (docs/models.md); off: the paper's protocol.
    """
    body = GridTaskBody(detect, locals(), FACTORS)
    check_choice("modality", modality, OBSERVATIONS)
    threshold = check_output(detect, output, threshold)
    check_positive_int("batch_size", batch_size)
    check_memory(memory_style, distractors)
    body.check_options(size, structured_output)
    instances = body.load(dataset, regime, modality)
    settings = DetectionSettings(
        modality=modality,
        batch_size=batch_size,
        output=output,
        threshold=threshold,
        memory_style=memory_style,
        distractors=distractors,
        render=body.style,
        structured_output=structured_output,
        size=body.size,
    )
    return Task(
        dataset=body.dataset(settings, sample_text),
        solver=audit_windows(instances, settings),
        scorer=detection_scorer(),
        metrics=[*DETECTION_METRICS, *EDIT_METRICS] if FORMATS[output].edits else None,
        epochs=counted_epochs(),
        name=body.name,
        version=task_version(),
        metadata=body.metadata(settings),
    )
