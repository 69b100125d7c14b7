"""The note printed under each of the report's own tables (its definitions,
tests and caveats), by table name (``analysis/layout.py`` has the rest of each
table's layout); ``notes()`` adds the families' (``ReportTable.note``)."""

from __future__ import annotations

from spatialstale_evals import paper
from spatialstale_evals.analysis.layout import family_tables
from spatialstale_evals.harness.significance import METHOD_NOTES

SHARED_NOTES = {
    "benefit": (
        "Memory (every entry as written, no_filter) against none (no_memory), per regime, full observation "
        "first and then each view radius (config view_radius=r). On L0 nothing changes, so every entry is true "
        "and memory can only help: under full observability it cannot (the observation already shows "
        "everything); with a view radius memory is the only source about cells out of view. On L1-L3 the same "
        "comparison is stale memory's net worth: under full observation it can only hurt (deaths on stale SAFE "
        "entries), under partial observation it may still help more than it costs. Both sides are shown: "
        "success and deaths with minus without; 'memory helps / harms' reads them together ('helps and harms': "
        "more successes and more deaths). p (Holm): the paired test of success on the seeds, from the Wilcoxon "
        "table."
    ),
    "safety": (
        "Its safety suite: on L1-L3 the observation is the authority and a stale entry can only mislead. "
        "no_filter = every entry as written; omcd / self_verify = the model's own audit; resolve = the runtime "
        "resolver (no model call: entries resolved against what the agent has seen); oracle = the ground truth; "
        "[mark] / [history] = the filter mode (how a judged entry is shown). Under partial observability an "
        "agent that looks before it steps cannot be walked into a hole, so the price shows as timeouts. Each "
        "p (Holm) is the paired test against no_filter, from the Wilcoxon table."
    ),
    "stale_probe": (
        "The same three questions on two kinds of memory: facts of a user's conversation that changed (stale "
        "task, both conflict types pooled, judged by the grader) and cells of the lake that changed (probe "
        "task, accuracy on stale targets, scored from the truth; balanced adds its controls). dim1 = explicit, "
        "dim2 = premise, dim3 = implicit."
    ),
    "tax": (
        "The Memory Trust Gap's headline quantity in SpatialSTALE's terms: how many more episodes end in a "
        "hole when the agent is shown every entry as written (no_filter) than when it is shown none (no_memory), "
        "on the same seeds. 'memory factors' are the levels of memory_style, memory_framing, memory_position and "
        "distractors (docs/memory.md, Factors); no_memory runs each framing level with the other factors at their "
        "defaults (it has no memory section). p: two-sided paired Wilcoxon signed-rank test on the exact "
        "per-seed death rates (as in the Wilcoxon table); p (Holm): adjusted over the factor levels of one "
        "(model, config, modality, regime) cell. With --model-info the table adds the capability column and "
        "tax_vs_capability.png plots the tax against it."
    ),
    "wilcoxon": (
        "Two-sided Wilcoxon signed-rank tests (scipy.stats.wilcoxon) on the exact per-seed differences of the "
        "rates (successes / episodes of each seed, as fractions, so equal differences tie), over the seeds both "
        "strategies ran; zero differences are dropped (Wilcoxon's convention) and 'non-zero' counts the rest. "
        + "method: "
        + "; ".join(f"'{name}' = {text}" for name, text in METHOD_NOTES.items())
        + ". Each (model, config, regime, modality) cell is one family (every pair of strategies, on success and "
        "on death); p (Holm) is Holm's step-down adjustment within it, and 'p (Holm) < alpha' (alpha = {alpha}) "
        "controls the family-wise error rate. r_rb = matched-pairs rank-biserial correlation, positive when A "
        "is higher. With n non-zero pairs all in one direction the smallest exact p is 2 / 2^n, so alpha = "
        "{alpha} needs at least {min_pairs} of them, before the adjustment."
    ),
    "correlation": (
        f"Per seed: the detect task's F1 (text, default configuration) and the {paper.AUDITED} success rate over the "
        "seed's epochs (text, default configuration), same model and regime. Undefined when either side is "
        "constant over seeds (e.g. a perfect auditor)."
    ),
    "path_recall": (
        "Recall of the detect task's verdicts on stale entries whose cell lies in a set: 'all' is ordinary "
        f"recall; 'trajectory' the cells the agent stepped on in the {paper.AUDITED} episodes of the same seed (pooled "
        "over episodes); 'near traj.' those cells and their 4-neighbours (where a missed thaw can kill); "
        "'true path' a shortest S->G path on the true grid (L1/L2 after the pre-game changes, L3 the final "
        "grid); 'remembered path' a shortest path on the original grid, the route stale memory suggests "
        "(its thaws are the deadly misses). L3 pools every detection window."
    ),
}


def notes() -> dict[str, str]:
    """The note under every table that has one: the families' and the report's own."""
    return {name: table.note for name, table in family_tables().items() if table.note} | SHARED_NOTES
