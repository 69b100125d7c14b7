"""Scaling: dataset generation, ``render_png`` and prompt tokens at 8x8,
16x16 and 32x32, on small datasets (3 seeds) written to a temporary folder.

Per size: generation time per instance, render time and PNG size, the
prompt tokens of one navigation step (from a real one-decision run, text and
image), the time to build one step's prompt directly (observation, memory
view, image; the image cache cleared each time), and the cost of one L1
detection instance at B = 10, counted by the matrix's cost model
(``runs/cost.py``: the detect task's own prompts, the scripted ``observer``'s
replies).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from spatialstale_evals.harness import observe
from spatialstale_evals.navigate import navigate
from spatialstale_evals.navigation.episode import Episode
from spatialstale_evals.navigation.loop import step_message
from spatialstale_evals.navigation.strategies import STRATEGIES
from spatialstale_evals.runs.cost import audit_cost, estimate_cost
from spatialstale_evals.world import dataset as world_dataset
from spatialstale_evals.world.env import DynamicFrozenLakeEnv
from spatialstale_evals.world.instance import Instance
from spatialstale_evals.world.regimes import REGIMES
from spatialstale_evals.world.render import CELLS, render_png

from .runner import KB, log_model_events, mean, median, run_eval, usage_of

SIDES = (8, 16, 32)
SEEDS = 3


def generation_and_render(folder: Path, side: int, renders: int) -> tuple[Instance, dict[str, Any]]:
    """Write the dataset (timed) and render ``renders`` observations of its
    first L2 instance at cells spread over the grid."""
    start = time.perf_counter()
    world_dataset.write(folder, count=SEEDS, height=side, width=side)
    gen_s = time.perf_counter() - start
    inst = world_dataset.load(folder, "L2")[0]
    cells = [(r, c) for r in range(side) for c in range(side)]
    png_sizes, render_times, cold_times = [], [], []
    for i in range(renders):
        cell = cells[(i * 7) % len(cells)]
        # Cold: a grid not drawn before (a new instance, an L3 event); warm:
        # a step of an episode, the grid's cells already drawn (render.CELLS).
        CELLS.clear()
        start = time.perf_counter()
        render_png(inst.grid, cells[(i * 7 + 1) % len(cells)])
        cold_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        png = render_png(inst.grid, cell)
        render_times.append(time.perf_counter() - start)
        png_sizes.append(len(png))
    return inst, {
        "size": f"{side}x{side}",
        "entries": len(inst.memory),
        "max_steps": inst.max_steps,
        "generate_ms_per_instance": gen_s / (SEEDS * len(REGIMES)) * 1000,  # every regime is written
        "render_ms": median(render_times) * 1000,
        "render_cold_ms": median(cold_times) * 1000,
        "png_kb": mean(png_sizes) / KB,
    }


def prompt_cost(inst: Instance, folder: Path, modality: str, renders: int, log_dir: Path) -> dict[str, float]:
    """Prompt tokens of a step, from a real one-decision run; the time to
    build a step's prompt (observation, memory view, image), directly."""
    task = navigate(regime="L2", strategy="no_filter", modality=modality, epochs=1, dataset=str(folder), max_steps=1)
    events = log_model_events(run_eval(task, "spatialstale/observer", log_dir, limit=1).log)
    env = DynamicFrozenLakeEnv(inst, max_steps=inst.max_steps)
    env.reset()
    episode = Episode(env=env, view=list(inst.memory))
    policy = STRATEGIES["no_filter"]
    times = []
    for _ in range(renders):
        observe.png_data_uri.cache_clear()
        CELLS.clear()
        start = time.perf_counter()
        step_message(episode, modality, policy)
        times.append(time.perf_counter() - start)
    return {f"nav_prompt_{modality}": usage_of(events[0])[0], f"prompt_build_ms_{modality}": median(times) * 1000}


def detect_cost(folder: Path) -> dict[str, int]:
    """One L1 detection instance at B = 10 (text): the first call's prompt, calls, tokens."""
    inst = world_dataset.load(folder, "L1")[0]
    cost = estimate_cost("detect", [inst], modality="text", batch_size=10)[1]
    first = audit_cost(inst.windows[0].grid, inst.memory[:10], "text", 10)
    return {
        "audit_prompt_b10": first.input_tokens,
        "audit_calls": cost.calls,
        "detect_tokens_per_instance": cost.input_tokens + cost.output_tokens,
    }


def measure_scaling(tmp: Path, renders: int) -> list[dict[str, Any]]:
    rows = []
    for side in SIDES:
        folder = tmp / f"scale-{side}"
        inst, row = generation_and_render(folder, side, renders)
        for modality in ("text", "image"):
            row.update(prompt_cost(inst, folder, modality, renders, tmp / f"scale-nav-{side}-{modality}"))
        row.update(detect_cost(folder))
        rows.append(row)
    return rows
