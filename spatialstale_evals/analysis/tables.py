"""The report's tables, computed from the per-sample frames of
:mod:`spatialstale_evals.analysis.logs`.

Conventions (also stated in the report):

- *Pooled* precision/recall/F1 sum the entry counts over every window, sample
  and epoch of a cell (micro average, as the task's own metrics do). A ratio
  with a zero denominator is NaN (shown as "-"), where the task metrics show 0.
- *Mean +- sd over seeds*: each seed's value is first averaged over its epochs,
  then the mean and the sample standard deviation (ddof=1) are taken over
  seeds. A seed's F1 is the task's per-sample ``f1`` (0 when it has no true
  positive); its precision/recall are NaN when undefined and left out.
- Navigation rates are per episode (every epoch of every seed counts once);
  the paired tests use per-seed rates (mean over that seed's epochs).
- Correlations and path-conditioned recall use the paper's protocol only: the
  default configuration (B = 10, binary output, the navigator auditing for
  itself, no history), text modality for the correlation.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from itertools import combinations
from typing import Any

import pandas as pd

from spatialstale_evals.analysis import paper
from spatialstale_evals.analysis.stats import correlate, paired_wilcoxon
from spatialstale_evals.harness.metrics import f1_from_counts
from spatialstale_evals.harness.navigation import STRATEGIES
from spatialstale_evals.harness.observe import MODALITIES
from spatialstale_evals.world.grid import goal_of, neighbours, shortest_path, start_of
from spatialstale_evals.world.instance import Instance
from spatialstale_evals.world.regimes import REGIMES
from spatialstale_evals.world.staleness import stale_labels

OUTCOMES = ("success", "death", "timeout")
NAV_METRICS = ("success", "death")
PATH_SETS = {
    "trajectory": "cells the agent stepped on (omcd episodes of the same seed)",
    "near_trajectory": "trajectory cells and their 4-neighbours (where a missed thaw can kill)",
    "true_path": "a shortest S->G path on the true grid (L1/L2: after the pre-game changes; L3: final grid)",
    "remembered_path": "a shortest S->G path on the original grid g0 (the route the memory suggests)",
}


def ratio(num: float, den: float) -> float:
    return float(num) / float(den) if den else math.nan


def _order(values: Iterable[str], known: Iterable[str]) -> list[str]:
    known = list(known)
    values = list(dict.fromkeys(values))
    return [v for v in known if v in values] + sorted(v for v in values if v not in known)


def _sort(df: pd.DataFrame, columns: dict[str, Iterable[str]]) -> pd.DataFrame:
    """Sort by model, config and then the given columns in their natural order."""
    if df.empty:
        return df
    keys = {}
    for col, known in columns.items():
        if col in df:
            order = _order(df[col], known)
            keys[col] = lambda s, order=order: s.map({v: i for i, v in enumerate(order)})
    by = [c for c in ("model", "config") if c in df] + list(keys)
    return df.sort_values(by, key=lambda s: keys[s.name](s) if s.name in keys else s).reset_index(drop=True)


def _mean_sd(values: pd.Series) -> tuple[float, float]:
    v = values.dropna()
    if v.empty:
        return math.nan, math.nan
    return float(v.mean()), float(v.std(ddof=1)) if len(v) > 1 else math.nan


# -- detection -------------------------------------------------------------------


DET_GROUP = ["model", "config", "regime", "modality"]


def detection_table(det: pd.DataFrame) -> pd.DataFrame:
    """P/R/F1 by model x regime x modality: pooled and mean +- sd over seeds."""
    if det.empty:
        return pd.DataFrame()
    rows = []
    for key, g in det.groupby(DET_GROUP, sort=False):
        s = g[["tp", "fp", "fn", "parse_failures", "entries"]].sum()
        per_sample = g.assign(
            p=[ratio(tp, tp + fp) for tp, fp in zip(g.tp, g.fp)],
            r=[ratio(tp, tp + fn) for tp, fn in zip(g.tp, g.fn)],
        )
        per_seed = per_sample.groupby("instance_id")[["p", "r", "f1"]].mean()
        p_mean, p_sd = _mean_sd(per_seed["p"])
        r_mean, r_sd = _mean_sd(per_seed["r"])
        f_mean, f_sd = _mean_sd(per_seed["f1"])
        rows.append(
            {
                **dict(zip(DET_GROUP, key)),
                "seeds": len(per_seed),
                "samples": len(g),
                "precision": ratio(s.tp, s.tp + s.fp),
                "recall": ratio(s.tp, s.tp + s.fn),
                "f1": f1_from_counts(s.tp, s.fp, s.fn),
                "precision_mean": p_mean,
                "precision_sd": p_sd,
                "recall_mean": r_mean,
                "recall_sd": r_sd,
                "f1_mean": f_mean,
                "f1_sd": f_sd,
                "parse_failure_rate": ratio(s.parse_failures, s.entries),
            }
        )
    return _sort(pd.DataFrame(rows), {"regime": REGIMES, "modality": MODALITIES})


def modality_table(detection: pd.DataFrame) -> pd.DataFrame:
    """F1 (mean over seeds) averaged over the regimes present, by modality, with
    the paper's regime-averaged values and the vision - text difference."""
    if detection.empty:
        return pd.DataFrame()
    rows = []
    for (model, config), g in detection.groupby(["model", "config"], sort=False):
        name = paper.paper_model(model)
        by_mod = {m: gm for m, gm in g.groupby("modality")}
        f1 = {m: float(gm["f1_mean"].mean()) for m, gm in by_mod.items()}
        for m, gm in by_mod.items():
            rows.append(
                {
                    "model": model,
                    "config": config,
                    "modality": m,
                    "regimes": ", ".join(_order(gm["regime"], REGIMES)),
                    "f1_avg": f1[m],
                    "paper_f1": paper.DETECTION_F1.get((name, m), "") if name else "",
                    "image_minus_text": (f1["image"] - f1["text"]) if m == "image" and "text" in f1 else math.nan,
                    "paper_image_minus_text": paper.VISION_MINUS_TEXT.get(name, math.nan)
                    if name and m == "image"
                    else math.nan,
                }
            )
    return _sort(pd.DataFrame(rows), {"modality": MODALITIES})


