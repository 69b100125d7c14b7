"""The report's statistics: paired Wilcoxon tests between strategies (Holm
within each family), the correlation of detection with navigation, and
detection recall conditioned on the paths that matter.

Per-seed rates enter the tests as exact fractions (``Fraction(successes,
episodes)``), so equal differences tie as they should (``harness/significance.py``).
A *family* of tests is one (model, config, regime, modality) cell: every pair
of strategies on every metric; Holm's adjustment controls the family-wise
error rate within it, and a test is significant when its adjusted p is below
alpha.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from fractions import Fraction
from itertools import combinations
from typing import Any

import pandas as pd

from spatialstale_evals import paper
from spatialstale_evals.analysis.tables import order, ratio, sort_table
from spatialstale_evals.harness.significance import correlate, holm, paired_wilcoxon
from spatialstale_evals.navigation.strategies import STRATEGIES
from spatialstale_evals.world.grid import Cell, goal_of, neighbours, shortest_path, start_of
from spatialstale_evals.world.instance import Instance
from spatialstale_evals.world.staleness import FREEZE, THAW

NAV_METRICS = ("success", "death")
CELL = ["model", "config", "regime", "modality"]
PATH_SETS = {
    "trajectory": f"cells the agent stepped on ({paper.AUDITED} episodes of the same seed)",
    "near_trajectory": "trajectory cells and their 4-neighbours (where a missed thaw can kill)",
    "true_path": "a shortest S->G path on the true grid (after every change: L1/L2 pre-game, L3 the final grid)",
    "remembered_path": "a shortest S->G path on the original grid g0 (the route the memory suggests)",
}


def per_seed_rates(nav: pd.DataFrame, strategy: str, metric: str) -> dict[str, Fraction]:
    """Each seed's ``metric`` rate over its epochs, as an exact fraction (the
    metric is a per-episode 0/1 flag: success, death, timeout)."""
    g = nav[nav["strategy"] == strategy].groupby("instance_id")[metric]
    rates = {}
    for seed, values in g:
        count = float(values.sum())
        if not count.is_integer():
            raise ValueError(f"{metric} of {strategy} on {seed} is not a count of episodes: {count}")
        rates[seed] = Fraction(int(count), len(values))
    return rates


def paired_vectors(nav: pd.DataFrame, a: str, b: str, metric: str) -> tuple[list[str], list[Fraction], list[Fraction]]:
    """Shared seeds and the per-seed ``metric`` rates of strategies ``a`` and ``b``."""
    ra, rb = per_seed_rates(nav, a, metric), per_seed_rates(nav, b, metric)
    seeds = sorted(set(ra) & set(rb))
    return seeds, [ra[s] for s in seeds], [rb[s] for s in seeds]


def _family(g: pd.DataFrame, cell: dict[str, Any], alpha: float, metrics: Iterable[str]) -> list[dict[str, Any]]:
    rows = []
    for a, b in combinations(order(g["strategy"], STRATEGIES), 2):
        for metric in metrics:
            _, x, y = paired_vectors(g, a, b, metric)
            t = paired_wilcoxon(x, y)
            rows.append(
                {
                    **cell,
                    "metric": metric,
                    "a": a,
                    "b": b,
                    "n_pairs": t.n_pairs,
                    "n_nonzero": t.n_nonzero,
                    "rate_a": 100 * t.mean_a,
                    "rate_b": 100 * t.mean_b,
                    "diff_pp": 100 * t.mean_diff,
                    "statistic": t.statistic,
                    "method": t.method,
                    "pvalue": t.pvalue,
                    "rank_biserial": t.rank_biserial,
                    "note": t.note,
                }
            )
    for row, adjusted in zip(rows, holm([r["pvalue"] for r in rows])):
        row["pvalue_holm"] = adjusted
        row["significant"] = bool(adjusted < alpha) if not math.isnan(adjusted) else False
    return rows


def wilcoxon_table(nav: pd.DataFrame, alpha: float = paper.ALPHA, metrics: Iterable[str] = NAV_METRICS) -> pd.DataFrame:
    """Paired Wilcoxon signed-rank tests between every two strategies of a
    (model, config, regime, modality) cell on their shared seeds, with raw and
    Holm-adjusted p-values."""
    if nav.empty:
        return pd.DataFrame()
    rows = []
    for key, g in nav.groupby(CELL, sort=False):
        rows += _family(g, dict(zip(CELL, key)), alpha, metrics)
    return sort_table(pd.DataFrame(rows), {"metric": NAV_METRICS})


# -- detection x navigation ---------------------------------------------------------


def _default(df: pd.DataFrame) -> pd.DataFrame:
    return df[df["config"] == ""] if not df.empty else df


def correlation_table(det: pd.DataFrame, nav: pd.DataFrame, modality: str = "text") -> pd.DataFrame:
    """Pearson and Spearman correlation between per-seed detection F1 (detect
    task) and per-seed success rate of the audited strategy (navigate task),
    same model and regime, paper protocol, per regime."""
    if det.empty or nav.empty:
        return pd.DataFrame()
    d = _default(det)
    d = d[d["modality"] == modality]
    n = _default(nav)
    n = n[(n["strategy"] == paper.AUDITED) & (n["modality"] == modality)]
    rows = []
    for (model, regime), gd in d.groupby(["model", "regime"], sort=False):
        gn = n[(n["model"] == model) & (n["regime"] == regime)]
        if gn.empty:
            continue
        f1 = gd.groupby("instance_id")["f1"].mean()
        success = gn.groupby("instance_id")["success"].mean()
        seeds = sorted(set(f1.index) & set(success.index))
        c = correlate([f1[s] for s in seeds], [success[s] for s in seeds])
        rows.append(
            {
                "model": model,
                "regime": regime,
                "modality": modality,
                "seeds": c.n,
                "f1_mean": float(f1[seeds].mean()) if seeds else math.nan,
                f"{paper.AUDITED}_success": 100 * float(success[seeds].mean()) if seeds else math.nan,
                "pearson_r": c.pearson_r,
                "pearson_p": c.pearson_p,
                "spearman_rho": c.spearman_rho,
                "spearman_p": c.spearman_p,
                "note": c.note,
            }
        )
    return sort_table(pd.DataFrame(rows))


def instance_paths(inst: Instance) -> dict[str, set[Cell]]:
    """The fixed (trajectory-independent) cell sets of an instance."""
    out = {}
    for name, grid in (("true_path", inst.final_grid()), ("remembered_path", inst.g0)):
        out[name] = set(shortest_path(grid, start_of(grid), goal_of(grid)) or [])
    return out


def near(cells: set[Cell], grid: tuple[str, ...]) -> set[Cell]:
    return cells | {n for c in cells for n in neighbours(grid, c)}


def _trajectories(nav: pd.DataFrame) -> dict[tuple[str, str, str, str], list[list[list[int]]]]:
    out: dict[tuple[str, str, str, str], list[list[list[int]]]] = {}
    if not nav.empty:
        n = _default(nav)
        for r in n[n["strategy"] == paper.AUDITED].itertuples():
            out.setdefault((r.model, r.regime, r.modality, r.instance_id), []).append(r.trajectory)
    return out


def _set_counts(
    inst: Instance, flagged_by_step: dict[int, set[str]], truth: list[dict[str, Any]], cellset: set[Cell]
) -> dict[str, int]:
    """Stale entries of ``cellset`` and how many were flagged, over the
    windows' truth as the sample logged it (the instance's own, computed once)."""
    cells = {e.id: e.cell for e in inst.memory}
    out = dict.fromkeys(("stale", "flagged", "thaw", "thaw_flagged"), 0)
    for window in truth:
        flagged = flagged_by_step.get(window["step"], set())
        stale = {**dict.fromkeys(window["thaw"], THAW), **dict.fromkeys(window["freeze"], FREEZE)}
        for eid, kind in stale.items():
            if cells[eid] in cellset:
                hit = eid in flagged
                out["stale"] += 1
                out["flagged"] += hit
                out["thaw"] += kind == THAW
                out["thaw_flagged"] += kind == THAW and hit
    return out


def path_recall_counts(det: pd.DataFrame, nav: pd.DataFrame) -> pd.DataFrame:
    """Per detect sample-epoch and cell set: stale entries in the set and how
    many of them were flagged (trajectory sets: pooled over the seed's
    audited-strategy episodes, each episode counted once)."""
    rows = []
    trajectories_by = _trajectories(nav)
    cache: dict[tuple[str, str], Instance] = {}
    for r in _default(det).itertuples():
        if (r.regime, r.instance_id) not in cache:  # a regime this process may not know: read, don't validate
            cache[(r.regime, r.instance_id)] = Instance.from_json(r.instance, registered=False)
        inst = cache[(r.regime, r.instance_id)]
        flagged_by_step = {w["step"]: set(w["flagged"]) for w in r.windows_flagged}
        trajectories = trajectories_by.get((r.model, r.regime, r.modality, r.instance_id), [])
        sets: list[tuple[str, set[Cell]]] = [("all", {e.cell for e in inst.memory}), *instance_paths(inst).items()]
        for t in trajectories:
            visited = {(c[0], c[1]) for c in t}
            sets += [("trajectory", visited), ("near_trajectory", near(visited, inst.g0))]
        for name, cellset in sets:
            rows.append(
                {
                    "model": r.model,
                    "regime": r.regime,
                    "modality": r.modality,
                    "instance_id": r.instance_id,
                    "set": name,
                    **_set_counts(inst, flagged_by_step, r.windows_truth, cellset),
                    "episodes": len(trajectories),
                }
            )
    return pd.DataFrame(rows)


def path_recall_table(det: pd.DataFrame, nav: pd.DataFrame) -> pd.DataFrame:
    """Detection recall restricted to stale entries on the agent's trajectory,
    next to it, on a shortest path of the true grid and on the remembered path."""
    if det.empty:
        return pd.DataFrame()
    counts = path_recall_counts(det, nav)
    if counts.empty:
        return pd.DataFrame()
    rows = []
    for (model, regime, modality), g in counts.groupby(["model", "regime", "modality"], sort=False):
        row: dict[str, Any] = {"model": model, "regime": regime, "modality": modality}
        row["seeds"] = g["instance_id"].nunique()
        row[f"{paper.AUDITED}_seeds"] = g[(g["set"] == "all") & (g["episodes"] > 0)]["instance_id"].nunique()
        for name in ("all", *PATH_SETS):
            s = g[g["set"] == name][["stale", "flagged", "thaw", "thaw_flagged"]].sum()
            row[f"{name}_n"] = int(s.stale)
            row[f"{name}_recall"] = ratio(s.flagged, s.stale)
            row[f"{name}_thaw_recall"] = ratio(s.thaw_flagged, s.thaw)
        rows.append(row)
    return sort_table(pd.DataFrame(rows))
