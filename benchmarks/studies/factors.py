"""What the factors cost (docs/memory.md, "Factors"): prompt tokens per decision of
each memory style, framing and number of distractor notes, and the PNG size
and render time of each rendering variant.

    python benchmarks/studies/factors.py [--seeds 50] [--renders 200]

Tokens are counted as the scripted provider counts them (ceil(characters / 4),
``scripted/api.py``) on the first step's prompt the navigate task builds
(``navigation.cost.step_prompt_tokens``: system message, the memory view of
``no_filter``, observation, position, tool), averaged over the canonical L2
seeds, and for one audit call (``detect``, batch 10) per window. Render times
are the median of ``--renders`` renders of one 8x8 grid (cache off).
"""

from __future__ import annotations

import argparse
import statistics
import time

from spatialstale_evals.detect import detect
from spatialstale_evals.harness.memory_text import written
from spatialstale_evals.harness.params import defaults
from spatialstale_evals.navigate import navigate
from spatialstale_evals.navigation.cost import step_prompt_tokens
from spatialstale_evals.runs.cost import estimate_cost, task_settings
from spatialstale_evals.world import dataset
from spatialstale_evals.world.render import RenderStyle, image_size, render_png

NAVIGATE = [
    {},
    {"memory_style": "detailed"},
    {"memory_style": "confident"},
    {"memory_framing": "warn"},
    {"memory_framing": "prefer_current"},
    {"memory_position": "after"},
    {"distractors": 4},
    {"distractors": 16},
]
NAVIGATE_ONLY = set(defaults(navigate)) - set(defaults(detect))
RENDERS = [
    RenderStyle(),
    RenderStyle(palette="high_contrast"),
    RenderStyle(palette="grayscale"),
    RenderStyle(labels=False),
    RenderStyle(labels=False, cell_px=16),
    RenderStyle(cell_px=96),
    RenderStyle(marker="letter"),
]


def _label(args: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in args.items()) or "paper defaults"


def token_table(seeds: int) -> list[str]:
    instances = dataset.load(None, "L2")[:seeds]
    base = None
    lines = [
        "| factor level | navigator prompt tokens per decision (no_filter, first step) | vs default"
        " | audit input tokens per window (detect, B = 10) |",
        "|---|---|---|---|",
    ]
    for args in NAVIGATE:
        settings = task_settings("navigate", strategy="no_filter", **args)
        per_step = statistics.mean(
            step_prompt_tokens(written(i, settings.memory_style, settings.distractors), settings) for i in instances
        )
        detect_args = {k: v for k, v in args.items() if k not in NAVIGATE_ONLY}
        _, exact = estimate_cost("detect", instances, modality="text", batch_size=10, **detect_args)
        audit = exact.input_tokens / len(instances)
        base = per_step if base is None else base
        detect_cell = "(navigate only)" if NAVIGATE_ONLY & set(args) else f"{audit:.0f}"
        lines.append(f"| {_label(args)} | {per_step:.0f} | {per_step - base:+.0f} | {detect_cell} |")
    return lines


def render_table(renders: int) -> list[str]:
    grid = dataset.load(None, "L2")[0].grid
    lines = ["| rendering | image px | PNG bytes | render ms (median) |", "|---|---|---|---|"]
    for style in RENDERS:
        times = []
        for _ in range(renders):
            start = time.perf_counter()
            png = render_png(grid, (3, 4), style)
            times.append(time.perf_counter() - start)
        w, h = image_size(8, 8, style)
        name = (
            ", ".join(
                f"{k}={getattr(style, k)}"
                for k in ("palette", "labels", "cell_px", "marker")
                if getattr(style, k) != getattr(RenderStyle(), k)
            )
            or "paper"
        )
        lines.append(f"| {name} | {w}x{h} | {len(png)} | {1000 * statistics.median(times):.2f} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--renders", type=int, default=200)
    args = parser.parse_args()
    print("\n".join(token_table(args.seeds)))
    print()
    print("\n".join(render_table(args.renders)))


if __name__ == "__main__":
    main()
