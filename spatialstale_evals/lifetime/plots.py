"""The lifelong task's report plot: SPL and ``note_balanced`` against the
episode index, one panel per regime, one colour per model (and
configuration), SPL solid and ``note_balanced`` dashed. Learning shows as
SPL rising under L0 (the notes teach the way); decay as ``note_balanced``
falling under L1-L3.

``curves(tables)`` gives the plotted values as rows (regime, series, curve,
episode, value), from the report's tables ``spl_by_episode`` and
``note_balanced_by_episode`` (``tables.lifetime_tables``); ``draw`` draws
exactly those rows; ``plot`` writes the PNG (matplotlib's Agg backend, no
display needed). The family's registry entry draws it through
``TaskFamily.plots``, importing this module only then.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from spatialstale_evals.world.regimes import REGIMES  # noqa: E402

#: The plotted curves: (report table, curve name, line style).
CURVES = (("spl_by_episode", "SPL", "-"), ("note_balanced_by_episode", "note_balanced", "--"))
FILE = "lifelong_by_episode.png"
#: Columns that label a series (the rest of a table's non-index columns are episode indices).
_REGIME = "regime"


def _episode_columns(frame: pd.DataFrame) -> list[int]:
    return sorted(c for c in frame.columns if isinstance(c, int) or (isinstance(c, str) and c.isdigit()))


def curves(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per plotted point: ``regime``, ``series`` (the group's other
    labels, joined), ``curve``, ``episode``, ``value`` (NaN points are kept:
    no cell is knowable at episode 1, so it has no ``note_balanced``)."""
    rows = []
    for key, curve, _ in CURVES:
        frame = tables.get(key)
        if frame is None or frame.empty:
            continue
        episodes = _episode_columns(frame)
        labels = [c for c in frame.columns if c not in episodes and c != _REGIME]
        for _, row in frame.iterrows():
            series = " | ".join(str(row[c]) for c in labels if str(row[c]) not in ("", "nan"))
            for k in episodes:
                value = row[k]
                rows.append(
                    {
                        "regime": str(row.get(_REGIME, "")),
                        "series": series,
                        "curve": curve,
                        "episode": int(k),
                        "value": float(value) if value is not None else math.nan,
                    }
                )
    return pd.DataFrame(rows, columns=["regime", "series", "curve", "episode", "value"])


def draw(points: pd.DataFrame) -> plt.Figure | None:
    """The figure of ``points`` (``curves``): a panel per regime (the suite's
    order), a line per series and curve; None when there is nothing to draw."""
    if points.empty:
        return None
    regimes = [r for r in REGIMES if r in set(points["regime"])]
    regimes += sorted(set(points["regime"]) - set(regimes))
    series = list(dict.fromkeys(points["series"]))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    fig, axes = plt.subplots(
        1,
        len(regimes),
        figsize=(max(6.0, 3.6 * len(regimes)), 3.4 + 0.22 * len(series) * len(CURVES) / (2 if len(series) > 3 else 1)),
        squeeze=False,
        sharey=True,
        layout="constrained",
    )
    for ax, regime in zip(axes[0], regimes):
        for i, name in enumerate(series):
            for _, curve, style in CURVES:
                sel = points[(points["regime"] == regime) & (points["series"] == name) & (points["curve"] == curve)]
                if sel.empty:
                    continue
                sel = sel.sort_values("episode")
                # equal lines must not hide each other: each series its own marker, nudged sideways
                nudge = (i - (len(series) - 1) / 2) * min(0.08, 0.3 / len(series))
                ax.plot(
                    [e + nudge for e in sel["episode"].to_list()],
                    sel["value"].to_list(),
                    style,
                    marker="osD^v<>p"[i % 8],
                    color=colours[i % len(colours)],
                    label=f"{name}: {curve}",
                )
        ax.set_title(regime, fontsize=9)
        ax.set_xlabel("episode")
        ax.set_ylim(-0.05, 1.05)
        episodes = sorted(set(points["episode"]))
        ax.set_xticks(episodes)
    axes[0][0].set_ylabel("SPL / note_balanced")
    handles, labels = axes[0][0].get_legend_handles_labels()
    for ax in axes[0][1:]:  # a series may be missing from the first panel
        for handle, label in zip(*ax.get_legend_handles_labels()):
            if label not in labels:
                handles.append(handle)
                labels.append(label)
    fig.legend(handles, labels, fontsize=7, loc="outside lower center", ncol=2 if len(labels) > 6 else 1)
    fig.suptitle("Lifelong: SPL (solid), note_balanced at the episode start (dashed)", fontsize=10)
    return fig


def plot(tables: Mapping[str, pd.DataFrame], records: pd.DataFrame, out_dir: Path) -> list[Path]:
    """Write ``FILE`` into ``out_dir`` from the report's lifelong tables (the
    records are not read: the tables hold every point); the files written
    (none without data)."""
    fig = draw(curves(tables))
    if fig is None:
        return []
    path = Path(out_dir) / FILE
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return [path]
