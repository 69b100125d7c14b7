"""The report's descriptive tables, computed from the per-sample frames of
:mod:`spatialstale_evals.analysis.logs` (the tests, correlations and
path-conditioned recall are in :mod:`spatialstale_evals.analysis.inference`).

Conventions (also stated in the report):

- *Pooled* precision/recall/F1 sum the entry counts over every window, sample
  and epoch of a cell (micro average) with the very functions the task metrics
  use (``detection/metrics.py``, ``navigation/metrics.py``, over their count records). A
  ratio with a zero denominator is NaN (shown as "-"), where the task metrics
  show 0.
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

import functools
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from spatialstale_evals import paper
from spatialstale_evals.detection import metrics as dm
from spatialstale_evals.detection.counts import DetectionCounts
from spatialstale_evals.harness import counts
from spatialstale_evals.harness.observe import OBSERVATIONS
from spatialstale_evals.harness.params import choices
from spatialstale_evals.navigation import episode
from spatialstale_evals.navigation import metrics as nm
from spatialstale_evals.navigation.counts import NavigationCounts
from spatialstale_evals.navigation.strategies import STRATEGIES
from spatialstale_evals.world.regimes import REGIMES

OUTCOMES = episode.OUTCOMES
#: The natural order of each table dimension: the registries' own.
ORDER: dict[str, Iterable[str]] = {
    "regime": REGIMES,
    "strategy": STRATEGIES,
    "modality": OBSERVATIONS,
    "outcome": OUTCOMES,
}


def nan(value: float | None) -> float:
    """A ratio of a family's metrics as the report shows it: None -> NaN."""
    return math.nan if value is None else float(value)


def ratio(num: float, den: float) -> float:
    return nan(counts.ratio(num, den))


def order(values: Iterable[str], known: Iterable[str]) -> list[str]:
    """The distinct ``values`` in the order of ``known``, unknown ones after, sorted."""
    known = list(known)
    values = list(dict.fromkeys(values))
    return [v for v in known if v in values] + sorted(v for v in values if v not in known)


#: Columns that hold a configuration label (``key=value, ...``), sorted by ``label_key``.
LABEL_COLUMNS = ("config", "base_config", "stale_config", "probe_config", "levels")
#: Where a label's parts begin: ``, `` before ``name=`` (a JSON value's own commas are not followed by one).
_PART = re.compile(r", (?=[A-Za-z_][\w.-]*=)")


@functools.cache
def registry_order(name: str) -> tuple[str, ...]:
    """The values a task parameter ``name`` admits, in the order a task declares
    them (its ``Literal``), as text; () when no task declares it so."""
    from spatialstale_evals import task_functions  # the task modules import this package's siblings

    for task in task_functions().values():
        try:
            return tuple(str(v) for v in choices(task, name))
        except (KeyError, TypeError):
            continue
    return ()


def value_key(name: str, text: str) -> tuple[int, float, str]:
    """A configuration value ordered by its type: None first, then numbers
    (booleans as 0 / 1) numerically, then the values a registry declares in
    its order, then any other text alphabetically."""
    if text in ("None", "null"):
        return (0, 0.0, "")
    if text in ("True", "False", "true", "false"):
        return (1, float(text.lower() == "true"), "")
    try:
        number = float(text)
    except ValueError:
        number = math.nan
    if not math.isnan(number):
        return (1, number, "")
    known = registry_order(name)
    return (2, float(known.index(text)), "") if text in known else (3, 0.0, text)


def label_key(label: Any) -> tuple[tuple[str, tuple[int, float, str]], ...]:
    """A configuration label (``distractors=16, batch_size=5``; '' for the
    defaults, first) as a key that orders each ``name=value`` part by name,
    then by ``value_key``: ``distractors=2`` before ``=8`` before ``=16``."""
    text = "" if label is None or (isinstance(label, float) and math.isnan(label)) else str(label)
    parts = [part.partition("=") for part in _PART.split(text)] if text else []
    return tuple((name, value_key(name, value) if sep else (3, 0.0, "")) for name, sep, value in parts)


def _ranks(values: Iterable[Any], key: Any) -> dict[Any, int]:
    return {v: i for i, v in enumerate(sorted(dict.fromkeys(values), key=key))}