def direction_table(det: pd.DataFrame) -> pd.DataFrame:
    """Thaw vs freeze recall, and the flag rate on valid SAFE vs stale-thaw
    entries (the "is it looking at the observation" control)."""
    if det.empty:
        return pd.DataFrame()
    rows = []
    for key, g in det.groupby(DET_GROUP, sort=False):
        s = g[
            ["stale_thaw", "thaw_flagged", "stale_freeze", "freeze_flagged", "valid_safe", "valid_safe_flagged"]
        ].sum()
        row = dict(zip(DET_GROUP, key))
        name = paper.paper_model(row["model"])
        pt = paper.DIRECTION_RECALL.get((name, row["regime"], row["modality"], "thaw")) if name else None
        pf = paper.DIRECTION_RECALL.get((name, row["regime"], row["modality"], "freeze")) if name else None
        thaw = ratio(s.thaw_flagged, s.stale_thaw)
        safe = ratio(s.valid_safe_flagged, s.valid_safe)
        rows.append(
            {
                **row,
                "thaw_n": int(s.stale_thaw),
                "thaw_recall": thaw,
                "paper_thaw_recall": pt[0] if pt else math.nan,
                "paper_thaw_n": pt[1] if pt else math.nan,
                "freeze_n": int(s.stale_freeze),
                "freeze_recall": ratio(s.freeze_flagged, s.stale_freeze),
                "paper_freeze_recall": pf[0] if pf else math.nan,
                "paper_freeze_n": pf[1] if pf else math.nan,
                "valid_safe_n": int(s.valid_safe),
                "flag_rate_valid_safe": safe,
                "flag_rate_stale_thaw": thaw,
                "flag_rate_gap": thaw - safe,
            }
        )
    return _sort(pd.DataFrame(rows), {"regime": REGIMES, "modality": MODALITIES})


# -- navigation ------------------------------------------------------------------


NAV_GROUP = ["model", "config", "regime", "strategy", "modality"]


def navigation_table(nav: pd.DataFrame) -> pd.DataFrame:
    """Success/death/timeout (% of episodes) by model x strategy x regime, with
    the paper's values beside them where the model matches."""
    if nav.empty:
        return pd.DataFrame()
    rows = []
    for key, g in nav.groupby(NAV_GROUP, sort=False):
        row = dict(zip(NAV_GROUP, key))
        name = paper.paper_model(row["model"])
        ref = paper.NAVIGATION.get((name, row["strategy"], row["regime"], row["modality"])) if name else None
        rows.append(
            {
                **row,
                "seeds": g["instance_id"].nunique(),
                "episodes": len(g),
                "success": 100 * g["success"].mean(),
                "paper_success": ref[0] if ref else math.nan,
                "death": 100 * g["death"].mean(),
                "paper_death": ref[1] if ref else math.nan,
                "timeout": 100 * g["timeout"].mean(),
                "death_on_stale": 100 * g["death_on_stale"].mean(),
                "mean_steps": g["steps"].mean(),
                "fallback_rate": ratio(g["fallbacks"].sum(), g["steps"].sum()),
                "tokens_per_episode": g["tokens"].mean(),
            }
        )
    return _sort(pd.DataFrame(rows), {"regime": REGIMES, "strategy": STRATEGIES, "modality": MODALITIES})


