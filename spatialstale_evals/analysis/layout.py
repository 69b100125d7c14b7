"""How the report shows each table: its columns (source, header, format),
title, the note printed under it and the text shown when it has no data.

Table names are the keys of ``analysis.report.compute_tables``; the notes
printed under the tables are in ``analysis/notes.py``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from spatialstale_evals import paper

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
        ("edit_accuracy", "edit acc", f3),
        ("edit_precision", "edit prec", f3),
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
        ("flag_rate_gap", "thaw recall - valid SAFE flag rate", f3),
        ("distractor_n", "notes N", integer),
        ("distractor_flag_rate", "flag rate notes", f3),
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
        ("audit_calls", "audit calls / episode", f2d),
        ("tokens_per_episode", "tokens / episode", f1d),
    ],
    "gain": [
        ("model", "model", text),
        ("config", "config", text),
        ("regime", "regime", text),
        ("modality", "modality", text),
        (f"{paper.AUDITED}_success", f"{paper.AUDITED} success %", f1d),
        (f"{paper.BASELINE}_success", f"{paper.BASELINE} success %", f1d),
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
        ("method", "method", text),
        ("pvalue", "p", pval),
        ("pvalue_holm", "p (Holm)", pval),
        ("rank_biserial", "r_rb", f3),
        ("significant", "p (Holm) < alpha", yes),
        ("note", "note", text),
    ],
    "correlation": [
        ("model", "model", text),
        ("regime", "regime", text),
        ("seeds", "seeds", integer),
        ("f1_mean", "mean F1", f3),
        (f"{paper.AUDITED}_success", f"{paper.AUDITED} success %", f1d),
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
        (f"{paper.AUDITED}_seeds", f"seeds with {paper.AUDITED}", integer),
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
    "benefit": [
        ("model", "model", text),
        ("config", "config", text),
        ("modality", "modality", text),
        ("regime", "regime", text),
        ("memory", "entries", text),
        ("observation", "observation", text),
        ("success_with", "success % with memory (no_filter)", f1d),
        ("success_without", "success % without (no_memory)", f1d),
        ("benefit_pp", "success with - without (pp)", f1d),
        ("death_pp", "deaths with - without (pp)", f1d),
        ("net", "memory helps / harms", text),
        ("pvalue_holm", "p (Holm)", pval),
        ("death_with", "death % with", f1d),
        ("death_without", "death % without", f1d),
        ("timeout_with", "timeout % with", f1d),
        ("timeout_without", "timeout % without", f1d),
    ],
    "safety": [
        ("model", "model", text),
        ("config", "config", text),
        ("modality", "modality", text),
        ("regime", "regime", text),
        ("strategy", "memory (strategy)", text),
        ("success", "success %", f1d),
        ("p_success", "p (Holm), vs no_filter", pval),
        ("death", "death %", f1d),
        ("death_on_stale", "death on stale %", f1d),
        ("p_death", "p (Holm), vs no_filter", pval),
        ("timeout", "timeout %", f1d),
        ("audit_calls", "audit calls / episode", f2d),
    ],
    "probe": [
        ("model", "model", text),
        ("config", "config", text),
        ("regime", "regime", text),
        ("modality", "modality", text),
        ("dimension", "dimension", text),
        ("seeds", "seeds", integer),
        ("stale_n", "stale N", integer),
        ("stale_acc", "accuracy on stale", f3),
        ("control_n", "control N", integer),
        ("control_acc", "accuracy on controls", f3),
        ("balanced", "balanced", f3),
        ("thaw_acc", "thaw", f3),
        ("freeze_acc", "freeze", f3),
        ("unparseable", "unparseable", f3),
        ("empty_answers", "empty answers", integer),
        ("truncated_answers", "cut answers", integer),
        ("skipped", "skipped", integer),
    ],
    "stale": [
        ("model", "model", text),
        ("config", "config", text),
        ("judged_by", "judged by", text),
        ("type", "type", text),
        ("dimension", "dimension", text),
        ("scenarios", "scenarios", integer),
        ("judged", "judged", integer),
        ("passed", "passed", integer),
        ("accuracy", "accuracy", f3),
        ("missing_cells", "cells missing (overall NaN)", integer),
        ("unscored", "unscored (judge failed)", integer),
        ("unanswered", "unanswered", integer),
        ("empty_answers", "empty answers (failed)", integer),
        ("truncated_answers", "cut answers", integer),
        ("judge_failure_rate", "judge failure rate", f3),
        ("upstream", "STALE as published", f3),
    ],
    "stale_probe": [
        ("model", "model", text),
        ("stale_config", "stale config", text),
        ("probe_config", "probe config", text),
        ("regime", "probe regime", text),
        ("modality", "probe modality", text),
        ("dimension", "dimension", text),
        ("stale_judged", "stale judged", integer),
        ("stale_acc", "stale accuracy", f3),
        ("probe_stale_n", "probe stale N", integer),
        ("probe_stale_acc", "probe accuracy on stale", f3),
        ("probe_balanced", "probe balanced", f3),
    ],
    "navigate_access": [
        ("model", "model", text),
        ("config", "config", text),
        ("regime", "regime", text),
        ("modality", "modality", text),
        ("strategy", "strategy", text),
        ("prompt_episodes", "episodes (prompt)", integer),
        ("tool_episodes", "episodes (tool)", integer),
        ("prompt_success", "success % prompt", f1d),
        ("tool_success", "success % tool", f1d),
        ("success_pvalue_holm", "p (Holm)", pval),
        ("prompt_death", "death % prompt", f1d),
        ("tool_death", "death % tool", f1d),
        ("death_pvalue_holm", "p (Holm) ", pval),
        ("prompt_death_on_stale", "death on stale % prompt", f1d),
        ("tool_death_on_stale", "death on stale % tool", f1d),
        ("death_on_stale_read", "of it read % (tool)", f1d),
        ("read_memory", "episodes that read %", f1d),
        ("memory_reads", "reads / episode", f2d),
        ("memory_calls", "memory calls / episode", f2d),
        ("prompt_calls", "navigator calls / episode prompt", f2d),
        ("tool_calls", "navigator calls / episode tool", f2d),
        ("prompt_tokens", "tokens / episode prompt", f1d),
        ("tool_tokens", "tokens / episode tool", f1d),
    ],
    "stale_access": [
        ("model", "model", text),
        ("config", "config", text),
        ("dimension", "dimension", text),
        ("prompt_scenarios", "scenarios (prompt)", integer),
        ("tool_scenarios", "scenarios (tool)", integer),
        ("prompt_acc", "accuracy prompt", f3),
        ("tool_acc", "accuracy tool", f3),
        ("n_pairs", "paired", integer),
        ("diff_pp", "tool - prompt (pp)", f1d),
        ("pvalue_holm", "p (Holm)", pval),
        ("read_rate", "new state read (tool)", f3),
        ("passed_read", "passed, read", integer),
        ("failed_read", "failed, read", integer),
        ("passed_unread", "passed, not read", integer),
        ("failed_unread", "failed, not read", integer),
        ("prompt_calls", "agent calls / scenario prompt", f2d),
        ("tool_calls", "agent calls / scenario tool", f2d),
        ("memory_calls", "memory calls / scenario", f2d),
        ("prompt_tokens", "tokens / scenario prompt", f1d),
        ("tool_tokens", "tokens / scenario tool", f1d),
    ],
    "tax": [
        ("model", "model", text),
        ("config", "config", text),
        ("modality", "modality", text),
        ("regime", "regime", text),
        ("levels", "memory factors", text),
        ("capability_measure", "capability measure", text),
        ("capability", "capability", f3),
        ("death_no_filter", "death % no_filter", f1d),
        ("death_no_memory", "death % no_memory", f1d),
        ("tax_pp", "stale-memory tax (pp)", f1d),
        ("tax_vs_default_pp", "vs paper defaults (pp)", f1d),
        ("n_pairs", "seeds", integer),
        ("pvalue", "p", pval),
        ("pvalue_holm", "p (Holm)", pval),
        ("death_on_stale", "death on stale % (no_filter)", f1d),
        ("note", "note", text),
    ],
    "acted_on": [
        ("task", "task", text),
        ("model", "model", text),
        ("config", "config", text),
        ("regime", "regime", text),
        ("samples", "lifetimes", integer),
        ("episodes", "episodes", integer),
        ("hazard_claims", "hazard claims at episode starts", integer),
        ("acted_on", "acted on", integer),
        ("acted_on_rate", "acted on / hazard claims", f3),
        ("deaths", "deaths", integer),
        ("death_on_hazard", "deaths on a hazard claim / deaths", f3),
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
    "modality": "Detection F1 by modality, averaged over regimes",
    "direction": "Thaw vs freeze recall; flag rate on valid SAFE vs stale-thaw entries, and on notes",
    "navigation": "Navigation: success / death / timeout by model x strategy x regime",
    "gain": f"{paper.AUDITED.upper()} success gain over {paper.BASELINE}",
    "steps": "Mean trajectory length by outcome and strategy",
    "wilcoxon": "Paired Wilcoxon signed-rank tests between strategies (per-seed rates over epochs)",
    "correlation": f"Per-seed detection F1 vs per-seed {paper.AUDITED.upper()} success (Pearson, Spearman)",
    "path_recall": "Path-conditioned detection recall",
    "benefit": "Benefit: success with and without memory, true (L0) or stale (L1-L3), full and partial observation",
    "safety": "Safety: raw memory against audited, resolved and oracle memory (and their filter modes)",
    "probe": "Probes: STALE's three dimensions on spatial memory, by model x regime x modality",
    "stale": "STALE: the stale task's accuracy by model x conflict type x dimension (our judge)",
    "stale_probe": "STALE's three dimensions on its conversations (stale) and on the lake (probe), side by side",
    "navigate_access": "Navigation with the memory view in the prompt and behind the memory tool, side by side",
    "stale_access": "STALE with the history in the prompt and in the memory store (STALE's memory-agent setting)",
    "tax": "Trust gap: the stale-memory tax (death with raw memory minus death without) by memory factor",
    "acted_on": "Trust gap, own notes: hazard claims acted on (a SAFE note on a hole, walked into)",
    "inputs": "Logs read",
}

#: The tables printed to the terminal (all of them go into the Markdown).
MAIN_TABLES = ("detection", "direction", "navigation", "steps", "wilcoxon", "correlation", "path_recall")


MISSING = {
    "detection": "No detect logs: the detection sections are empty.",
    "modality": "No detect logs.",
    "direction": "No detect logs.",
    "navigation": "No navigate logs: the navigation sections are empty.",
    "gain": (
        f"Needs navigate logs of both {paper.AUDITED} and {paper.BASELINE} for the same model, regime and modality."
    ),
    "steps": "No navigate logs.",
    "wilcoxon": "Needs navigate logs of at least two strategies of one model, regime and modality.",
    "correlation": (
        f"Needs detect (text, default configuration) and navigate {paper.AUDITED} (text, default configuration) "
        "logs of the same model and regime."
    ),
    "path_recall": (
        f"Needs detect logs in the default configuration (and navigate {paper.AUDITED} logs for the trajectory sets)."
    ),
    "inputs": "No logs of this suite were found.",
    "benefit": "Needs navigate logs of no_filter and no_memory on one regime (same model, config and modality).",
    "safety": "Needs navigate logs of no_filter and of another strategy that shows memory, on a regime with changes.",
    "probe": "No probe logs.",
    "stale": "No stale logs.",
    "stale_probe": "Needs stale and probe logs of the same model.",
    "acted_on": "No logs of a task whose agent writes its own notes (lifelong).",
    "navigate_access": "Needs navigate logs with -T memory_access=tool (beside them, the same runs without).",
    "stale_access": "Needs stale logs with -T memory_access=tool (beside them, the same runs without).",
    "tax": "Needs navigate logs of no_filter and no_memory (same model, config and modality) on a regime with changes.",
}
