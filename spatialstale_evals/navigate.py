"""SpatialSTALE ``navigate``: does stale memory kill the agent, and does an
audit of that memory before acting save it?

    inspect eval spatialstale_evals/navigate.py -T strategy=omcd -T regime=L2 --model openai/gpt-4o
    inspect eval spatialstale_evals/navigate.py -T strategy=omcd --model-role auditor=openai/gpt-4o ...
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inspect_ai import Task, task

from spatialstale_evals.harness.audit import FORMATS, AuditOutput, check_output
from spatialstale_evals.harness.memory_quota import MAX_MEMORY_CALLS
from spatialstale_evals.harness.memory_text import (
    FACTORS,
    SECTION_FACTORS,
    MemoryFraming,
    MemoryPosition,
    MemoryStyle,
    check_framing,
    check_memory,
)
from spatialstale_evals.harness.memory_tool import MEMORY_ACCESS, MemoryAccess
from spatialstale_evals.harness.memory_view import FILTER_MODES, NEEDS_CORRECTIONS, FilterMode
from spatialstale_evals.harness.observe import OBSERVATIONS, Modality
from spatialstale_evals.harness.params import NotApplicable, changed, check_choice, check_positive_int, defaults
from spatialstale_evals.harness.run_epochs import RunEpochsTask
from spatialstale_evals.harness.score_counts import counted_epochs
from spatialstale_evals.harness.task_body import GridTaskBody, image_args
from spatialstale_evals.metadata import task_version
from spatialstale_evals.navigation.explain import sample_text
from spatialstale_evals.navigation.loop import NavigationSettings, navigation_loop, navigation_scorer
from spatialstale_evals.navigation.memory_access import DEFAULT_MAX_MEMORY_CALLS, TOOL_METRICS
from spatialstale_evals.navigation.metrics import NAVIGATION_METRICS
from spatialstale_evals.navigation.strategies import STRATEGIES, StrategyName
from spatialstale_evals.world.dataset import Size
from spatialstale_evals.world.observation import covers_grid
from spatialstale_evals.world.regimes import RegimeName
from spatialstale_evals.world.render import CELL_PX, Marker, PaletteName
from spatialstale_evals.world.validate import MAX_STEPS


def check_args(
    strategy: str,
    modality: str,
    batch_size: int,
    history: int,
    epochs: int,
    max_steps: int | None,
    view_radius: int | None,
    filter_mode: str,
    output: str,
    threshold: float,
) -> None:
    """Every check on the parameters, before any model call (``NotApplicable``
    for a valid filter mode of a strategy that judges nothing, one that shows
    corrections with a strategy whose verdicts propose none, or an audit
    format (``output`` and ``threshold`` where not the defaults, already
    checked) for a strategy that asks no auditor)."""
    audit_format = changed(navigate, {"output": output, "threshold": threshold})
    check_choice("strategy", strategy, STRATEGIES)
    check_choice("modality", modality, OBSERVATIONS)
    check_positive_int("batch_size", batch_size)
    check_positive_int("history", history, allow_zero=True, most=MAX_STEPS)
    check_positive_int("epochs", epochs)
    if max_steps is not None:
        check_positive_int("max_steps", max_steps, most=MAX_STEPS)
    if view_radius is not None:
        check_positive_int("view_radius", view_radius, allow_zero=True)
    check_choice("filter_mode", filter_mode, FILTER_MODES)
    policy = STRATEGIES[strategy]
    if filter_mode != "delete" and not policy.removes_entries:
        raise NotApplicable(f"filter_mode={filter_mode!r} needs a strategy that judges entries; {strategy} judges none")
    if audit_format and not policy.calls_model:
        named = ", ".join(f"{k}={v!r}" for k, v in audit_format.items())
        raise NotApplicable(f"{named}: the format of the auditor's verdicts; {strategy} asks no auditor")
    if batch_size != defaults(navigate)["batch_size"] and not policy.batch_size_matters:
        how = "audits every entry in one call" if policy.calls_model else "asks no auditor"
        raise NotApplicable(f"batch_size={batch_size}: the entries per audit call; {strategy} {how}")
    if filter_mode in NEEDS_CORRECTIONS and not policy.corrects(output):
        editing = ", ".join(name for name, f in FORMATS.items() if f.edits)
        raise NotApplicable(
            f"filter_mode={filter_mode!r} shows the claim a judgement proposes; {strategy} proposes none "
            f"with output={output!r} (an audit needs output={editing})"
        )


def check_shown(
    strategy: str, structured_output: bool, memory_access: str, max_memory_calls: int, factors: Mapping[str, Any]
) -> None:
    """The options that act on what ``strategy`` has (``NotApplicable`` for
    one it has not): ``structured_output`` on its auditor's verdicts, the
    memory tool (``check_access``) and the memory section's factors on the
    memory it shows."""
    if structured_output and not STRATEGIES[strategy].calls_model:
        raise NotApplicable(
            f"structured_output constrains the auditor's JSON verdicts; {strategy} asks no auditor "
            "(the navigator's moves are tool calls)"
        )
    check_access(strategy, memory_access, max_memory_calls, factors["memory_position"])
    section = changed(navigate, {k: factors[k] for k in SECTION_FACTORS})
    if section and not STRATEGIES[strategy].shows_memory:
        named = ", ".join(f"{k}={v}" for k, v in section.items())
        raise NotApplicable(f"{named} acts on the memory section; {strategy} shows no memory")


def check_access(strategy: str, memory_access: str, max_memory_calls: int, memory_position: str) -> None:
    """The checks of ``memory_access`` and ``max_memory_calls`` (``NotApplicable``:
    the memory tool for a strategy that shows no memory, a position of a memory
    section that is not in the prompt, a cap of calls without the tool)."""
    check_choice("memory_access", memory_access, MEMORY_ACCESS)
    check_positive_int("max_memory_calls", max_memory_calls, allow_zero=True, most=MAX_MEMORY_CALLS)
    if memory_access == "tool" and not STRATEGIES[strategy].shows_memory:
        raise NotApplicable(f"memory_access=tool puts the memory view in the store; {strategy} shows no memory")
    if memory_access == "tool" and memory_position != defaults(navigate)["memory_position"]:
        where = "the memory section's place in the prompt; with memory_access=tool the notes are in the store"
        raise NotApplicable(f"memory_position={memory_position}: {where}")
    if memory_access != "tool" and max_memory_calls != defaults(navigate)["max_memory_calls"]:
        raise NotApplicable(f"max_memory_calls={max_memory_calls}: the memory calls per step of memory_access=tool")


@task
@image_args
def navigate(
    regime: RegimeName = "L2",
    strategy: StrategyName = "omcd",
    modality: Modality = "text",
    batch_size: int = 10,
    output: AuditOutput = "binary",
    threshold: float = 0.7,
    dataset: str | None = None,
    size: Size = "8x8",
    max_steps: int | None = None,
    history: int = 0,
    epochs: int = 5,
    view_radius: int | None = None,
    filter_mode: FilterMode = "delete",
    memory_style: MemoryStyle = "plain",
    memory_framing: MemoryFraming = "none",
    memory_position: MemoryPosition = "before",
    distractors: int = 0,
    image_labels: bool = True,
    image_palette: PaletteName = "paper",
    image_cell_px: int = CELL_PX,
    image_marker: Marker = "triangle",
    structured_output: bool = False,
    memory_access: MemoryAccess = "prompt",
    max_memory_calls: int = DEFAULT_MAX_MEMORY_CALLS,
    **unknown: Any,
) -> Task:
    """Navigation under stale memory: reach the goal with raw, filtered or no memory.

    One sample per instance, ``epochs`` episodes each. Every decision is one
    ``move(direction)`` tool call; a reply without a valid call gets one greedy
    step toward the goal (counted as a fallback). A parameter this signature
    does not name is an error. The defaults are the paper's protocol.

    Args:
        regime: Change regime: ``L1`` (scattered), ``L2`` (clustered, the paper's
            primary setting), ``L3`` (online events during the episode) or ``L0``
            (ours: nothing changes, every entry stays true).
        strategy: Memory view: ``no_memory`` (none), ``no_filter`` (all entries
            as written), ``self_verify`` (one single-call audit before the episode,
            flagged entries removed), ``omcd`` (batched audit, flagged entries
            removed; re-audited after each L3 event), ``oracle`` (ground-truth
            stale entries removed; refreshed after each L3 event) or ``resolve``
            (ours: no model call; entries resolved against what the agent has
            observed this episode, unseen ones labelled unverified).
        modality: How the grid is shown to navigator and auditor: ``text`` or ``image``.
        batch_size: Entries per audit call for ``omcd`` (the paper's B = 10).
        output: The auditor's verdict format (``omcd``, ``self_verify``), as in
            ``detect``: ``binary`` (the paper), ``continuous`` (flagged at
            ``threshold``) or ``edit`` (each flag proposes the corrected claim,
            which ``filter_mode=correct`` shows).
        threshold: Flag threshold for ``continuous`` output; another value with
            another output is an error.
        dataset: Dataset folder made by ``spatialstale datasets generate``;
            default the canonical ``spatialstale-v1`` shipped in the package.
        size: Grid size: ``8x8`` (the paper's), ``16x16`` or ``32x32``, each a
            canonical set of 50 instances per regime; with ``dataset``, that folder
            if it is of this size, else its sub-folder named after it (docs/dataset.md).
        max_steps: Step budget per episode; default the instance's (50 on 8x8).
        history: Earlier turns kept in each prompt. 0 (the paper's protocol) sends
            a fresh prompt per decision, so cost grows linearly with steps.
        epochs: Episodes per instance (the paper runs 5). ``--epochs`` overrides,
            and the log then records the run's number as this argument.
        view_radius: None (the paper's full observability) or r >= 0: the agent
            sees only the cells within r rows and columns of itself, the rest
            as ``?``; audits judge only entries of cells in view. A radius that
            reaches every cell from everywhere is full observability.
        filter_mode: How an entry a strategy judged out of date is shown:
            ``delete`` (the paper: not at all), ``mark`` (its claim replaced by
            UNKNOWN), ``history`` (as written, labelled as contradicted) or
            ``correct`` (rewritten with the claim the judgement proposes,
            labelled as corrected: ``output=edit`` audits, ``oracle``,
            ``resolve``). Only for strategies that judge entries.
        memory_style: How each entry is written: ``plain`` (the paper's text),
            ``detailed`` (with its provenance from the exploration walks) or
            ``confident`` (with an assertion of certainty). docs/memory.md, Factors.
        memory_framing: The system message's line about memory: ``none`` (the
            paper: no line), ``warn`` (memory may be out of date) or
            ``prefer_current`` (trust the observation over a conflicting note).
        memory_position: The memory section ``before`` the observation (the
            paper's order) or ``after`` it.
        distractors: Non-spatial notes mixed into the store (0 to 16), drawn
            from the seed; never stale.
        image_*: The rendering options (image modality): ``harness/task_body.py``, ``IMAGE_ARGS``.
        structured_output: Pass the verdict schema as Inspect's ``response_schema``
            with every audit call (``omcd``, ``self_verify``; the moves are tool
            calls), for providers that constrain replies to it (docs/models.md).
        memory_access: ``prompt`` (the paper: the memory view in every step's
            prompt) or ``tool`` (the view in the file ``/memories/lake.md``,
            read with Inspect's read-only memory tool, offered beside ``move``;
            the prompt says where the notes are). docs/memory.md.
        max_memory_calls: Memory calls per step with ``memory_access=tool``
            (default 5, at most 100); they take no step, calls past it are refused.
    """
    body = GridTaskBody(navigate, locals(), FACTORS)
    threshold = check_output(navigate, output, threshold)
    check_args(strategy, modality, batch_size, history, epochs, max_steps, view_radius, filter_mode, output, threshold)
    check_memory(memory_style, distractors)
    check_framing(memory_framing, memory_position)
    body.check_options(size, structured_output)
    check_shown(strategy, structured_output, memory_access, max_memory_calls, body.factors)
    instances = body.load(dataset, regime, modality)
    settings = NavigationSettings(
        strategy=strategy,
        modality=modality,
        batch_size=batch_size,
        output=output,
        threshold=threshold,
        max_steps=max_steps or instances.first.max_steps,
        history=history,
        # a radius that sees everything from everywhere is the paper's protocol
        view_radius=None if covers_grid(instances.first.height, instances.first.width, view_radius) else view_radius,
        filter_mode=filter_mode,
        memory_access=memory_access,
        max_memory_calls=max_memory_calls,
        memory_style=memory_style,
        memory_framing=memory_framing,
        memory_position=memory_position,
        distractors=distractors,
        render=body.style,
        structured_output=structured_output,
        size=body.size,
    )
    return RunEpochsTask(
        dataset=body.dataset(settings, sample_text),
        solver=navigation_loop(instances, settings),
        scorer=navigation_scorer(),
        metrics=[*NAVIGATION_METRICS, *TOOL_METRICS] if memory_access == "tool" else None,
        epochs=counted_epochs(epochs),
        name=body.name,
        version=task_version(),
        metadata=body.metadata(settings),
    )
