"""What ``inspect view`` shows of a navigate sample: its input (the episode
asked for, the lake as the agent first sees it beside the lake as its memory
describes it) and its target (the length of the safe shortest path). The
score explanation (the outcome, a death's cause, the trajectory map) is
``episode.score_explanation``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spatialstale_evals.harness.lake_map import lake_and_memory
from spatialstale_evals.navigation.strategies import STRATEGIES
from spatialstale_evals.world.grid import Grid, goal_of, path_steps, start_of
from spatialstale_evals.world.instance import Instance
from spatialstale_evals.world.observation import visible_grid


def _steps(grid: Grid) -> str:
    steps = path_steps(grid)
    return "no safe path" if steps is None else f"{steps} steps"


def sample_text(instance: Instance, params: Mapping[str, Any]) -> tuple[str, str]:
    """The sample's input and target (``TaskFamily.sample_text``)."""
    strategy = STRATEGIES[params["strategy"]]
    start, goal = start_of(instance.grid), goal_of(instance.grid)
    radius = params.get("view_radius")
    seen = f", seeing {radius} cells around itself" if radius is not None else ""
    changes = ", the lake changing as it walks" if instance.events else ""
    if params.get("memory_access") == "tool" and strategy.shows_memory:
        changes += ", its memory in /memories/lake.md (the memory tool)"
    shown = (
        f"navigate {instance.id} ({instance.regime}, {params.get('modality', 'text')}, "
        f"{params['strategy']}: {strategy.summary}): walk from S ({start[0]},{start[1]}) to G "
        f"({goal[0]},{goal[1]}) in at most {params.get('max_steps') or instance.max_steps} steps, "
        f"one move per model call{seen}{changes}.\n\n"
        + lake_and_memory(
            visible_grid(instance.grid, start, radius),
            instance.memory if strategy.shows_memory else None,
            lake_title="lake at the start",
            layout=instance.grid,
        )
    )
    target = f"safe shortest path: {_steps(instance.grid)} on the lake at the start"
    if instance.events:
        target += f", {_steps(instance.final_grid())} on the lake after every scheduled change"
    return shown, target