def gain_table(navigation: pd.DataFrame) -> pd.DataFrame:
    """OMCD success minus no_filter success (percentage points) per regime."""
    if navigation.empty:
        return pd.DataFrame()
    rows = []
    for (model, config, regime, modality), g in navigation.groupby(
        ["model", "config", "regime", "modality"], sort=False
    ):
        by = g.set_index("strategy")["success"]
        if "omcd" not in by or "no_filter" not in by:
            continue
        name = paper.paper_model(model)
        rows.append(
            {
                "model": model,
                "config": config,
                "regime": regime,
                "modality": modality,
                "omcd_success": by["omcd"],
                "no_filter_success": by["no_filter"],
                "gain_pp": by["omcd"] - by["no_filter"],
                "paper_gain_pp": paper.OMCD_GAIN.get((name, regime), math.nan)
                if name and modality == "text"
                else math.nan,
            }
        )
    return _sort(pd.DataFrame(rows), {"regime": REGIMES, "modality": MODALITIES})


def steps_table(nav: pd.DataFrame) -> pd.DataFrame:
    """Mean trajectory length by outcome and strategy (the paper's Figure 6
    decomposition)."""
    if nav.empty:
        return pd.DataFrame()
    rows = []
    for key, g in nav.groupby([*NAV_GROUP, "outcome"], sort=False):
        row = dict(zip([*NAV_GROUP, "outcome"], key))
        name = paper.paper_model(row["model"])
        rows.append(
            {
                **row,
                "episodes": len(g),
                "mean_steps": g["steps"].mean(),
                "sd_steps": g["steps"].std(ddof=1) if len(g) > 1 else math.nan,
                "median_steps": g["steps"].median(),
                "paper_mean_steps": paper.STEPS.get((name, row["strategy"], row["outcome"]), math.nan)
                if name
                else math.nan,
            }
        )
    return _sort(
        pd.DataFrame(rows),
        {"regime": REGIMES, "strategy": STRATEGIES, "modality": MODALITIES, "outcome": OUTCOMES},
    )


def paired_vectors(nav: pd.DataFrame, cell: dict[str, Any], a: str, b: str, metric: str) -> tuple[list, list, list]:
    """Shared seeds and the per-seed ``metric`` rates of strategies ``a`` and ``b``
    within one (model, config, regime, modality) cell."""
    g = nav
    for col, value in cell.items():
        g = g[g[col] == value]
    rates = g.groupby(["strategy", "instance_id"])[metric].mean()
    sa = rates.loc[a] if a in rates.index.get_level_values(0) else pd.Series(dtype=float)
    sb = rates.loc[b] if b in rates.index.get_level_values(0) else pd.Series(dtype=float)
    seeds = sorted(set(sa.index) & set(sb.index))
    return seeds, [float(sa[s]) for s in seeds], [float(sb[s]) for s in seeds]


def wilcoxon_table(nav: pd.DataFrame, alpha: float = paper.ALPHA, metrics: Iterable[str] = NAV_METRICS) -> pd.DataFrame:
    """Paired Wilcoxon signed-rank tests between every two strategies of a
    (model, config, regime, modality) cell on their shared seeds."""
    if nav.empty:
        return pd.DataFrame()
    rows = []
    for key, g in nav.groupby(["model", "config", "regime", "modality"], sort=False):
        cell = dict(zip(["model", "config", "regime", "modality"], key))
        strategies = _order(g["strategy"], STRATEGIES)
        for a, b in combinations(strategies, 2):
            for metric in metrics:
                seeds, x, y = paired_vectors(g, {}, a, b, metric)
                t = paired_wilcoxon(x, y, alpha)
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
                        "pvalue": t.pvalue,
                        "rank_biserial": t.rank_biserial,
                        "significant": t.significant,
                        "note": t.note,
                    }
                )
    return _sort(pd.DataFrame(rows), {"regime": REGIMES, "modality": MODALITIES, "metric": NAV_METRICS})


# -- detection x navigation ---------------------------------------------------------


def _default(df: pd.DataFrame) -> pd.DataFrame:
    return df[df["config"] == ""] if not df.empty else df


