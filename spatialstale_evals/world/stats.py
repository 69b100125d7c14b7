"""Stale-ratio statistics of a dataset beside the paper's Table 1."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from spatialstale_evals.world.instance import Instance
from spatialstale_evals.world.staleness import change_kind, stale_ratio

#: SPEC section 2: mean, sd, min, max of the stale ratio over the paper's 50 seeds.
PAPER_TABLE1: dict[str, tuple[float, float, float, float]] = {
    "L1": (0.094, 0.011, 0.078, 0.109),
    "L2": (0.141, 0.014, 0.109, 0.172),
    "L3": (0.143, 0.028, 0.078, 0.219),
}


def regime_stats(instances: Sequence[Instance]) -> dict[str, float]:
    """Stale ratio at the final detection window (end of schedule for L3)."""
    ratios, thaws, freezes = [], 0, 0
    for inst in instances:
        final = inst.final_grid()
        ratios.append(stale_ratio(inst.g0, final))
        for r in range(inst.height):
            for c in range(inst.width):
                kind = change_kind(inst.g0, final, (r, c))
                thaws += kind == "thaw"
                freezes += kind == "freeze"
    arr = np.array(ratios)
    return {
        "n": len(arr),
        "mean": float(arr.mean()),
        "sd": float(arr.std(ddof=1)) if len(arr) > 1 else 0.0,
        "min": float(arr.min()),
        "max": float(arr.max()),
        "thaw_share": thaws / max(thaws + freezes, 1),
    }


def within_target(regime: str, stats: dict[str, float], cells: int = 64) -> bool:
    """Issue target: mean within 0.01 of the paper, min/max inside the paper's
    range widened by one cell on each side."""
    mean, _, lo, hi = PAPER_TABLE1[regime]
    slack = 1 / cells + 1e-9
    return abs(stats["mean"] - mean) <= 0.01 and stats["min"] >= lo - slack and stats["max"] <= hi + slack


def format_table(stats_by_regime: dict[str, dict[str, float]], cells: int = 64) -> str:
    lines = [
        "| regime | ours: mean +- sd | ours: range | paper: mean +- sd | paper: range | thaw share | within target |",
        "|---|---|---|---|---|---|---|",
    ]
    for regime, s in stats_by_regime.items():
        pm, psd, plo, phi = PAPER_TABLE1[regime]
        lines.append(
            f"| {regime} | {s['mean']:.3f} +- {s['sd']:.3f} | [{s['min']:.3f}, {s['max']:.3f}] "
            f"| {pm:.3f} +- {psd:.3f} | [{plo:.3f}, {phi:.3f}] | {s['thaw_share']:.2f} "
            f"| {'yes' if within_target(regime, s, cells) else 'NO'} |"
        )
    return "\n".join(lines)
