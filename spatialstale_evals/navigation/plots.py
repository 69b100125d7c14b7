"""The navigate family's report plots: the episodes' outcomes by strategy
(stacked success / death / timeout bars, from the family's ``navigation``
table) and the trajectory lengths by strategy and outcome (box plots of its
records' steps, the paper's Figure 6 decomposition); rows model (and
configuration, modality), columns regime. The family's registry entry draws
them through ``TaskFamily.plots``; the shared drawing helpers are
``harness/report_plots.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from spatialstale_evals.harness import report_plots
from spatialstale_evals.harness.lake_episode import OUTCOMES
from spatialstale_evals.harness.report_plots import COLOURS, outcome_legend, panels
from spatialstale_evals.harness.report_tables import order
from spatialstale_evals.navigation.tables import ORDER

#: The files ``plot`` writes, in order.
FILES = ("outcomes_by_strategy.png", "trajectory_lengths.png")


def outcomes_by_strategy(navigation: pd.DataFrame, path: Path) -> Path | None:
    """Stacked success/death/timeout bars per strategy; rows model(+modality), columns regime."""
    if navigation.empty:
        return None
    fig, legend_at, found = panels(navigation, "% of episodes", 4.2, 3.2)
    for ax, rows, title in found:
        gr = rows.set_index("strategy")
        strategies = order(gr.index, ORDER["strategy"])
        bottom = np.zeros(len(strategies))
        for outcome in OUTCOMES:
            vals = np.array([gr[outcome].get(s, np.nan) for s in strategies], dtype=float)
            ax.bar(strategies, vals, bottom=bottom, color=COLOURS[outcome], label=outcome, edgecolor="white")
            bottom += np.nan_to_num(vals)
        ax.set_ylim(0, 100)
        ax.tick_params(axis="x", labelrotation=30, labelsize=8)
        ax.set_title(title, fontsize=8)
    outcome_legend(legend_at)
    fig.suptitle("Navigation outcomes by strategy")
    return report_plots.save(fig, path)


def trajectory_lengths(nav: pd.DataFrame, path: Path) -> Path | None:
    """Box plots of episode length per strategy and outcome; rows model(+modality), columns regime."""
    if nav.empty:
        return None
    fig, legend_at, found = panels(nav, "steps", 4.8, 3.4)
    for ax, gr, title in found:
        strategies = order(gr["strategy"], ORDER["strategy"])
        width = 0.8 / len(OUTCOMES)
        for k, outcome in enumerate(OUTCOMES):
            data, pos = [], []
            for s_i, s in enumerate(strategies):
                steps = gr[(gr["strategy"] == s) & (gr["outcome"] == outcome)]["steps"].to_numpy()
                if steps.size:
                    data.append(steps)
                    pos.append(s_i + (k - 1) * width)
                    jitter = np.random.default_rng(len(steps)).uniform(-0.3, 0.3, steps.size) * width
                    ax.scatter(
                        pos[-1] + jitter,
                        steps,
                        s=6,
                        color=COLOURS[outcome],
                        edgecolors="grey",
                        linewidths=0.3,
                        alpha=0.7,
                        zorder=3,
                    )
            if data:
                bp = ax.boxplot(data, positions=pos, widths=width * 0.9, patch_artist=True, manage_ticks=False)
                for box in bp["boxes"]:
                    box.set_facecolor(COLOURS[outcome])
                for median in bp["medians"]:
                    median.set_color("red")
        ax.set_xticks(np.arange(len(strategies)), strategies, rotation=30, fontsize=8)
        ax.set_title(title, fontsize=8)
    outcome_legend(legend_at)
    fig.suptitle("Trajectory length by strategy and outcome")
    return report_plots.save(fig, path)


def plot(tables: Mapping[str, pd.DataFrame], records: pd.DataFrame, out_dir: Path) -> list[Path]:
    """Write ``FILES`` into ``out_dir``: the outcomes from the family's ``navigation``
    table, the lengths from its records; the files written (none without data)."""
    out_dir = Path(out_dir)
    drawn = (
        outcomes_by_strategy(tables.get("navigation", pd.DataFrame()), out_dir / FILES[0]),
        trajectory_lengths(records, out_dir / FILES[1]),
    )
    return [p for p in drawn if p is not None]
