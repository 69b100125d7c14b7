"""The drawing helpers every report plot shares, the families' own plots
(``<family>/plots.py``) and the report's (``analysis/plots.py``) alike: the
palette, a legend beside its panel, a grid of panels (rows model, config and
modality; columns regime) that says "no runs" where a cell has none, a
panel's model label, and writing a figure.

matplotlib runs on its Agg backend (no display needed). A family's plot
module is imported only when a report is drawn (its registry entry imports
it inside its ``plots``), so reading the registry loads no matplotlib.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from spatialstale_evals.harness.lake_episode import OUTCOMES  # noqa: E402
from spatialstale_evals.harness.report_tables import LAKE_ORDER, order  # noqa: E402

#: A legend to the right of its panel, outside it (``tight_layout`` makes room for it).
OUTSIDE = {"fontsize": 8, "loc": "upper left", "bbox_to_anchor": (1.02, 1.0), "borderaxespad": 0.0}
#: The episode outcomes' colours (the specification's palette: success as the start
#: cell, death as a hole, timeout as ice) and the observation modalities'.
COLOURS = {"success": "#2E8B57", "death": "#202020", "timeout": "#A8C8E8", "text": "#4C72B0", "image": "#DD8452"}

#: A panel with runs: (its axes, its rows, its title).
Panel = tuple[plt.Axes, pd.DataFrame, str]


def empty(ax: plt.Axes, title: str) -> None:
    """A panel with no runs: says so, with no ticks that would mean something
    (the y axis is shared with its row, so it stays)."""
    ax.set_xticks([])
    ax.text(0.5, 0.5, "no runs", ha="center", va="center", transform=ax.transAxes, color="#888888")
    ax.set_title(title, fontsize=8)


def outcome_legend(ax: plt.Axes) -> None:
    """The outcome colours, drawn from ``COLOURS`` (not from whatever the panel happened to
    plot), beside the panel rather than on it: a stacked bar fills its panel to 100 %, so a
    legend inside would hide bars."""
    handles = [plt.Rectangle((0, 0), 1, 1, color=COLOURS[o]) for o in OUTCOMES]
    ax.legend(handles, OUTCOMES, **OUTSIDE)


def panels(data: pd.DataFrame, ylabel: str, width: float, height: float) -> tuple[plt.Figure, plt.Axes, list[Panel]]:
    """A grid of panels, rows model(+config, modality), columns regime (y shared
    along a row): the figure, the panel the legend goes on (top right), and the
    panels with runs, each as (axes, its rows, title). A panel without runs is
    drawn as such here (``empty``) and not returned."""
    rows = list(data.groupby(["model", "config", "modality"], sort=False))
    regimes = order(data["regime"], LAKE_ORDER["regime"])
    fig, axes = plt.subplots(
        len(rows), len(regimes), figsize=(width * len(regimes), height * len(rows)), squeeze=False, sharey=True
    )
    found: list[Panel] = []
    for i, ((model, config, modality), g) in enumerate(rows):
        axes[i][0].set_ylabel(ylabel)
        for j, regime in enumerate(regimes):
            gr, title = g[g["regime"] == regime], f"{regime} | {label(model, config)} | {modality}"
            if gr.empty:
                empty(axes[i][j], title)
            else:
                found.append((axes[i][j], gr, title))
    return fig, axes[0][-1], found


def save(fig: plt.Figure, path: Path) -> Path:
    """Lay ``fig`` out, write it to ``path`` (110 dpi) and close it; returns ``path``."""
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def label(model: str, config: str) -> str:
    """A panel's model label: the model, its configuration on a line below (if any)."""
    return model + (f"\n({config})" if config else "")
