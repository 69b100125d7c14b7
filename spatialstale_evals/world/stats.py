"""Stale-ratio statistics of a dataset beside the paper's Table 1 (8x8), and
of a larger set beside the canonical 8x8 set it was scaled to match
(docs/specification.md#larger-worlds)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache

import numpy as np

from spatialstale_evals import paper
from spatialstale_evals.world import dataset
from spatialstale_evals.world.instance import Instance
from spatialstale_evals.world.regimes import get_regime
from spatialstale_evals.world.staleness import THAW


def regime_stats(instances: Sequence[Instance]) -> dict[str, float]:
    """Stale ratio at the final detection window (end of schedule for L3)."""
    ratios, thaws, stale = [], 0, 0
    for inst in instances:
        final = inst.windows[-1].stale if inst.windows else {}
        ratios.append(len(final) / (inst.height * inst.width))
        stale += len(final)
        thaws += sum(kind == THAW for kind in final.values())
    arr = np.array(ratios)
    return {
        "n": len(arr),
        "mean": float(arr.mean()),
        "sd": float(arr.std(ddof=1)) if len(arr) > 1 else 0.0,
        "min": float(arr.min()),
        "max": float(arr.max()),
        "thaw_share": thaws / max(stale, 1),
    }


def within_target(regime: str, stats: dict[str, float], cells: int = paper.GRID[0] * paper.GRID[1]) -> bool | None:
    """Issue target: mean within 0.01 of the paper, min/max inside the paper's
    range widened by one cell on each side. None when the paper has no row."""
    row = get_regime(regime).table1
    if row is None:
        return None
    mean, _, lo, hi = row
    slack = 1 / cells + 1e-9
    return abs(stats["mean"] - mean) <= 0.01 and stats["min"] >= lo - slack and stats["max"] <= hi + slack


def format_table(stats_by_regime: dict[str, dict[str, float]], cells: int = paper.GRID[0] * paper.GRID[1]) -> str:
    lines = [
        "| regime | ours: mean +- sd | ours: range | paper: mean +- sd | paper: range | thaw share | within target |",
        "|---|---|---|---|---|---|---|",
    ]
    for regime, s in stats_by_regime.items():
        row = get_regime(regime).table1
        paper = f"| {row[0]:.3f} +- {row[1]:.3f} | [{row[2]:.3f}, {row[3]:.3f}] " if row else "| - | - "
        verdict = {True: "yes", False: "NO", None: "-"}[within_target(regime, s, cells)]
        lines.append(
            f"| {regime} | {s['mean']:.3f} +- {s['sd']:.3f} | [{s['min']:.3f}, {s['max']:.3f}] "
            f"{paper}| {s['thaw_share']:.2f} | {verdict} |"
        )
    return "\n".join(lines)


#: Larger worlds: a larger set's mean stale ratio per regime stays within this of the 8x8 set's.
SIZE_TOLERANCE = 0.01


def is_paper_size(size: str) -> bool:
    """Whether ``size`` (``8x8``) is the grid of the paper's Table 1."""
    return size == f"{paper.GRID[0]}x{paper.GRID[1]}"


@lru_cache(maxsize=1)
def size_targets() -> dict[str, float]:
    """The canonical 8x8 set's mean stale ratio per regime: what the change
    counts of the larger sizes are scaled to keep (``regimes.change_scale``)."""
    folder = dataset.resolve(None)
    names = dataset.read_manifest(folder)["files"]
    return {dataset.regime_of(n): regime_stats(dataset.load(folder, dataset.regime_of(n)))["mean"] for n in names}


def within_size_target(stats: Mapping[str, float], target: float | None) -> bool | None:
    """Mean within SIZE_TOLERANCE of the 8x8 mean; None without an 8x8 mean."""
    return None if target is None else abs(stats["mean"] - target) <= SIZE_TOLERANCE + 1e-9


def format_size_table(stats_by_regime: dict[str, dict[str, float]], targets: Mapping[str, float]) -> str:
    lines = [
        "| regime | ours: mean +- sd | ours: range | 8x8: mean | target | thaw share | within target |",
        "|---|---|---|---|---|---|---|",
    ]
    for regime, s in stats_by_regime.items():
        target = targets.get(regime)
        eight = (
            f"| {target:.3f} | [{max(0.0, target - SIZE_TOLERANCE):.3f}, {target + SIZE_TOLERANCE:.3f}] "
            if target is not None
            else "| - | - "
        )
        verdict = {True: "yes", False: "NO", None: "-"}[within_size_target(s, target)]
        lines.append(
            f"| {regime} | {s['mean']:.3f} +- {s['sd']:.3f} | [{s['min']:.3f}, {s['max']:.3f}] "
            f"{eight}| {s['thaw_share']:.2f} | {verdict} |"
        )
    return "\n".join(lines)
