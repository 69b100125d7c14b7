"""The note printed under each table of the report (its definitions, tests
and caveats), by table name (``analysis/layout.py`` has the rest of each
table's layout)."""

from __future__ import annotations

from spatialstale_evals import paper
from spatialstale_evals.harness.significance import METHOD_NOTES

NOTES = {
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
    "probe": (
        "Accuracy = passed / asked (an unusable reply is asked and not passed; 'unparseable' is its share). "
        "Stale: stale_thaw and stale_freeze targets (explicit: state resolution; premise: premise resistance; "
        "implicit: policy adaptation, thaw only); controls: valid_safe and valid_danger (implicit: valid_safe). "
        "Balanced: the mean accuracy over the two classes of right answer (explicit: safe now vs a hole now; "
        "otherwise stale vs control), 0.5 for a one-answer agent. Skipped: implicit targets without a placement. "
        "Rows marked 'reference: STALE' are the pass rates STALE reports for its own, conversational benchmark "
        "(judged by an LLM, every probe about a changed fact): orientation, not a comparison."
    ),
    "stale": (
        "Accuracy = passed / judged, per conflict type (T1, T2) and dimension (dim1 state resolution, dim2 "
        "premise resistance, dim3 implicit policy adaptation); an answer the judge gave no verdict on (an "
        "error, an empty, refused or unreadable reply) is unscored: counted under 'unscored', in neither the "
        "numerator nor the denominator (STALE upstream counts it as a fail); a reply without a verdict for "
        "every dimension leaves the whole scenario unscored. An empty answer fails unjudged ('empty answers'); "
        "an answer cut at a length limit is judged with the judge told so ('cut answers'). overall = the mean "
        "of the six type x dimension cells (upstream's 'Overall'), '-' when any cell has no judged answer "
        "('cells missing'); its 'unscored' counts scenarios with a failed judgement. Runs are grouped by the "
        "corpus's content (config corpus=sha256:..., the file's SHA-256 from the log), not its path: runs on "
        "different contents are separate rows, never pooled; one content read from two paths is one corpus. The judge "
        "is the run's grader role (in the config) with our rubric, written from STALE's published criteria; "
        "'STALE as published' is upstream's number for a system of the same name, judged by upstream's judge "
        "and rubric: the same definitions, not the same judge."
    ),
    "stale_probe": (
        "The same three questions on two kinds of memory: facts of a user's conversation that changed (stale "
        "task, both conflict types pooled, judged by the grader) and cells of the lake that changed (probe "
        "task, accuracy on stale targets, scored from the truth; balanced adds its controls). dim1 = explicit, "
        "dim2 = premise, dim3 = implicit."
    ),
    "navigate_access": (
        "The same strategy's memory view in every step's prompt (prompt: the paper's protocol) and as the file "
        "/memories/lake.md behind the read-only memory tool (tool), on the same seeds. The episodes and the view "
        "are the same; what differs is that the agent must fetch the view, and pays for it. 'death on stale' counts "
        "deaths on a changed cell in either setting; 'of it read' only those whose entry the agent had read, with its "
        "claim, before the fatal move. p: paired Wilcoxon signed-rank tests of per-seed rates (tool against prompt), "
        "Holm-adjusted within each model x config x regime x modality."
    ),
    "stale_access": (
        "STALE's probes after the history in the conversation (prompt: trimmed to context_tokens) and with every "
        "session in the memory store, read with the memory tool (tool: STALE's memory-agent setting; the whole "
        "haystack, max_memory_calls a probe). The same judge grades both. In the tool setting each answer is split "
        "by retrieval: 'read' when the session holding the new state (relevant_session_index's last) had been read "
        "before the answer; a failure with it read is arbitration (it saw the update and kept the old fact), "
        "without it retrieval. Tokens: agent and judge. p: paired Wilcoxon signed-rank test of per-scenario "
        "accuracy on the scenarios judged in both, Holm-adjusted over the table."
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
    "navigation": (
        "Rates over episodes (each seed x epoch once). Paper values appear where the model "
        "name matches (gpt-4o: text L2; claude: L1); they are the paper's model versions, not necessarily yours."
    ),
    "gain": (
        "Paper (GPT-4o): "
        + ", ".join(f"{gain:+.1f} pp on {regime}" for (_, regime), gain in sorted(paper.OMCD_GAIN.items()))
        + f" (L2 is the difference of its table's {paper.AUDITED} and {paper.BASELINE} success rates)."
    ),
    "steps": "Paper mean steps do not state the regime; they are shown on every regime's row.",
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
