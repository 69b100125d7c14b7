"""What memory is worth and what it costs: the Memory Trust Gap's two suites
in SpatialSTALE's terms (README, "Memory that matters").

- **Benefit**: on a clean regime (nothing ever changes, every entry true: L0)
  memory can only help; it does when the agent cannot see everything
  (``view_radius``). Success with all entries (``no_filter``) against none
  (``no_memory``).
- **Safety**: on a regime with stale entries, raw memory (``no_filter``) can
  kill; an audit (``omcd``), the runtime resolver (``resolve``) and the ground
  truth (``oracle``) each remove some of the hazard. Deaths per strategy.

Rates come from the navigation table; p-values are the paired Wilcoxon tests
of ``inference.wilcoxon_table`` (Holm-adjusted within their family), so this
view adds no test of its own.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from spatialstale_evals.analysis.tables import sort_table
from spatialstale_evals.world.regimes import REGIMES

#: The benefit comparison: memory (every entry) against none.
WITH_MEMORY, WITHOUT_MEMORY = "no_filter", "no_memory"
#: The safety comparison: raw memory, then each way of keeping it honest.
RAW = "no_filter"
KEPT_HONEST = ("omcd", "resolve", "oracle")
CELL = ["model", "config", "modality"]


def _clean(regime: str) -> bool:
    entry = REGIMES.get(regime)
    return bool(entry and entry.clean)


def _rate(navigation: pd.DataFrame, cell: dict[str, Any], regime: str, strategy: str, column: str) -> float:
    sel = navigation
    for key, value in {**cell, "regime": regime, "strategy": strategy}.items():
        sel = sel[sel[key] == value]
    return float(sel[column].iloc[0]) if len(sel) else math.nan


def _p(tests: pd.DataFrame, cell: dict[str, Any], regime: str, metric: str, a: str, b: str) -> float:
    """The Holm-adjusted p of the paired test between ``a`` and ``b`` (either order)."""
    if tests.empty:
        return math.nan
    sel = tests
    for key, value in {**cell, "regime": regime, "metric": metric}.items():
        sel = sel[sel[key] == value]
    sel = sel[((sel["a"] == a) & (sel["b"] == b)) | ((sel["a"] == b) & (sel["b"] == a))]
    return float(sel["pvalue_holm"].iloc[0]) if len(sel) else math.nan


def benefit_table(navigation: pd.DataFrame, tests: pd.DataFrame) -> pd.DataFrame:
    """Per model, config and modality, on each clean regime: success with and
    without memory, the benefit in points and its paired test."""
    if navigation.empty:
        return pd.DataFrame()
    rows = []
    for key, g in navigation.groupby([*CELL, "regime"], sort=False):
        cell, regime = dict(zip(CELL, key[:-1])), key[-1]
        if not _clean(regime) or not {WITH_MEMORY, WITHOUT_MEMORY} <= set(g["strategy"]):
            continue
        with_, without = (_rate(navigation, cell, regime, s, "success") for s in (WITH_MEMORY, WITHOUT_MEMORY))
        rows.append(
            {
                **cell,
                "regime": regime,
                "success_with_memory": with_,
                "success_without_memory": without,
                "benefit_pp": with_ - without,
                "timeout_without_memory": _rate(navigation, cell, regime, WITHOUT_MEMORY, "timeout"),
                "pvalue_holm": _p(tests, cell, regime, "success", WITH_MEMORY, WITHOUT_MEMORY),
            }
        )
    return sort_table(pd.DataFrame(rows))


def safety_table(navigation: pd.DataFrame, tests: pd.DataFrame) -> pd.DataFrame:
    """Per model, config, modality and regime with stale entries: deaths with
    raw memory and with each way of keeping it honest, and the paired test of
    each against raw memory."""
    if navigation.empty:
        return pd.DataFrame()
    rows = []
    for key, g in navigation.groupby([*CELL, "regime"], sort=False):
        cell, regime = dict(zip(CELL, key[:-1])), key[-1]
        present = set(g["strategy"])
        if _clean(regime) or RAW not in present or not present & set(KEPT_HONEST):
            continue
        row: dict[str, Any] = {**cell, "regime": regime, f"death_{RAW}": _rate(navigation, cell, regime, RAW, "death")}
        for strategy in KEPT_HONEST:
            row[f"death_{strategy}"] = _rate(navigation, cell, regime, strategy, "death")
            row[f"p_{strategy}"] = _p(tests, cell, regime, "death", RAW, strategy)
        rows.append(row)
    return sort_table(pd.DataFrame(rows))
