"""The detect family's report tables, from its records (one row per
sample: the counts of ``detection/counts.py``, its windows' flags, the
instance): P/R/F1 by model x regime x modality, pooled and mean +- sd over
seeds; F1 by modality averaged over regimes; thaw against freeze recall and
the paper's "is it looking" control. Each pooled score is the task metric's
own ratio (``detection/metrics.py``) over the same counts, so the log and the
report agree; the tables' layout, titles and notes are :data:`TABLES`, which
the family's registry entry hands to the report (``TaskFamily.layout_tables``).

- *Pooled* precision/recall/F1 sum the entry counts over every window, sample
  and epoch of a cell (micro average). A ratio with a zero denominator is NaN
  (shown as "-"), where the task metrics show 0.
- *Mean +- sd over seeds*: each seed's value is first averaged over its epochs,
  then the mean and the sample standard deviation (ddof=1) are taken over
  seeds. A seed's F1 is the task's per-sample ``f1`` (0 when it has no true
  positive); its precision/recall are NaN when undefined and left out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from spatialstale_evals import paper
from spatialstale_evals.detection import metrics as dm
from spatialstale_evals.detection.counts import DetectionCounts
from spatialstale_evals.harness.report_layout import ReportTable, f3, integer, labels, metric_columns, pm, text
from spatialstale_evals.harness.report_tables import mean_sd, nan, order, rows_of, sort_table
from spatialstale_evals.world.regimes import REGIMES

DET_GROUP = ["model", "config", "regime", "modality"]
#: The detection table's pooled scores: each metric's registered name (its
#: ratio is ``detection/metrics.py``'s ``<name>_of``) -> its column's header.
POOLED = {"precision": "P pooled", "recall": "R pooled", "f1": "F1 pooled"}
#: ... after the means over seeds,
POOLED_AFTER = {"parse_failure_rate": "parse fail"}
#: ... and when every sample of the row proposed edits (``output=edit``).
EDIT_POOLED = {"edit_accuracy": "edit acc", "edit_precision": "edit prec"}


def pooled(headers: Mapping[str, str], c: DetectionCounts) -> dict[str, float]:
    """The pooled value of each metric named in ``headers`` over the counts ``c`` (NaN when undefined)."""
    return {name: nan(getattr(dm, f"{name}_of")(c)) for name in headers}


def detection_table(det: pd.DataFrame) -> pd.DataFrame:
    """P/R/F1 by model x regime x modality: pooled and mean +- sd over seeds."""
    if det.empty:
        return pd.DataFrame()
    rows = []
    for key, g in det.groupby(DET_GROUP, sort=False):
        c = DetectionCounts.total(rows_of(g))
        per_sample = [DetectionCounts.total([r]) for r in rows_of(g)]
        per_seed = (
            g.assign(p=[nan(dm.precision_of(s)) for s in per_sample], r=[nan(dm.recall_of(s)) for s in per_sample])
            .groupby("instance_id")[["p", "r", "f1"]]
            .mean()
        )
        p_mean, p_sd = mean_sd(per_seed["p"])
        r_mean, r_sd = mean_sd(per_seed["r"])
        f_mean, f_sd = mean_sd(per_seed["f1"])
        edits = "corrections" in g and bool(g["corrections"].notna().all())  # output=edit: every sample counted them
        rows.append(
            {
                **dict(zip(DET_GROUP, key)),
                "seeds": len(per_seed),
                "samples": len(g),
                **pooled(POOLED, c),
                "precision_mean": p_mean,
                "precision_sd": p_sd,
                "recall_mean": r_mean,
                "recall_sd": r_sd,
                "f1_mean": f_mean,
                "f1_sd": f_sd,
                **pooled(POOLED_AFTER, c),
                **(pooled(EDIT_POOLED, c) if edits else dict.fromkeys(EDIT_POOLED, math.nan)),
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
        c = DetectionCounts.total(rows_of(g))
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


NOTES = {
    "detection": (
        "Pooled: counts summed over all entries, windows, seeds and epochs (micro). Mean +- sd: per seed "
        "(averaged over its epochs), then mean and sample sd over seeds, as the paper reports. A seed's F1 is "
        "the task's per-sample F1 (0 without a true positive); undefined P/R (no flag / no stale entry) are "
        "left out of the mean. '-' marks an undefined ratio. Rows with a non-empty config are not the "
        "paper's protocol (B = 10, binary output)."
    ),
    "direction": (
        "Thaw = F->H (a SAFE claim over a new hole: a miss kills); freeze = H->F. The thaw recall is the flag "
        "rate on stale-thaw entries; beside the flag rate on still-valid SAFE entries (over frozen ice: S and G "
        "are SAFE too but can never go stale, so they are not counted) it is the paper's Figure 4 control: a "
        "gap near 0 means the auditor is not looking at the observation. Notes: the distractor notes of "
        "-T distractors=K, which can never be stale ('-' without notes); every flag on one is a false positive."
    ),
}

#: The family's tables of the report's fixed layout (its ``Detection`` section), in order.
TABLES = {
    "detection": ReportTable(
        title="Detection: precision / recall / F1 by model x regime x modality",
        columns=[
            *labels("model", "config", "regime", "modality"),
            ("seeds", "seeds", integer),
            *metric_columns(POOLED),
            (pm("precision_mean", "precision_sd"), "P mean +- sd", text),
            (pm("recall_mean", "recall_sd"), "R mean +- sd", text),
            (pm("f1_mean", "f1_sd"), "F1 mean +- sd", text),
            *metric_columns(POOLED_AFTER),
            *metric_columns(EDIT_POOLED),
        ],
        build=lambda det, built: detection_table(det),
        missing="No detect logs: the detection sections are empty.",
        note=NOTES["detection"],
        terminal=True,
    ),
    "modality": ReportTable(
        title="Detection F1 by modality, averaged over regimes",
        columns=[
            *labels("model", "config", "modality", "regimes"),
            ("f1_avg", "F1 (avg over regimes)", f3),
            ("paper_f1", "paper F1", text),
            ("image_minus_text", "image - text", f3),
            ("paper_image_minus_text", "paper vision - text", f3),
        ],
        build=lambda det, built: modality_table(built["detection"]),
        missing="No detect logs.",
    ),
    "direction": ReportTable(
        title="Thaw vs freeze recall; flag rate on valid SAFE vs stale-thaw entries, and on notes",
        columns=[
            *labels("model", "config", "regime", "modality"),
            ("thaw_n", "thaw N", integer),
            ("thaw_recall", "thaw recall", f3),
            ("paper_thaw_recall", "paper thaw", f3),
            ("freeze_n", "freeze N", integer),
            ("freeze_recall", "freeze recall", f3),
            ("paper_freeze_recall", "paper freeze", f3),
            ("valid_safe_n", "valid SAFE N", integer),
            ("flag_rate_valid_safe", "flag rate valid SAFE", f3),
            ("flag_rate_gap", "thaw recall - valid SAFE flag rate", f3),
            ("distractor_n", "notes N", integer),
            ("distractor_flag_rate", "flag rate notes", f3),
        ],
        build=lambda det, built: direction_table(det),
        missing="No detect logs.",
        note=NOTES["direction"],
        terminal=True,
    ),
}
