"""The report's own plot, which reads several families: the trust gap's
stale-memory tax against the capability the user gave (``--model-info``).
Each family's plots are its own (``<family>/plots.py``, drawn through
``TaskFamily.plots``); the drawing helpers they share are
``harness/report_plots.py``.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from spatialstale_evals.harness import report_plots
from spatialstale_evals.harness.report_plots import plt

FILE = "tax_vs_capability.png"


def tax_vs_capability(tax: pd.DataFrame, path: Path) -> Path | None:
    """The stale-memory tax of each model against the capability the user
    gave (``--model-info``), one line per regime and factor level: the Trust
    Gap's capability curve."""
    if tax.empty or "capability" not in tax or tax["capability"].isna().all():
        return None
    data = tax.dropna(subset=["capability"])
    measure = str(data["capability_measure"].iloc[0])
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for (regime, levels, config, modality), g in data.groupby(["regime", "levels", "config", "modality"], sort=False):
        g = g.sort_values("capability")
        extra = ", ".join(x for x in (config, modality if modality != "text" else "") if x)
        ax.plot(
            g["capability"], g["tax_pp"], marker="o", label=f"{regime}: {levels}" + (f" ({extra})" if extra else "")
        )
        for _, r in g.iterrows():
            ax.annotate(
                str(r["model"]), (r["capability"], r["tax_pp"]), fontsize=7, xytext=(3, 3), textcoords="offset points"
            )
    if (data["capability"] > 0).all() and data["capability"].max() / data["capability"].min() > 20:
        ax.set_xscale("log")
    ax.axhline(0, color="#888888", linewidth=0.8)
    ax.set_xlabel(measure)
    ax.set_ylabel("stale-memory tax (pp): death no_filter - no_memory")
    ax.set_title("Trust gap: the stale-memory tax against capability")
    ax.legend(fontsize=7)
    return report_plots.save(fig, path)
