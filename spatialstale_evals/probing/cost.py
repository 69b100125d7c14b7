"""The probe task's cost: exact for a stand-in whose replies are as long as
the ``observer``'s: the task's own probe loop, every target of every instance."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from spatialstale_evals.harness.cost import Cost, StandIn
from spatialstale_evals.harness.observe import style_of
from spatialstale_evals.probing.probes import ProbeSettings, check_dimensions, probe_target
from spatialstale_evals.world.instance import Instance
from spatialstale_evals.world.targets import choose_targets


def settings_of(args: Mapping[str, Any]) -> ProbeSettings:
    """The settings of the probe task of ``args`` (every argument, defaults included; the dimensions checked)."""
    return ProbeSettings(
        modality=args["modality"],
        dimensions=check_dimensions(args["dimensions"]),
        conversation=args["conversation"],
        targets_per_kind=args["targets_per_kind"],
        show_store=args["show_store"],
        render=style_of(args),
        structured_output=args["structured_output"],
        size=args["size"],
    )


def estimate(
    instances: Sequence[Instance], args: dict[str, Any], model: StandIn, roles: Mapping[str, StandIn]
) -> tuple[Cost, Cost]:
    """(cost, cost) of the probe task of ``args`` (every argument, defaults included) over ``instances``."""
    s = settings_of(args)
    before = model.cost

    async def ask_all() -> None:
        for inst in instances:
            grid = inst.final_grid()
            for target in choose_targets(inst, s.targets_per_kind):
                await probe_target(model, inst, grid, target, s)  # type: ignore[arg-type]

    asyncio.run(ask_all())
    spent = Cost(
        model.cost.calls - before.calls,
        model.cost.input_tokens - before.input_tokens,
        model.cost.output_tokens - before.output_tokens,
    )
    return spent, spent