def sort_table(df: pd.DataFrame, extra: Mapping[str, Iterable[str]] | None = None) -> pd.DataFrame:
    """Sort by model, config and then every dimension present, in its natural
    order (a configuration label by ``label_key``: numbers numerically, not as text)."""
    if df.empty:
        return df
    keys = {}
    for col in LABEL_COLUMNS:
        if col in df and col not in (extra or {}):
            ranked_labels = _ranks(df[col], label_key)
            keys[col] = lambda s, ranked=ranked_labels: s.map(ranked)
    for col, known in {**ORDER, **(extra or {})}.items():
        if col in df:
            ranked = order(df[col], known)
            keys[col] = lambda s, ranked=ranked: s.map({v: i for i, v in enumerate(ranked)})
    by = [c for c in ("model", "config") if c in df] + [c for c in keys if c != "config"]
    return df.sort_values(by, key=lambda s: keys[s.name](s) if s.name in keys else s).reset_index(drop=True)


def _mean_sd(values: pd.Series) -> tuple[float, float]:
    v = values.dropna()
    if v.empty:
        return math.nan, math.nan
    return float(v.mean()), float(v.std(ddof=1)) if len(v) > 1 else math.nan


def _records(g: pd.DataFrame) -> list[dict[str, Any]]:
    return g.to_dict("records")  # type: ignore[return-value]


# -- detection -------------------------------------------------------------------


DET_GROUP = ["model", "config", "regime", "modality"]


def detection_table(det: pd.DataFrame) -> pd.DataFrame:
    """P/R/F1 by model x regime x modality: pooled and mean +- sd over seeds."""
    if det.empty:
        return pd.DataFrame()
    rows = []
    for key, g in det.groupby(DET_GROUP, sort=False):
        c = DetectionCounts.total(_records(g))
        per_sample = [DetectionCounts.total([r]) for r in _records(g)]
        per_seed = (
            g.assign(
                p=[nan(dm.precision_of(s)) for s in per_sample], r=[nan(dm.recall_of(s)) for s in per_sample]
            )
            .groupby("instance_id")[["p", "r", "f1"]]
            .mean()
        )
        p_mean, p_sd = _mean_sd(per_seed["p"])
        r_mean, r_sd = _mean_sd(per_seed["r"])
        f_mean, f_sd = _mean_sd(per_seed["f1"])
        edits = "corrections" in g and bool(g["corrections"].notna().all())  # output=edit: every sample counted them
        rows.append(
            {
                **dict(zip(DET_GROUP, key)),
                "seeds": len(per_seed),
                "samples": len(g),
                "precision": nan(dm.precision_of(c)),
                "recall": nan(dm.recall_of(c)),
                "f1": dm.f1_of(c),
                "precision_mean": p_mean,
                "precision_sd": p_sd,
                "recall_mean": r_mean,
                "recall_sd": r_sd,
                "f1_mean": f_mean,
                "f1_sd": f_sd,
                "parse_failure_rate": nan(dm.parse_failure_rate_of(c)),
                "edit_accuracy": nan(dm.edit_accuracy_of(c)) if edits else float("nan"),
                "edit_precision": nan(dm.edit_precision_of(c)) if edits else float("nan"),
            }
        )
    return sort_table(pd.DataFrame(rows))


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
                    "regimes": ", ".join(order(gm["regime"], REGIMES)),
                    "f1_avg": f1[m],
                    "paper_f1": paper.DETECTION_F1.get((name, m), "") if name else "",
                    "image_minus_text": (f1["image"] - f1["text"]) if m == "image" and "text" in f1 else math.nan,
                    "paper_image_minus_text": paper.VISION_MINUS_TEXT.get(name, math.nan)
                    if name and m == "image"
                    else math.nan,
                }
            )
    return sort_table(pd.DataFrame(rows))


