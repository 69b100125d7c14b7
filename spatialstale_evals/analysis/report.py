"""The report: from a folder of logs to a Markdown file, PNG plots and the main
tables on the terminal.

    from spatialstale_evals.analysis.report import build_report
    report = build_report("logs/matrix", "report/")   # writes report/REPORT.md + PNGs
    report.tables["navigation"]                       # the numbers as DataFrames

or ``spatialstale report LOG_DIR --out DIR``.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from spatialstale_evals.analysis import logs as logs_mod
from spatialstale_evals.analysis import paper, plots, tables

REPORT_FILE = "REPORT.md"

Fmt = Callable[[Any], str]


def _nan(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def f3(v: Any) -> str:
    return "-" if _nan(v) else f"{v:.3f}"


def f1d(v: Any) -> str:
    return "-" if _nan(v) else f"{v:.1f}"


def f2d(v: Any) -> str:
    return "-" if _nan(v) else f"{v:.2f}"


def pval(v: Any) -> str:
    if _nan(v):
        return "-"
    return f"{v:.2g}" if v < 0.01 else f"{v:.3f}"


def text(v: Any) -> str:
    return "" if _nan(v) else str(v)


def yes(v: Any) -> str:
    return "**yes**" if v is True or v == 1 else ""


def integer(v: Any) -> str:
    return "-" if _nan(v) else str(int(v))


def pm(mean_col: str, sd_col: str) -> Callable[[pd.Series], str]:
    def fmt(row: pd.Series) -> str:
        m, s = row[mean_col], row[sd_col]
        return "-" if _nan(m) else (f"{m:.3f} +- {s:.3f}" if not _nan(s) else f"{m:.3f}")

    return fmt


#: (column or row-function, header, formatter) per table.
Spec = Sequence[tuple[str | Callable[[pd.Series], str], str, Fmt]]

SPECS: dict[str, Spec] = {
    "detection": [
        ("model", "model", text),
        ("config", "config", text),
        ("regime", "regime", text),
        ("modality", "modality", text),
        ("seeds", "seeds", integer),
        ("precision", "P pooled", f3),
        ("recall", "R pooled", f3),
        ("f1", "F1 pooled", f3),
        (pm("precision_mean", "precision_sd"), "P mean +- sd", text),
        (pm("recall_mean", "recall_sd"), "R mean +- sd", text),
        (pm("f1_mean", "f1_sd"), "F1 mean +- sd", text),
        ("parse_failure_rate", "parse fail", f3),
    ],
    "modality": [
        ("model", "model", text),
        ("config", "config", text),
        ("modality", "modality", text),
        ("regimes", "regimes", text),
        ("f1_avg", "F1 (avg over regimes)", f3),
        ("paper_f1", "paper F1", text),
        ("image_minus_text", "image - text", f3),
        ("paper_image_minus_text", "paper vision - text", f3),
    ],
    "direction": [
        ("model", "model", text),
        ("config", "config", text),
        ("regime", "regime", text),
        ("modality", "modality", text),
        ("thaw_n", "thaw N", integer),
        ("thaw_recall", "thaw recall", f3),
        ("paper_thaw_recall", "paper thaw", f3),
        ("freeze_n", "freeze N", integer),
        ("freeze_recall", "freeze recall", f3),
        ("paper_freeze_recall", "paper freeze", f3),
        ("valid_safe_n", "valid SAFE N", integer),
        ("flag_rate_valid_safe", "flag rate valid SAFE", f3),
        ("flag_rate_stale_thaw", "flag rate stale thaw", f3),
        ("flag_rate_gap", "gap", f3),
    ],
    "navigation": [
        ("model", "model", text),
        ("config", "config", text),
        ("regime", "regime", text),
        ("strategy", "strategy", text),
        ("modality", "modality", text),
        ("seeds", "seeds", integer),
        ("episodes", "episodes", integer),
        ("success", "success %", f1d),
        ("paper_success", "paper success %", f1d),
        ("death", "death %", f1d),
        ("paper_death", "paper death %", f1d),
        ("timeout", "timeout %", f1d),
        ("death_on_stale", "death on stale %", f1d),
        ("mean_steps", "mean steps", f1d),
        ("fallback_rate", "fallback rate", f3),
        ("tokens_per_episode", "tokens / episode", f1d),
    ],
    "gain": [
        ("model", "model", text),
        ("config", "config", text),
        ("regime", "regime", text),
        ("modality", "modality", text),
        ("omcd_success", "omcd success %", f1d),
        ("no_filter_success", "no_filter success %", f1d),
        ("gain_pp", "gain (pp)", f1d),
        ("paper_gain_pp", "paper gain (pp)", f1d),
    ],
    "steps": [
        ("model", "model", text),
        ("config", "config", text),
        ("regime", "regime", text),
        ("strategy", "strategy", text),
        ("modality", "modality", text),
        ("outcome", "outcome", text),
        ("episodes", "episodes", integer),
        ("mean_steps", "mean steps", f1d),
        ("sd_steps", "sd", f1d),
        ("median_steps", "median", f1d),
        ("paper_mean_steps", "paper mean steps", f1d),
    ],
    "wilcoxon": [
        ("model", "model", text),
        ("config", "config", text),
        ("regime", "regime", text),
        ("modality", "modality", text),
        ("metric", "metric", text),
        ("a", "A", text),
        ("b", "B", text),
        ("n_pairs", "pairs", integer),
        ("n_nonzero", "non-zero", integer),
        ("rate_a", "A %", f1d),
        ("rate_b", "B %", f1d),
        ("diff_pp", "A - B (pp)", f1d),
        ("statistic", "W", f1d),
        ("pvalue", "p", pval),
        ("rank_biserial", "r_rb", f3),
        ("significant", "p < alpha", yes),
        ("note", "note", text),
    ],
    "correlation": [
        ("model", "model", text),
        ("regime", "regime", text),
        ("seeds", "seeds", integer),
        ("f1_mean", "mean F1", f3),
        ("omcd_success", "omcd success %", f1d),
        ("pearson_r", "Pearson r", f3),
        ("pearson_p", "p", pval),
        ("spearman_rho", "Spearman rho", f3),
        ("spearman_p", "p", pval),
        ("note", "note", text),
    ],
    "path_recall": [
        ("model", "model", text),
        ("regime", "regime", text),
        ("modality", "modality", text),
        ("seeds", "seeds", integer),
        ("omcd_seeds", "seeds with omcd", integer),
        ("all_n", "all N", integer),
        ("all_recall", "all recall", f3),
        ("trajectory_n", "trajectory N", integer),
        ("trajectory_recall", "trajectory recall", f3),
        ("near_trajectory_n", "near traj. N", integer),
        ("near_trajectory_recall", "near traj. recall", f3),
        ("near_trajectory_thaw_recall", "near traj. thaw recall", f3),
        ("true_path_n", "true path N", integer),
        ("true_path_recall", "true path recall", f3),
        ("remembered_path_n", "remembered path N", integer),
        ("remembered_path_recall", "remembered path recall", f3),
        ("remembered_path_thaw_recall", "remembered path thaw recall", f3),
    ],
    "inputs": [
        ("file", "log", text),
        ("family", "task", text),
        ("model", "model", text),
        ("cell", "regime / strategy / modality", text),
        ("config", "config", text),
        ("status", "status", text),
        ("epochs", "epochs", integer),
        ("used_samples", "samples counted", integer),
    ],
}

TITLES = {
    "detection": "Detection: precision / recall / F1 by model x regime x modality",
    "modality": "Detection F1 by modality, averaged over regimes (paper SPEC section 7)",
    "direction": "Thaw vs freeze recall; flag rate on valid SAFE vs stale-thaw entries",
    "navigation": "Navigation: success / death / timeout by model x strategy x regime",
    "gain": "OMCD success gain over no_filter",
    "steps": "Mean trajectory length by outcome and strategy",
    "wilcoxon": "Paired Wilcoxon signed-rank tests between strategies (per-seed rates over epochs)",
    "correlation": "Per-seed detection F1 vs per-seed OMCD success (Pearson, Spearman)",
    "path_recall": "Path-conditioned detection recall",
    "inputs": "Logs read",
}

#: The tables printed to the terminal (all of them go into the Markdown).
MAIN_TABLES = ("detection", "direction", "navigation", "steps", "wilcoxon", "correlation", "path_recall")


def markdown_table(df: pd.DataFrame, spec: Spec) -> str:
    if df is None or df.empty:
        return "_(no data)_"
    cols = [c for c in spec if not isinstance(c[0], str) or c[0] in df.columns]
    # Hide columns that are empty everywhere (e.g. "config" when all runs use the
    # paper's protocol, paper columns when no model matches).
    rendered = []
    for col, header, fmt in cols:
        values = [fmt(col(row)) if callable(col) else fmt(row[col]) for _, row in df.iterrows()]
        if header in ("config", "note") or header.startswith("paper"):
            if all(v in ("", "-") for v in values):
                continue
        rendered.append((header, values))
    lines = ["| " + " | ".join(h for h, _ in rendered) + " |", "|" + "---|" * len(rendered)]
    for i in range(len(df)):
        lines.append("| " + " | ".join(v[i].replace("|", "/") for _, v in rendered) + " |")
    return "\n".join(lines)


@dataclass
class Report:
    out_dir: Path
    markdown: Path
    plots: list[Path]
    tables: dict[str, pd.DataFrame]
    logset: logs_mod.LogSet
    seconds: float
    rendered: dict[str, str] = field(default_factory=dict)

    def terminal_text(self, names: Sequence[str] = MAIN_TABLES) -> str:
        """The main tables as Markdown; the paired tests on success only (the
        Markdown report also has them on death)."""
        parts = []
        for name in names:
            body = self.rendered[name]
            df = self.tables[name]
            if name == "wilcoxon" and not df.empty:
                body = markdown_table(df[df["metric"] == "success"], SPECS[name])
            parts.append(f"## {TITLES[name]}\n\n{body}\n")
        return "\n".join(parts)


def _inputs_table(evals: pd.DataFrame) -> pd.DataFrame:
    if evals.empty:
        return pd.DataFrame()
    rows = []
    for r in evals.itertuples():
        args = json.loads(r.task_args)
        cell = " / ".join(str(args.get(k, "")) for k in logs_mod.DIMENSIONS[r.family])
        rows.append(
            {
                "file": Path(r.log).name,
                "family": r.family,
                "model": r.model,
                "cell": cell,
                "config": r.config,
                "status": r.status + ("" if r.used_samples else " (superseded)"),
                "epochs": r.epochs,
                "used_samples": r.used_samples,
            }
        )
    order = {"detect": 0, "navigate": 1}
    return (
        pd.DataFrame(rows)
        .sort_values(
            ["family", "model", "cell", "used_samples"], key=lambda s: s.map(order) if s.name == "family" else s
        )
        .reset_index(drop=True)
    )


def compute_tables(logset: logs_mod.LogSet, alpha: float = paper.ALPHA) -> dict[str, pd.DataFrame]:
    det, nav = logset.detect, logset.navigate
    detection = tables.detection_table(det)
    navigation = tables.navigation_table(nav)
    return {
        "detection": detection,
        "modality": tables.modality_table(detection),
        "direction": tables.direction_table(det),
        "navigation": navigation,
        "gain": tables.gain_table(navigation),
        "steps": tables.steps_table(nav),
        "wilcoxon": tables.wilcoxon_table(nav, alpha),
        "correlation": tables.correlation_table(det, nav),
        "path_recall": tables.path_recall_table(det, nav),
        "inputs": _inputs_table(logset.evals),
    }


MISSING = {
    "detection": "No detect logs: the detection sections are empty.",
    "modality": "No detect logs.",
    "direction": "No detect logs.",
    "navigation": "No navigate logs: the navigation sections are empty.",
    "gain": "Needs navigate logs of both omcd and no_filter for the same model, regime and modality.",
    "steps": "No navigate logs.",
    "wilcoxon": "Needs navigate logs of at least two strategies of one model, regime and modality.",
    "correlation": (
        "Needs detect (text, default configuration) and navigate omcd (text, default configuration) "
        "logs of the same model and regime."
    ),
    "path_recall": "Needs detect logs in the default configuration (and navigate omcd logs for the trajectory sets).",
    "inputs": "No logs of this suite were found.",
}

NOTES = {
    "detection": (
        "Pooled: counts summed over all entries, windows, seeds and epochs (micro). Mean +- sd: per seed "
        "(averaged over its epochs), then mean and sample sd over seeds, as the paper reports. A seed's F1 is "
        "the task's per-sample F1 (0 without a true positive); undefined P/R (no flag / no stale entry) are "
        "left out of the mean. '-' marks an undefined ratio. Rows with a non-empty config are not the "
        "paper's protocol (B = 10, binary output)."
    ),
    "direction": (
        "Thaw = F->H (a SAFE claim over a new hole: a miss kills); freeze = H->F. The flag rate on stale-thaw "
        "entries is the thaw recall; comparing it with the flag rate on still-valid SAFE entries is the paper's "
        "Figure 4 control: a gap near 0 means the auditor is not looking at the observation."
    ),
    "navigation": (
        "Rates over episodes (each seed x epoch once). Paper values (SPEC section 7) appear where the model "
        "name matches (gpt-4o: text L2; claude: L1); they are the paper's model versions, not necessarily yours."
    ),
    "gain": "Paper: GPT-4o +14.4 pp on L1 and +24.4 pp on L3 (SPEC section 7); L2 is 32.8 - 14.4 from its table.",
    "steps": "Paper mean steps (SPEC section 7) do not state the regime; they are shown on every regime's row.",
    "wilcoxon": (
        "scipy.stats.wilcoxon (two-sided, zero differences dropped) on per-seed rates (mean over epochs) of the "
        "seeds both strategies ran. r_rb = matched-pairs rank-biserial correlation, positive when A is higher. "
        "With n non-zero pairs all in one direction the smallest exact p is 2 / 2^n, so alpha = {alpha} needs "
        "at least 11 of them."
    ),
    "correlation": (
        "Per seed: the detect task's F1 (text, default configuration) and the omcd success rate over the "
        "seed's epochs (text, default configuration), same model and regime. Undefined when either side is "
        "constant over seeds (e.g. a perfect auditor)."
    ),
    "path_recall": (
        "Recall of the detect task's verdicts on stale entries whose cell lies in a set: 'all' is ordinary "
        "recall; 'trajectory' the cells the agent stepped on in the omcd episodes of the same seed (pooled "
        "over episodes); 'near traj.' those cells and their 4-neighbours (where a missed thaw can kill); "
        "'true path' a shortest S->G path on the true grid (L1/L2 after the pre-game changes, L3 the final "
        "grid); 'remembered path' a shortest path on the original grid, the route stale memory suggests "
        "(its thaws are the deadly misses). L3 pools every detection window."
    ),
}


def render_markdown(
    report_tables: dict[str, pd.DataFrame], logset: logs_mod.LogSet, log_dir: Path, alpha: float, plot_files: list[Path]
) -> tuple[str, dict[str, str]]:
    rendered = {}
    for name, df in report_tables.items():
        rendered[name] = markdown_table(df, SPECS[name]) if not df.empty else f"_{MISSING[name]}_"
    used = int((logset.evals["used_samples"] > 0).sum()) if not logset.evals.empty else 0
    lines = [
        "# SpatialSTALE report",
        "",
        f"Logs: `{log_dir}`; generated {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}. "
        f"{used} log(s) counted, {len(logset.evals) - used} superseded, {len(logset.skipped)} skipped; "
        f"{len(logset.detect)} detect sample(s), {len(logset.navigate)} navigate episode(s).",
        "",
        "Each (instance, epoch) of a configuration (task, model, model args and roles, task arguments other "
        "than epochs) is counted once, from the newest complete log that has it, else the newest partial one.",
        "",
    ]
    sections = [
        ("Detection", ("detection", "modality", "direction")),
        ("Navigation", ("navigation", "gain", "steps")),
        ("Statistics", ("wilcoxon", "correlation", "path_recall")),
    ]
    for heading, names in sections:
        lines += [f"## {heading}", ""]
        for name in names:
            lines += [f"### {TITLES[name]}", "", rendered[name], ""]
            if name in NOTES and not report_tables[name].empty:
                lines += [NOTES[name].format(alpha=alpha), ""]
    lines += ["## Plots", ""]
    if plot_files:
        lines += [f"![{p.stem}]({p.name})" for p in plot_files] + [""]
    else:
        lines += ["_(no data to plot)_", ""]
    lines += [f"## {TITLES['inputs']}", "", rendered["inputs"], ""]
    if logset.skipped:
        lines += ["### Skipped files", "", "| file | reason |", "|---|---|"]
        lines += [f"| {p} | {reason.replace('|', '/')} |" for p, reason in logset.skipped] + [""]
    return "\n".join(lines), rendered


def build_report(log_dir: str | Path, out_dir: str | Path, alpha: float = paper.ALPHA) -> Report:
    """Read ``log_dir``, write ``out_dir/REPORT.md`` and the PNG plots, return the tables."""
    began = time.perf_counter()
    log_dir, out_dir = Path(log_dir), Path(out_dir)
    logset = logs_mod.load(log_dir)
    report_tables = compute_tables(logset, alpha)
    out_dir.mkdir(parents=True, exist_ok=True)
    plot_files = [
        p
        for p in (
            plots.f1_by_regime(report_tables["detection"], out_dir / "f1_by_regime.png"),
            plots.outcomes_by_strategy(report_tables["navigation"], out_dir / "outcomes_by_strategy.png"),
            plots.trajectory_lengths(logset.navigate, out_dir / "trajectory_lengths.png"),
        )
        if p is not None
    ]
    text_md, rendered = render_markdown(report_tables, logset, log_dir, alpha, plot_files)
    markdown = out_dir / REPORT_FILE
    markdown.write_text(text_md, encoding="utf-8")
    return Report(
        out_dir=out_dir,
        markdown=markdown,
        plots=plot_files,
        tables=report_tables,
        logset=logset,
        seconds=time.perf_counter() - began,
        rendered=rendered,
    )
