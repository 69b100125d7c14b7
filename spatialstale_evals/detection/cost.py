"""The detect task's cost, exact: every window of every instance, audited in
batches, counted from the prompts the task builds and the stand-in's replies."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from spatialstale_evals.detection.windows import DetectionSettings
from spatialstale_evals.harness.cost import Cost, StandIn, audit_cost
from spatialstale_evals.harness.memory_text import written
from spatialstale_evals.harness.observe import style_of
from spatialstale_evals.world.instance import Instance


def settings_of(args: Mapping[str, Any]) -> DetectionSettings:
    """The settings of the detect task of ``args`` (every argument, defaults included), unchecked."""
    return DetectionSettings(
        modality=args["modality"],
        batch_size=args["batch_size"],
        output=args["output"],
        threshold=args["threshold"],
        memory_style=args["memory_style"],
        distractors=args["distractors"],
        render=style_of(args),
        structured_output=args["structured_output"],
        size=args["size"],
    )


def estimate(
    instances: Sequence[Instance], args: dict[str, Any], model: StandIn, roles: Mapping[str, StandIn]
) -> tuple[Cost, Cost]:
    """(cost, cost) of the detect task of ``args`` (every argument, defaults included) over ``instances``."""
    s = settings_of(args)
    total = Cost()
    for canonical in instances:
        inst = written(canonical, s.memory_style, s.distractors)
        for window in inst.windows:
            total += audit_cost(
                model,
                window.grid,
                inst.memory,
                s.observation,
                s.batch_size,
                output=s.output,
                structured=s.structured_output,
            )
    return total, total
