"""The families' report plots (``detection/plots.py``, ``navigation/plots.py``):
the outcome legend's colours are the outcomes' own whichever panels have data,
a panel without runs says so instead of showing ticks that mean nothing, and no
legend hides a bar or falls off the figure (checked on the drawn figure, bar by
bar)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib.colors as mcolors
import pandas as pd
import pytest

from spatialstale_evals.detection import plots as detection_plots
from spatialstale_evals.harness import report_plots
from spatialstale_evals.navigation import plots

#: The outcome colours, from the specification's palette: success as the start cell, death as a hole, timeout as ice.
EXPECTED = {"success": "#2e8b57", "death": "#202020", "timeout": "#a8c8e8"}


@pytest.fixture
def figures(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    kept: list[Any] = []
    monkeypatch.setattr(report_plots, "save", lambda fig, path: kept.append(fig) or path)
    return kept


def sparse_navigation() -> pd.DataFrame:
    """Model A ran L1 only, model B L2 only: two of the four panels are empty."""
    rows = [
        {"model": "A", "config": "", "modality": "text", "regime": "L1", "strategy": "omcd", "success": 80.0,
         "death": 20.0, "timeout": 0.0},
        {"model": "B", "config": "", "modality": "text", "regime": "L2", "strategy": "no_filter", "success": 0.0,
         "death": 50.0, "timeout": 50.0},
    ]  # fmt: skip
    return pd.DataFrame(rows)


def legend_colours(fig: Any) -> dict[str, str]:
    (legend,) = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    return {
        text.get_text(): mcolors.to_hex(handle.get_facecolor())
        for text, handle in zip(legend.get_texts(), legend.legend_handles)
    }


def test_outcome_legend_keeps_its_colours_and_empty_panels_say_so(figures: list[Any], tmp_path: Path) -> None:
    plots.outcomes_by_strategy(sparse_navigation(), tmp_path / "o.png")
    (fig,) = figures
    assert legend_colours(fig) == EXPECTED  # the legend sits on panel (A, L2), which is empty
    empty = [ax for ax in fig.axes if any(t.get_text() == "no runs" for t in ax.texts)]
    assert len(empty) == 2
    assert all(list(ax.get_xticks()) == [] for ax in empty)


def test_trajectory_legend_keeps_its_colours(figures: list[Any], tmp_path: Path) -> None:
    nav = pd.DataFrame(
        [
            {
                "model": "A",
                "config": "",
                "modality": "text",
                "regime": "L1",
                "strategy": "omcd",
                "outcome": "death",
                "steps": 4,
            },
            {
                "model": "B",
                "config": "",
                "modality": "text",
                "regime": "L2",
                "strategy": "omcd",
                "outcome": "success",
                "steps": 14,
            },
        ]  # fmt: skip
    )
    plots.trajectory_lengths(nav, tmp_path / "t.png")
    (fig,) = figures
    assert legend_colours(fig) == EXPECTED
    assert sum(any(t.get_text() == "no runs" for t in ax.texts) for ax in fig.axes) == 2


def full_navigation() -> pd.DataFrame:
    """Every strategy's bars fill their panel to 100 % in all three regimes (the example report's shape)."""
    strategies = ("no_memory", "no_filter", "self_verify", "omcd", "oracle")
    return pd.DataFrame(
        [
            {
                "model": "A",
                "config": "",
                "modality": "text",
                "regime": regime,
                "strategy": s,
                "success": 60.0,
                "death": 30.0,
                "timeout": 10.0,
            }
            for regime in ("L1", "L2", "L3")
            for s in strategies
        ]  # fmt: skip
    )


def full_detection() -> pd.DataFrame:
    """F1 = 1 in every regime and modality: the bars reach the top of the panel."""
    return pd.DataFrame(
        [
            {"model": "A", "config": "", "regime": regime, "modality": m, "f1_mean": 1.0, "f1_sd": 0.0}
            for regime in ("L1", "L2", "L3")
            for m in ("text", "image")
        ]
    )


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The figures as written to disk (laid out and drawn), kept open for inspection."""
    kept: list[Any] = []
    monkeypatch.setattr(report_plots.plt, "close", lambda fig: kept.append(fig))
    return kept


def hidden_bars(fig: Any) -> list[str]:
    """Bars (rectangles with an area) that a legend overlaps, and legends cut off by the figure's edge."""
    renderer = fig.canvas.get_renderer()
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    assert legends, "the figure has a legend"
    problems = []
    for legend in legends:
        box = legend.get_window_extent(renderer)
        if not (fig.bbox.x0 <= box.x0 and box.x1 <= fig.bbox.x1 and fig.bbox.y0 <= box.y0 and box.y1 <= fig.bbox.y1):
            problems.append(f"legend {box} outside the figure {fig.bbox}")
        for ax in fig.axes:
            for i, patch in enumerate(ax.patches):
                bar = patch.get_window_extent(renderer)
                if bar.width > 1 and bar.height > 1 and box.overlaps(bar):
                    problems.append(f"legend over bar {i} of panel {ax.get_title()!r}")
    return problems


@pytest.mark.parametrize(
    ("plot", "data"),
    [(plots.outcomes_by_strategy, full_navigation), (detection_plots.f1_by_regime, full_detection)],
    ids=["outcomes_by_strategy", "f1_by_regime"],
)
def test_no_legend_hides_a_bar(plot: Any, data: Any, drawn: list[Any], tmp_path: Path) -> None:
    plot(data(), tmp_path / "p.png")
    (fig,) = drawn
    assert hidden_bars(fig) == []
