"""What memory is worth and what it costs: the Memory Trust Gap's two suites
in SpatialSTALE's terms (docs/memory.md, "Memory that matters").

- **Benefit**: on a clean regime (nothing ever changes, every entry true: L0)
  memory can only help; it does when the agent cannot see everything
  (``view_radius``). Success with every entry (``no_filter``) against none
  (``no_memory``).
- **Safety**: on a regime with stale entries raw memory (``no_filter``) can
  mislead; every other arm that shows memory (an audit, the runtime resolver,
  the ground truth, each with its filter mode: ``omcd[history]``) is set
  against it: success, deaths, timeouts (under partial observability stale
  memory costs time more than lives) and audit calls.

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
#: The safety comparison's baseline: raw memory.
RAW = "no_filter"
CELL = ["model", "config", "modality"]


def is_clean(regime: str) -> bool:
    """Whether ``regime`` changes nothing (L0): memory's benefit is measured there, its tax elsewhere."""
    entry = REGIMES.get(regime)
    return bool(entry and entry.clean)


def _p(tests: pd.DataFrame, cell: dict[str, Any], regime: str, metric: str, a: str, b: str) -> float:
    """The Holm-adjusted p of the paired test between arms ``a`` and ``b`` (either order)."""
    if tests.empty:
        return math.nan
    sel = tests
    for key, value in {**cell, "regime": regime, "metric": metric}.items():
        sel = sel[sel[key] == value]
    sel = sel[((sel["a"] == a) & (sel["b"] == b)) | ((sel["a"] == b) & (sel["b"] == a))]
    return float(sel["pvalue_holm"].iloc[0]) if len(sel) else math.nan


def _cells(navigation: pd.DataFrame, clean: bool) -> list[tuple[dict[str, Any], str, pd.DataFrame]]:
    out = []
    for key, g in navigation.groupby([*CELL, "regime"], sort=False):
        if is_clean(key[-1]) == clean:
            out.append((dict(zip(CELL, key[:-1])), key[-1], g.set_index("strategy")))
    return out


def benefit_table(navigation: pd.DataFrame, tests: pd.DataFrame) -> pd.DataFrame:
    """Per model, config and modality, on each clean regime: success, death and
    timeout with and without memory, the benefit in points and its paired test."""
    if navigation.empty:
        return pd.DataFrame()
    rows = []
    for cell, regime, g in _cells(navigation, clean=True):
        if WITH_MEMORY not in g.index or WITHOUT_MEMORY not in g.index:
            continue
        with_, without = g.loc[WITH_MEMORY], g.loc[WITHOUT_MEMORY]
        row: dict[str, Any] = {**cell, "regime": regime}
        for name, r in (("with", with_), ("without", without)):
            row |= {f"{k}_{name}": r[k] for k in ("success", "death", "timeout")}
        row["benefit_pp"] = with_["success"] - without["success"]
        row["pvalue_holm"] = _p(tests, cell, regime, "success", WITH_MEMORY, WITHOUT_MEMORY)
        rows.append(row)
    return sort_table(pd.DataFrame(rows))


def safety_table(navigation: pd.DataFrame, tests: pd.DataFrame) -> pd.DataFrame:
    """Per model, config, modality and regime with changes: each arm that
    shows memory, raw memory first, with its outcomes, audit calls per episode
    and its paired tests (success, death) against raw memory."""
    if navigation.empty:
        return pd.DataFrame()
    rows = []
    for cell, regime, g in _cells(navigation, clean=False):
        if RAW not in g.index or len(g.index) < 2:
            continue
        for arm, r in g.iterrows():
            if arm == WITHOUT_MEMORY:
                continue
            rows.append(
                {
                    **cell,
                    "regime": regime,
                    "strategy": arm,
                    **{k: r[k] for k in ("success", "death", "death_on_stale", "timeout", "audit_calls")},
                    "p_success": math.nan if arm == RAW else _p(tests, cell, regime, "success", RAW, str(arm)),
                    "p_death": math.nan if arm == RAW else _p(tests, cell, regime, "death", RAW, str(arm)),
                }
            )
    return sort_table(pd.DataFrame(rows))