def direction_table(det: pd.DataFrame) -> pd.DataFrame:
    """Thaw vs freeze recall, and the paper's "is it looking at the
    observation" control: the flag rate on still-valid SAFE entries (over
    frozen ice) beside the thaw recall (the flag rate on stale-thaw entries);
    and the flag rate on distractor notes, which can never be stale."""
    if det.empty:
        return pd.DataFrame()
    rows = []
    for key, g in det.groupby(DET_GROUP, sort=False):
        c = DetectionCounts.total(_records(g))
        row = dict(zip(DET_GROUP, key))
        name = paper.paper_model(row["model"])
        pt = paper.DIRECTION_RECALL.get((name, row["regime"], row["modality"], "thaw")) if name else None
        pf = paper.DIRECTION_RECALL.get((name, row["regime"], row["modality"], "freeze")) if name else None
        thaw, safe = nan(dm.thaw_recall_of(c)), nan(dm.flag_rate_valid_safe_of(c))
        rows.append(
            {
                **row,
                "thaw_n": int(c.stale_thaw),
                "thaw_recall": thaw,
                "paper_thaw_recall": pt[0] if pt else math.nan,
                "paper_thaw_n": pt[1] if pt else math.nan,
                "freeze_n": int(c.stale_freeze),
                "freeze_recall": nan(dm.freeze_recall_of(c)),
                "paper_freeze_recall": pf[0] if pf else math.nan,
                "paper_freeze_n": pf[1] if pf else math.nan,
                "valid_safe_n": int(c.valid_safe),
                "flag_rate_valid_safe": safe,
                "flag_rate_gap": thaw - safe,
                "distractor_n": int(c.distractors),
                "distractor_flag_rate": nan(dm.distractor_flag_rate_of(c)),
            }
        )
    return sort_table(pd.DataFrame(rows))


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
        c = NavigationCounts.total(_records(g))
        name = paper.paper_model(row["model"])
        ref = paper.NAVIGATION.get((name, row["strategy"], row["regime"], row["modality"])) if name else None
        rows.append(
            {
                **row,
                "seeds": g["instance_id"].nunique(),
                "episodes": len(g),
                "success": 100 * nan(nm.rate_of("success")(c)),
                "paper_success": ref[0] if ref else math.nan,
                "death": 100 * nan(nm.rate_of("death")(c)),
                "paper_death": ref[1] if ref else math.nan,
                "timeout": 100 * nan(nm.rate_of("timeout")(c)),
                "death_on_stale": 100 * nan(nm.rate_of("death_on_stale")(c)),
                "mean_steps": ratio(c.steps, c.n),
                "fallback_rate": nan(nm.fallback_rate_of(c)),
                "audit_calls": g["audit_calls"].mean(),
                "tokens_per_episode": g["tokens"].mean(),
            }
        )
    return sort_table(pd.DataFrame(rows))


def gain_table(navigation: pd.DataFrame) -> pd.DataFrame:
    """The paper's OMCD gain: success of the audited strategy minus success of
    raw memory (percentage points) per regime."""
    if navigation.empty:
        return pd.DataFrame()
    audited, baseline = paper.AUDITED, paper.BASELINE
    rows = []
    for (model, config, regime, modality), g in navigation.groupby(
        ["model", "config", "regime", "modality"], sort=False
    ):
        by = g.set_index("strategy")["success"]
        if audited not in by or baseline not in by:
            continue
        name = paper.paper_model(model)
        rows.append(
            {
                "model": model,
                "config": config,
                "regime": regime,
                "modality": modality,
                f"{audited}_success": by[audited],
                f"{baseline}_success": by[baseline],
                "gain_pp": by[audited] - by[baseline],
                "paper_gain_pp": paper.OMCD_GAIN.get((name, regime), math.nan)
                if name and modality == "text"
                else math.nan,
            }
        )
    return sort_table(pd.DataFrame(rows))


def steps_table(nav: pd.DataFrame) -> pd.DataFrame:
    """Mean trajectory length by outcome and strategy (the paper's Figure 6
    decomposition; the mean is the task metric's ``steps_of``)."""
    if nav.empty:
        return pd.DataFrame()
    rows = []
    for key, g in nav.groupby(NAV_GROUP, sort=False):
        c = NavigationCounts.total(_records(g))
        for outcome, go in g.groupby("outcome", sort=False):
            row = {**dict(zip(NAV_GROUP, key)), "outcome": outcome}
            name = paper.paper_model(row["model"])
            mean = nm.steps_of(outcome)(c) if outcome in OUTCOMES else None
            rows.append(
                {
                    **row,
                    "episodes": len(go),
                    "mean_steps": nan(mean) if outcome in OUTCOMES else go["steps"].mean(),
                    "sd_steps": go["steps"].std(ddof=1) if len(go) > 1 else math.nan,
                    "median_steps": go["steps"].median(),
                    "paper_mean_steps": paper.STEPS.get((name, row["strategy"], outcome), math.nan)
                    if name
                    else math.nan,
                }
            )
    return sort_table(pd.DataFrame(rows))
