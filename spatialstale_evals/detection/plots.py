"""The detect family's report plot: detection F1 (mean +- sd over seeds) per
regime, a bar per modality, one panel per model and configuration, from the
family's ``detection`` table (``detection/tables.py``). The family's registry
entry draws it through ``TaskFamily.plots``; the shared drawing helpers are
``harness/report_plots.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from spatialstale_evals.harness import report_plots
from spatialstale_evals.harness.report_plots import COLOURS, OUTSIDE, label, plt
from spatialstale_evals.harness.report_tables import LAKE_ORDER, order

FILE = "f1_by_regime.png"


def f1_by_regime(detection: pd.DataFrame, path: Path) -> Path | None:
    """Detection F1 (mean +- sd over seeds) per regime, bars per modality, one panel per model."""
    if detection.empty:
        return None
    groups = list(detection.groupby(["model", "config"], sort=False))
    fig, axes = plt.subplots(1, len(groups), figsize=(4.5 * len(groups), 3.6), squeeze=False)
    for ax, ((model, config), g) in zip(axes[0], groups):
        regimes = order(g["regime"], LAKE_ORDER["regime"])
        modalities = order(g["modality"], LAKE_ORDER["modality"])
        width = 0.8 / len(modalities)
        for i, m in enumerate(modalities):
            gm = g[g["modality"] == m].set_index("regime")
            means = [gm["f1_mean"].get(r, np.nan) for r in regimes]
            sds = [gm["f1_sd"].get(r, np.nan) for r in regimes]
            xs = np.arange(len(regimes)) + (i - (len(modalities) - 1) / 2) * width
            ax.bar(xs, means, width, yerr=np.nan_to_num(sds), capsize=3, label=m, color=COLOURS.get(m))
        ax.set_xticks(np.arange(len(regimes)), regimes)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("F1 (mean +- sd over seeds)")
        ax.set_title(label(model, config), fontsize=9)
        ax.legend(**OUTSIDE)  # F1 bars reach the top: a legend inside would hide some
    fig.suptitle("Detection F1 by regime and modality")
    return report_plots.save(fig, path)


def plot(tables: Mapping[str, pd.DataFrame], records: pd.DataFrame, out_dir: Path) -> list[Path]:
    """Write ``FILE`` into ``out_dir`` from the family's report tables; the files written (none without data)."""
    path = f1_by_regime(tables.get("detection", pd.DataFrame()), Path(out_dir) / FILE)
    return [path] if path is not None else []