def correlation_table(det: pd.DataFrame, nav: pd.DataFrame, modality: str = "text") -> pd.DataFrame:
    """Pearson and Spearman correlation between per-seed detection F1 (detect
    task) and per-seed OMCD success rate (navigate task), same model and regime,
    paper protocol, per regime."""
    if det.empty or nav.empty:
        return pd.DataFrame()
    d = _default(det)
    d = d[d["modality"] == modality]
    n = _default(nav)
    n = n[(n["strategy"] == "omcd") & (n["modality"] == modality)]
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
                "omcd_success": 100 * float(success[seeds].mean()) if seeds else math.nan,
                "pearson_r": c.pearson_r,
                "pearson_p": c.pearson_p,
                "spearman_rho": c.spearman_rho,
                "spearman_p": c.spearman_p,
                "note": c.note,
            }
        )
    return _sort(pd.DataFrame(rows), {"regime": REGIMES})


def _cells_of(entries: Iterable[Any]) -> dict[str, tuple[int, int]]:
    return {e.id: e.cell for e in entries}


def instance_paths(inst: Instance) -> dict[str, set[tuple[int, int]]]:
    """The fixed (trajectory-independent) cell sets of an instance."""
    true_grid = inst.final_grid() if inst.regime == "L3" else inst.grid
    out = {}
    for name, grid in (("true_path", true_grid), ("remembered_path", inst.g0)):
        path = shortest_path(grid, start_of(grid), goal_of(grid))
        out[name] = set(path or [])
    return out


def window_truth(inst: Instance) -> list[tuple[int, dict[str, str]]]:
    """Per detection window: (step, {entry id: thaw/freeze}) of the stale entries."""
    return [
        (step, {k: v for k, v in stale_labels(inst.memory, inst.g0, grid).items() if v})
        for step, grid in inst.detection_windows()
    ]


def near(cells: set[tuple[int, int]], grid: tuple[str, ...]) -> set[tuple[int, int]]:
    return cells | {n for c in cells for n in neighbours(grid, c)}


def path_recall_counts(det: pd.DataFrame, nav: pd.DataFrame) -> pd.DataFrame:
    """Per detect sample-epoch and cell set: stale entries in the set and how
    many of them were flagged (trajectory sets: pooled over the seed's omcd
    episodes, each episode counted once)."""
    rows = []
    traj_by: dict[tuple[str, str, str, str], list[list[list[int]]]] = {}
    if not nav.empty:
        n = _default(nav)
        n = n[n["strategy"] == "omcd"]
        for r in n.itertuples():
            traj_by.setdefault((r.model, r.regime, r.modality, r.instance_id), []).append(r.trajectory)
    cache: dict[tuple[str, str], tuple[Instance, list, dict]] = {}
    for r in _default(det).itertuples():
        ck = (r.regime, r.instance_id)
        if ck not in cache:
            inst = Instance.from_json(r.instance)
            cache[ck] = (inst, window_truth(inst), instance_paths(inst))
        inst, truth, fixed = cache[ck]
        cells = _cells_of(inst.memory)
        flagged_by_step = {w["step"]: set(w["flagged"]) for w in r.windows_flagged}
        trajectories = traj_by.get((r.model, r.regime, r.modality, r.instance_id), [])
        sets: list[tuple[str, set]] = [("all", set(cells.values())), *((k, v) for k, v in fixed.items())]
        for t in trajectories:
            visited = {tuple(c) for c in t}
            sets += [("trajectory", visited), ("near_trajectory", near(visited, inst.g0))]
        for name, cellset in sets:
            stale_n = flagged_n = thaw_n = thaw_flagged = 0
            for step, stale in truth:
                flagged = flagged_by_step.get(step, set())
                for eid, kind in stale.items():
                    if cells[eid] in cellset:
                        stale_n += 1
                        flagged_n += eid in flagged
                        thaw_n += kind == "thaw"
                        thaw_flagged += kind == "thaw" and eid in flagged
            rows.append(
                {
                    "model": r.model,
                    "regime": r.regime,
                    "modality": r.modality,
                    "instance_id": r.instance_id,
                    "set": name,
                    "stale": stale_n,
                    "flagged": flagged_n,
                    "thaw": thaw_n,
                    "thaw_flagged": thaw_flagged,
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
        episode_seeds = g[(g["set"] == "all") & (g["episodes"] > 0)]["instance_id"].nunique()
        row["seeds"] = g["instance_id"].nunique()
        row["omcd_seeds"] = episode_seeds
        for name in ("all", *PATH_SETS):
            s = g[g["set"] == name][["stale", "flagged", "thaw", "thaw_flagged"]].sum()
            row[f"{name}_n"] = int(s.stale)
            row[f"{name}_recall"] = ratio(s.flagged, s.stale)
            row[f"{name}_thaw_recall"] = ratio(s.thaw_flagged, s.thaw)
        rows.append(row)
    return _sort(pd.DataFrame(rows), {"regime": REGIMES, "modality": MODALITIES})
