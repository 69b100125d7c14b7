"""What ``inspect view`` shows of a lifelong sample: its input (the lifetime
asked for, the lake as the agent first sees it, beside the notes it starts
with when they are the paper's entries) and its target (the length of the
safe shortest path of every episode, on the lake it starts on)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spatialstale_evals.harness.lake_map import lake_and_memory
from spatialstale_evals.lifetime.arms import DEFAULT_MEMORY
from spatialstale_evals.world.grid import goal_of, path_steps, start_of
from spatialstale_evals.world.instance import Instance
from spatialstale_evals.world.lifetimes import Lifetime
from spatialstale_evals.world.observation import visible_grid


def sample_text(life: Lifetime, instance: Instance, params: Mapping[str, Any]) -> tuple[str, str]:
    """The sample's input and target: ``params`` are the task's (``episodes``,
    ``view_radius``, ``initial_memory``, ``max_steps`` read)."""
    played = life.episodes[: params["episodes"]]
    first = played[0].grid
    start, goal = start_of(first), goal_of(first)
    radius = params.get("view_radius")
    seen = "the whole lake" if radius is None else f"{radius} cell(s) around itself"
    paper = params.get("initial_memory") == "paper"
    notes = "the paper's memory entries in /memories/lake.md" if paper else "an empty /memories"
    kept = "only the notes kept; it starts with " + notes
    if params.get("memory", DEFAULT_MEMORY) == "none":
        kept = "nothing kept between episodes (memory=none: no memory tool)"
    shown = (
        f"lifelong {life.id} ({life.regime}): {len(played)} episodes on one lake, each from S "
        f"({start[0]},{start[1]}) to G ({goal[0]},{goal[1]}) in at most {params.get('max_steps') or life.max_steps} "
        f"steps, seeing {seen}; a new conversation per episode, {kept}.\n\n"
        + lake_and_memory(
            visible_grid(first, start, radius),
            instance.memory if paper else None,
            lake_title="lake at the start",
            layout=first,
        )
    )
    lengths = [path_steps(world.grid) for world in played]
    target = "safe shortest path per episode, on the lake it starts on: " + ", ".join(
        f"{k}: {'none' if n is None else n}" for k, n in enumerate(lengths, start=1)
    )
    return shown, target
