"""SpatialSTALE ``probe``: STALE's three questions about single memory entries
whose truth the environment knows, scored exactly (docs/specification.md#probe).

    inspect eval spatialstale_evals/probe.py -T regime=L2 --model openai/gpt-4o
    inspect eval spatialstale_evals/probe.py -T dimensions=premise -T conversation=shared --model ...
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task

from spatialstale_evals.harness.observe import OBSERVATIONS, Modality
from spatialstale_evals.harness.params import (
    CONVERSATIONS,
    Conversation,
    NotApplicable,
    check_bool,
    check_choice,
    check_positive_int,
)
from spatialstale_evals.harness.score_counts import counted_epochs
from spatialstale_evals.harness.task_body import GridTaskBody, image_args
from spatialstale_evals.metadata import task_version
from spatialstale_evals.probing import prompts as probe_prompts
from spatialstale_evals.probing.explain import sample_text
from spatialstale_evals.probing.probes import PROBES, ProbeSettings, check_dimensions, probe_targets
from spatialstale_evals.probing.scoring import probe_scorer
from spatialstale_evals.world.dataset import Size
from spatialstale_evals.world.grid import MAX_SIDE
from spatialstale_evals.world.regimes import RegimeName
from spatialstale_evals.world.render import CELL_PX, Marker, PaletteName


def check_asked(dimensions: str | list[str], structured_output: bool, show_store: bool) -> tuple[str, ...]:
    """The dimensions asked (``probes.check_dimensions``), and the options that
    act on what they ask (``NotApplicable`` otherwise): ``structured_output``
    on a JSON answer, ``show_store=false`` on a probe that needs no route."""
    asked = check_dimensions(dimensions)
    if structured_output and not any(PROBES[d].schema for d in asked):
        raise NotApplicable("structured_output constrains JSON answers; the implicit probe's answer is a tool call")
    if not show_store and "implicit" in asked:
        raise NotApplicable(
            "show_store=false shows only the target's entry, so the implicit probe has no route of memory's "
            "to follow; pass dimensions=explicit,premise"
        )
    return asked


@task
@image_args
def probe(
    regime: RegimeName = "L2",
    modality: Modality = "text",
    dimensions: str | list[str] = "all",
    conversation: Conversation = "independent",
    targets_per_kind: int = 3,
    show_store: bool = True,
    dataset: str | None = None,
    size: Size = "8x8",
    image_labels: bool = True,
    image_palette: PaletteName = "paper",
    image_cell_px: int = CELL_PX,
    image_marker: Marker = "triangle",
    structured_output: bool = False,
    **unknown: Any,
) -> Task:
    """STALE's state resolution, premise resistance and policy adaptation, asked about spatial memory.

    One sample per instance. Its targets are memory entries at the final grid
    (every change and event applied; the agent at the start), up to
    ``targets_per_kind`` of each kind (stale thaw, stale freeze, valid SAFE,
    valid DANGER), nearest the route memory suggests; every dimension is one
    model call per target (``world/targets.py``, ``probing/probes.py``).

    Args:
        regime: Which change regime's instances (``L0``: every target is a control).
        modality: ``text`` or ``image`` observation.
        dimensions: ``all``, or any of ``explicit``, ``premise``, ``implicit``
            (a list, or comma-separated).
        conversation: ``independent`` (each probe a fresh conversation, as
            STALE upstream) or ``shared`` (per target, explicit -> premise ->
            implicit in one conversation).
        targets_per_kind: At most this many targets of each kind per instance.
        show_store: Show the whole memory store with each probe (default) or
            only the target's entry (explicit and premise only: the implicit
            probe follows the route the whole store suggests).
        dataset: Folder of a generated dataset (default: the canonical set).
        size: Grid size: ``8x8`` (the paper's), ``16x16`` or ``32x32``, each a
            canonical set of 50 instances per regime; with ``dataset``, that folder
            if it is of this size, else its sub-folder named after it (docs/dataset.md).
        image_*: The rendering options (image modality): ``harness/task_body.py``, ``IMAGE_ARGS``.
        structured_output: Pass each JSON answer's schema (explicit, premise) as
            Inspect's ``response_schema``, for providers that constrain replies
            to it (docs/models.md); the implicit probe is a tool call.
    """
    body = GridTaskBody(probe, locals())
    check_choice("modality", modality, OBSERVATIONS)
    check_choice("conversation", conversation, CONVERSATIONS)
    check_positive_int("targets_per_kind", targets_per_kind, most=MAX_SIDE * MAX_SIDE)
    check_bool("show_store", show_store)
    body.check_options(size, structured_output)
    asked = check_asked(dimensions, structured_output, show_store)
    instances = body.load(dataset, regime, modality)
    settings = ProbeSettings(
        modality=modality,
        dimensions=asked,
        conversation=conversation,
        targets_per_kind=targets_per_kind,
        show_store=show_store,
        render=body.style,
        structured_output=structured_output,
        size=body.size,
    )
    return Task(
        dataset=body.dataset(settings, sample_text, shown={"dimensions": ",".join(asked)}),  # comma-separated, last
        solver=probe_targets(instances, settings),
        scorer=probe_scorer(),
        epochs=counted_epochs(),
        name=body.name,
        version=task_version(),
        metadata=body.metadata(settings, {"probe_prompt_version": probe_prompts.PROBE_PROMPT_VERSION}),
    )
