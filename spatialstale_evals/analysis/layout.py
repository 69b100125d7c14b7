"""How the report shows each of its own tables (those that read several
families, and the list of logs): its columns (source, header, format),
title and the text shown when it has no data; and every table's layout, the
families' own (``TaskFamily.layout_tables``: ``<family>/tables.py``) with
these (``specs``, ``titles``, ``missing``, ``main_tables``).

Table names are the keys of ``analysis.report.compute_tables``; the notes
printed under the report's own tables are in ``analysis/notes.py``.
"""

from __future__ import annotations

from spatialstale_evals import paper
from spatialstale_evals.harness.family import families
from spatialstale_evals.harness.report_layout import (
    ReportTable,
    Spec,
    f1d,
    f2d,
    f3,
    integer,
    pval,
    text,
    yes,
)

__all__ = ["SHARED_SPECS", "SHARED_TITLES", "ReportTable", "Spec", "family_tables", "main_tables", "specs", "titles"]

SHARED_SPECS: dict[str, Spec] = {
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

SHARED_TITLES = {
    "wilcoxon": "Paired Wilcoxon signed-rank tests between strategies (per-seed rates over epochs)",
    "correlation": f"Per-seed detection F1 vs per-seed {paper.AUDITED.upper()} success (Pearson, Spearman)",
    "path_recall": "Path-conditioned detection recall",
    "benefit": "Benefit: success with and without memory, true (L0) or stale (L1-L3), full and partial observation",
    "safety": "Safety: raw memory against audited, resolved and oracle memory (and their filter modes)",
    "stale_probe": "STALE's three dimensions on its conversations (stale) and on the lake (probe), side by side",
    "tax": "Trust gap: the stale-memory tax (death with raw memory minus death without) by memory factor",
    "acted_on": "Trust gap, own notes: hazard claims acted on (a SAFE note on a hole, walked into)",
    "inputs": "Logs read",
}

#: The report's own tables printed to the terminal, after the families' (all of them go into the Markdown).
SHARED_MAIN_TABLES = ("wilcoxon", "correlation", "path_recall")


SHARED_MISSING = {
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
    "stale_probe": "Needs stale and probe logs of the same model.",
    "acted_on": "No logs of a task whose agent writes its own notes (lifelong).",
    "tax": "Needs navigate logs of no_filter and no_memory (same model, config and modality) on a regime with changes.",
}


def family_tables() -> dict[str, ReportTable]:
    """Every family's tables of the fixed layout by name, in registration order (a name twice is an error)."""
    found: dict[str, ReportTable] = {}
    for family in families().values():
        twice = (set(found) | set(SHARED_SPECS)) & set(family.layout_tables)
        if twice:
            raise RuntimeError(f"report tables named twice: {sorted(twice)} (family {family.name})")
        found |= family.layout_tables
    return found


def specs() -> dict[str, Spec]:
    """Every table's columns: the families' and the report's own."""
    return {name: table.columns for name, table in family_tables().items()} | SHARED_SPECS


def titles() -> dict[str, str]:
    """Every table's title: the families' and the report's own."""
    return {name: table.title for name, table in family_tables().items()} | SHARED_TITLES


def missing() -> dict[str, str]:
    """What each table shows without data: the families' and the report's own."""
    return {name: table.missing for name, table in family_tables().items()} | SHARED_MISSING


def main_tables() -> tuple[str, ...]:
    """The tables printed to the terminal: the families' (``ReportTable.terminal``), then the report's own."""
    return (*(name for name, table in family_tables().items() if table.terminal), *SHARED_MAIN_TABLES)
