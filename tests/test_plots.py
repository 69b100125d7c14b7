"""The report's outcome plots: the legend's colours are the outcomes' own
whichever panels have data, and a panel without runs says so instead of
showing ticks that mean nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib.colors as mcolors
import pandas as pd
import pytest

from spatialstale_evals.analysis import plots

#: The outcome colours, from the specification's palette: success as the start cell, death as a hole, timeout as ice.
EXPECTED = {"success": "#2e8b57", "death": "#202020", "timeout": "#a8c8e8"}


@pytest.fixture
def figures(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    kept: list[Any] = []
    monkeypatch.setattr(plots, "_save", lambda fig, path: kept.append(fig) or path)
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
