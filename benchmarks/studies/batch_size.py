"""How the audit's batch size B must grow with the store (docs/performance.md, "Batch size
and world size"): calls and tokens per detect instance for N = 64, 256 and
1,024 entries (8x8, 16x16, 32x32) and B in 1, 5, 10, 20, 50 and N, and the
prompt of one navigation step that shows the full store; then the 8x8 rows
beside the paper's GPT-4o figures (``paper.DETECTION_COST``: docs/tasks.md,
"Cost per instance").

    python benchmarks/studies/batch_size.py [--seeds 50] [--regime L1] [--modality text]

Counted, not run: every audit call's prompt is built by the detect task's own
code (``runs.cost.estimate_cost("detect", ...)``) and counted as the scripted provider
counts tokens (ceil(characters / 4), 255 per image), the reply as the
scripted ``observer`` writes it; the navigation step is
``navigation.cost.step_prompt_tokens`` with ``no_filter`` (every entry shown). The
instances are the suite's, made by its generator with master seed 2024 (the
canonical sets of each size). What B costs in F1 needs a real model: this
script measures only the cost side.
"""

from __future__ import annotations

import argparse
import statistics
import time

from spatialstale_evals import paper
from spatialstale_evals.harness.tokens import count_text_tokens
from spatialstale_evals.navigation.cost import step_prompt_tokens
from spatialstale_evals.runs.cost import Cost, estimate_cost, task_settings
from spatialstale_evals.world import dataset

SIZES = (8, 16, 32)
BATCHES = (1, 5, 10, 20, 50)


def rows(seeds: int, regime: str, modality: str) -> tuple[list[str], dict[int, Cost]]:
    """The table of every (N, B), and the 8x8 costs by B (for the paper's comparison)."""
    small: dict[int, Cost] = {}
    lines = [
        "| grid | N | B | calls / instance | input tokens / instance | of which repeated per call "
        "| output tokens / instance | navigation step prompt (full store) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for side in SIZES:
        instances = dataset.generate(dataset.MASTER_SEED, seeds, side, side, regimes=[regime])[regime]
        n = side * side
        nav = statistics.mean(step_prompt_tokens(i, task_settings("navigate", strategy="no_filter", modality=modality))
                              for i in instances)  # fmt: skip
        # The entries' own text: sent once whatever B; the rest of the input is repeated per call.
        entries = sum(count_text_tokens("\n".join(e.text for e in i.memory)) * len(i.windows) for i in instances)
        for b in (*BATCHES, n):
            if b > n:
                continue
            cost = estimate_cost("detect", instances, regime=regime, modality=modality, batch_size=b)[1]
            if side == SIZES[0]:
                small[b] = cost
            calls, inputs = cost.calls / seeds, cost.input_tokens / seeds
            repeated = 1 - entries / cost.input_tokens
            lines.append(
                f"| {side}x{side} | {n} | {'N' if b == n else b} | {calls:.1f} | {inputs / 1000:.1f}k "
                f"| {repeated:.0%} | {cost.output_tokens / seeds / 1000:.1f}k | {nav:.0f} |"
            )
    return lines, small


def paper_rows(small: dict[int, Cost], seeds: int) -> list[str]:
    """The 8x8 costs per instance beside the paper's (GPT-4o, L1, text; '-' where it reports none)."""
    lines = [
        "| B | calls / instance | input tokens / instance | total tokens / instance "
        "| paper calls (GPT-4o) | paper tokens (GPT-4o) |",
        "|---|---|---|---|---|---|",
    ]
    for b, cost in small.items():
        calls, tokens = paper.DETECTION_COST.get(b, ("-", None))
        total = (cost.input_tokens + cost.output_tokens) / seeds
        lines.append(
            f"| {b} | {cost.calls / seeds:.1f} | {cost.input_tokens / seeds / 1000:.1f}k | {total / 1000:.1f}k "
            f"| {calls} | {f'{tokens / 1000:.1f}k' if tokens else '-'} |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--regime", default="L1")
    parser.add_argument("--modality", default="text", choices=["text", "image"])
    args = parser.parse_args()
    start = time.perf_counter()
    table, small = rows(args.seeds, args.regime, args.modality)
    print("\n".join(table))
    print(f"\n{SIZES[0]}x{SIZES[0]} beside the paper's figures:\n")
    print("\n".join(paper_rows(small, args.seeds)))
    print(f"\n({args.seeds} seeds, {args.regime}, {args.modality}; {time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
