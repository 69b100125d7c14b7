"""What memory is worth and what it costs: the Memory Trust Gap's two suites
in SpatialSTALE's terms (docs/memory.md, "Memory that matters").

- **Benefit**: memory (every entry as written, ``no_filter``) against none
  (``no_memory``), on every regime, under full observation and per view
  radius side by side. On a clean regime (nothing ever changes, every entry
  true: L0) memory can only help; it does when the agent cannot see
  everything (``view_radius``). On a regime with stale entries the same
  comparison is memory's net worth: under full observation stale memory can
  only hurt (the observation already shows everything, and an agent that
  trusts a stale SAFE walks into the hole), under partial observation it can
  still help more than it hurts. ``net`` says which the run shows.
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
import re
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


#: A view radius in a configuration label (``view_radius=1``); none: full observation.
_RADIUS = re.compile(r"(?:^|, )view_radius=(\d+)(?:,|$)")


def observation_of(config: str) -> str:
    """``full`` or ``radius r``, read off a configuration label (a radius that
    covers the grid is recorded as full observation, ``logs.EFFECTIVE_ARGS``)."""
    found = _RADIUS.search(str(config))
    return f"radius {found.group(1)}" if found else "full"


def net_of(success_pp: float, death_pp: float) -> str:
    """What memory did, both sides at once: ``helps`` (more successes, no more
    deaths, or fewer deaths at the same success), ``harms`` (fewer successes, no
    fewer deaths, or more deaths at the same success), ``helps and harms`` (more
    successes and more deaths: it takes some agents to the goal and walks others
    into holes), ``fewer successes, fewer deaths``, or ``no difference``."""
    if success_pp > 0 and death_pp > 0:
        return "helps and harms"
    if success_pp < 0 and death_pp < 0:
        return "fewer successes, fewer deaths"
    if success_pp > 0 or death_pp < 0:
        return "helps"
    if success_pp < 0 or death_pp > 0:
        return "harms"
    return "no difference"


def benefit_table(navigation: pd.DataFrame, tests: pd.DataFrame) -> pd.DataFrame:
    """Per model, config and modality, on each regime run with and without
    memory: success, death and timeout with and without it, the net effect in
    points, whether memory helps or harms, and the paired test; rows by
    regime, full observation first and then each view radius, so each partial
    row stands beside its full-observation one."""
    if navigation.empty:
        return pd.DataFrame()
    rows = []
    for clean in (True, False):
        for cell, regime, g in _cells(navigation, clean=clean):
            if WITH_MEMORY not in g.index or WITHOUT_MEMORY not in g.index:
                continue
            with_, without = g.loc[WITH_MEMORY], g.loc[WITHOUT_MEMORY]
            row: dict[str, Any] = {
                **cell,
                "regime": regime,
                "memory": "true (nothing stale)" if clean else "stale entries",
                "observation": observation_of(cell["config"]),
            }
            for name, r in (("with", with_), ("without", without)):
                row |= {f"{k}_{name}": r[k] for k in ("success", "death", "timeout")}
            row["benefit_pp"] = with_["success"] - without["success"]
            row["death_pp"] = with_["death"] - without["death"]
            row["net"] = net_of(row["benefit_pp"], row["death_pp"])
            row["pvalue_holm"] = _p(tests, cell, regime, "success", WITH_MEMORY, WITHOUT_MEMORY)
            rows.append(row)
    df = sort_table(pd.DataFrame(rows))  # model, config (full first, then radii numerically), regime
    if df.empty:
        return df
    regime_rank = {r: i for i, r in enumerate(REGIMES)}
    df = df.assign(_regime=df["regime"].map(regime_rank).fillna(len(regime_rank)))
    df = df.sort_values(["model", "modality", "_regime"], kind="stable")
    return df.drop(columns="_regime").reset_index(drop=True)


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
