"""SpatialSTALE ``navigate``: does stale memory kill the agent, and does an
audit of that memory before acting save it?

    inspect eval spatialstale_evals/navigate.py -T strategy=omcd -T regime=L2 --model openai/gpt-4o
    inspect eval spatialstale_evals/navigate.py -T strategy=omcd --model-role auditor=openai/gpt-4o ...
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task

from spatialstale_evals.harness.navigation import navigation_loop, navigation_scorer
from spatialstale_evals.harness.observe import OBSERVATIONS, Modality
from spatialstale_evals.harness.params import check_choice, check_positive_int, reject_unknown
from spatialstale_evals.harness.samples import InstanceSet
from spatialstale_evals.harness.strategies import STRATEGIES, StrategyName
from spatialstale_evals.metadata import task_version
from spatialstale_evals.world.regimes import RegimeName

TASK_VERSION = task_version()


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
    **unknown: Any,
) -> Task:
    """Navigation under stale memory: reach the goal with raw, filtered or no memory.

    One sample per instance, ``epochs`` episodes each. Every decision is one
    ``move(direction)`` tool call; a reply without a valid call gets one greedy
    step toward the goal (counted as a fallback). A parameter this signature
    does not name is an error.

    Args:
        regime: Change regime: ``L1`` (scattered), ``L2`` (clustered, the paper's
            primary setting) or ``L3`` (online events during the episode).
        strategy: Memory view: ``no_memory`` (none), ``no_filter`` (all entries
            as written), ``self_verify`` (one single-call audit before the episode,
            flagged entries removed), ``omcd`` (batched audit, flagged entries
            removed; re-audited after each L3 event) or ``oracle`` (ground-truth
            stale entries removed; refreshed after each L3 event).
        modality: How the grid is shown to navigator and auditor: ``text`` or ``image``.
        batch_size: Entries per audit call for ``omcd`` (the paper's B = 10).
        dataset: Dataset folder made by ``spatialstale datasets generate``;
            default the canonical ``spatialstale-v1`` shipped in the package.
        max_steps: Step budget per episode; default the instance's (50 on 8x8).
        history: Earlier turns kept in each prompt. 0 (the paper's protocol) sends
            a fresh prompt per decision, so cost grows linearly with steps.
        epochs: Episodes per instance (the paper runs 5). ``--epochs`` overrides.
    """
    reject_unknown(navigate, unknown)
    check_choice("strategy", strategy, STRATEGIES)
    check_choice("modality", modality, OBSERVATIONS)
    check_positive_int("batch_size", batch_size)
    check_positive_int("history", history, allow_zero=True)
    check_positive_int("epochs", epochs)
    if max_steps is not None:
        check_positive_int("max_steps", max_steps)
    instances = InstanceSet.load(dataset, regime)
    first = next(iter(instances.by_id.values()))
    params = {
        "strategy": strategy,
        "modality": modality,
        "batch_size": batch_size,
        "max_steps": max_steps or first.max_steps,
        "history": history,
    }
    return Task(
        dataset=instances.samples("navigate", **params),
        solver=navigation_loop(instances, strategy, modality, batch_size, params["max_steps"], history),
        scorer=navigation_scorer(),
        epochs=epochs,
        version=TASK_VERSION,
        metadata={"task_family": "navigate", "regime": regime, **params},
    )
