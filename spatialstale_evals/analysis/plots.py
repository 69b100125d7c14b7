"""PNG plots of the report (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from spatialstale_evals.analysis.tables import ORDER, OUTCOMES, order  # noqa: E402

#: A legend to the right of its panel, outside it (``tight_layout`` makes room for it).
OUTSIDE = {"fontsize": 8, "loc": "upper left", "bbox_to_anchor": (1.02, 1.0), "borderaxespad": 0.0}
COLOURS = {"success": "#2E8B57", "death": "#202020", "timeout": "#A8C8E8", "text": "#4C72B0", "image": "#DD8452"}


def _empty(ax: plt.Axes, title: str) -> None:
    """A panel with no runs: says so, with no strategy ticks that would mean something
    (the y axis is shared with its row, so it stays)."""
    ax.set_xticks([])
    ax.text(0.5, 0.5, "no runs", ha="center", va="center", transform=ax.transAxes, color="#888888")
    ax.set_title(title, fontsize=8)


def _outcome_legend(ax: plt.Axes) -> None:
    """The outcome colours, drawn from ``COLOURS`` (not from whatever the panel happened to
    plot), beside the panel rather than on it: a stacked bar fills its panel to 100 %, so a
    legend inside would hide bars."""
    handles = [plt.Rectangle((0, 0), 1, 1, color=COLOURS[o]) for o in OUTCOMES]
    ax.legend(handles, OUTCOMES, **OUTSIDE)


Panel = tuple[plt.Axes, pd.DataFrame, str]


def _panels(data: pd.DataFrame, ylabel: str, width: float, height: float) -> tuple[plt.Figure, plt.Axes, list[Panel]]:
    """A grid of panels, rows model(+config, modality), columns regime (y shared
    along a row): the figure, the panel the legend goes on (top right), and the
    panels with runs, each as (axes, its rows, title). A panel without runs is
    drawn as such here (``_empty``) and not returned."""
    rows = list(data.groupby(["model", "config", "modality"], sort=False))
    regimes = order(data["regime"], ORDER["regime"])
    fig, axes = plt.subplots(
        len(rows), len(regimes), figsize=(width * len(regimes), height * len(rows)), squeeze=False, sharey=True
    )
    panels: list[Panel] = []
    for i, ((model, config, modality), g) in enumerate(rows):
        axes[i][0].set_ylabel(ylabel)
        for j, regime in enumerate(regimes):
            gr, title = g[g["regime"] == regime], f"{regime} | {_label(model, config)} | {modality}"
            if gr.empty:
                _empty(axes[i][j], title)
            else:
                panels.append((axes[i][j], gr, title))
    return fig, axes[0][-1], panels


def _save(fig: plt.Figure, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _label(model: str, config: str) -> str:
    return model + (f"\n({config})" if config else "")


def f1_by_regime(detection: pd.DataFrame, path: Path) -> Path | None:
    """Detection F1 (mean +- sd over seeds) per regime, bars per modality, one panel per model."""
    if detection.empty:
        return None
    groups = list(detection.groupby(["model", "config"], sort=False))
    fig, axes = plt.subplots(1, len(groups), figsize=(4.5 * len(groups), 3.6), squeeze=False)
    for ax, ((model, config), g) in zip(axes[0], groups):
        regimes = order(g["regime"], ORDER["regime"])
        modalities = order(g["modality"], ORDER["modality"])
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
        ax.set_title(_label(model, config), fontsize=9)
        ax.legend(**OUTSIDE)  # F1 bars reach the top: a legend inside would hide some
    fig.suptitle("Detection F1 by regime and modality")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def outcomes_by_strategy(navigation: pd.DataFrame, path: Path) -> Path | None:
    """Stacked success/death/timeout bars per strategy; rows model(+modality), columns regime."""
    if navigation.empty:
        return None
    fig, legend_at, panels = _panels(navigation, "% of episodes", 4.2, 3.2)
    for ax, rows, title in panels:
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
    _outcome_legend(legend_at)
    fig.suptitle("Navigation outcomes by strategy")
    return _save(fig, path)


def trajectory_lengths(nav: pd.DataFrame, path: Path) -> Path | None:
    """Box plots of episode length per strategy and outcome; rows model(+modality), columns regime."""
    if nav.empty:
        return None
    fig, legend_at, panels = _panels(nav, "steps", 4.8, 3.4)
    for ax, gr, title in panels:
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
    _outcome_legend(legend_at)
    fig.suptitle("Trajectory length by strategy and outcome")
    return _save(fig, path)


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
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
