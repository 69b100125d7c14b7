"""SpatialSTALE ``navigate``: does stale memory kill the agent, and does an
audit of that memory before acting save it?

    inspect eval spatialstale_evals/navigate.py -T strategy=omcd -T regime=L2 --model openai/gpt-4o
    inspect eval spatialstale_evals/navigate.py -T strategy=omcd --model-role auditor=openai/gpt-4o ...
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task

from spatialstale_evals.harness.memory_view import FILTER_MODES, FilterMode
from spatialstale_evals.harness.navigation import navigation_loop, navigation_scorer
from spatialstale_evals.harness.observe import OBSERVATIONS, Modality
from spatialstale_evals.harness.params import NotApplicable, check_choice, check_positive_int, reject_unknown
from spatialstale_evals.harness.samples import InstanceSet
from spatialstale_evals.harness.strategies import STRATEGIES, StrategyName
from spatialstale_evals.metadata import task_version
from spatialstale_evals.world.observation import covers_grid
from spatialstale_evals.world.regimes import RegimeName

TASK_VERSION = task_version()


def check_args(
    strategy: str,
    modality: str,
    batch_size: int,
    history: int,
    epochs: int,
    max_steps: int | None,
    view_radius: int | None,
    filter_mode: str,
) -> None:
    """Every check on the parameters, before any model call (``NotApplicable``
    for a valid filter mode of a strategy that judges nothing)."""
    check_choice("strategy", strategy, STRATEGIES)
    check_choice("modality", modality, OBSERVATIONS)
    check_positive_int("batch_size", batch_size)
    check_positive_int("history", history, allow_zero=True)
    check_positive_int("epochs", epochs)
    if max_steps is not None:
        check_positive_int("max_steps", max_steps)
    if view_radius is not None:
        check_positive_int("view_radius", view_radius, allow_zero=True)
    check_choice("filter_mode", filter_mode, FILTER_MODES)
    if filter_mode != "delete" and not STRATEGIES[strategy].removes_entries:
        raise NotApplicable(f"filter_mode={filter_mode!r} needs a strategy that judges entries; {strategy} judges none")


@task
def navigate(
    regime: RegimeName = "L2",
    strategy: StrategyName = "omcd",
    modality: Modality = "text",
    batch_size: int = 10,
    dataset: str | None = None,
    max_steps: int | None = None,
    history: int = 0,
    epochs: int = 5,
    view_radius: int | None = None,
    filter_mode: FilterMode = "delete",
    **unknown: Any,
) -> Task:
    """Navigation under stale memory: reach the goal with raw, filtered or no memory.

    One sample per instance, ``epochs`` episodes each. Every decision is one
    ``move(direction)`` tool call; a reply without a valid call gets one greedy
    step toward the goal (counted as a fallback). A parameter this signature
    does not name is an error.

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
        dataset: Dataset folder made by ``spatialstale datasets generate``;
            default the canonical ``spatialstale-v1`` shipped in the package.
        max_steps: Step budget per episode; default the instance's (50 on 8x8).
        history: Earlier turns kept in each prompt. 0 (the paper's protocol) sends
            a fresh prompt per decision, so cost grows linearly with steps.
        epochs: Episodes per instance (the paper runs 5). ``--epochs`` overrides.
        view_radius: None (the paper's full observability) or r >= 0: the agent
            sees only the cells within r rows and columns of itself, the rest
            as ``?``; audits judge only entries of cells in view. A radius that
            reaches every cell from everywhere is full observability.
        filter_mode: How an entry a strategy judged out of date is shown:
            ``delete`` (the paper: not at all), ``mark`` (its claim replaced by
            UNKNOWN) or ``history`` (as written, labelled as contradicted). Only
            for strategies that judge entries.
    """
    reject_unknown(navigate, unknown)
    check_args(strategy, modality, batch_size, history, epochs, max_steps, view_radius, filter_mode)
    instances = InstanceSet.load(dataset, regime)
    first = next(iter(instances.by_id.values()))
    if covers_grid(first.height, first.width, view_radius):  # it sees everything from everywhere: the paper's protocol
        view_radius = None
    params = {
        "strategy": strategy,
        "modality": modality,
        "batch_size": batch_size,
        "max_steps": max_steps or first.max_steps,
        "history": history,
        "view_radius": view_radius,
        "filter_mode": filter_mode,
    }
    return Task(
        dataset=instances.samples("navigate", **params),
        solver=navigation_loop(
            instances, strategy, modality, batch_size, params["max_steps"], history, view_radius, filter_mode
        ),
        scorer=navigation_scorer(),
        epochs=epochs,
        version=TASK_VERSION,
        metadata={"task_family": "navigate", "regime": regime, **params},
    )
