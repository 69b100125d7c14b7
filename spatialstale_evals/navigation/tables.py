"""The navigate family's report tables, from its records (one row per
episode: the counts of ``navigation/counts.py``, the outcome, trajectory and
death cell): success / death / timeout by model x strategy x regime, the
paper's OMCD gain, trajectory lengths by outcome, and the runs with the
memory view in the prompt beside the same runs behind the memory tool. Each
rate is the task metric's own ratio (``navigation/metrics.py``) over the same
counts; the layout, titles and notes are :data:`TABLES`, which the family's
registry entry hands to the report (``TaskFamily.layout_tables``).

Rates are per episode (every epoch of every seed counts once). The
side-by-side table (``navigate_access_table``): per regime, modality and
strategy: success, death and timeout rates, deaths on a stale cell, tokens
per episode, in each setting; in the tool setting the episodes that read the
file, memory calls and reads per episode and deaths on a stale entry the
agent had read (``death_on_stale_read``); paired Wilcoxon tests of per-seed
success and death rates (exact fractions), Holm-adjusted within each (model,
config, regime, modality) family, as the strategy tests are.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

import pandas as pd

from spatialstale_evals import paper
from spatialstale_evals.harness.access_tables import paired_columns, split
from spatialstale_evals.harness.lake_episode import OUTCOMES
from spatialstale_evals.harness.observe import OBSERVATIONS
from spatialstale_evals.harness.report_layout import ReportTable, f1d, f2d, f3, integer, labels, pval
from spatialstale_evals.harness.report_tables import nan, ratio, rows_of, sort_table
from spatialstale_evals.harness.significance import holm
from spatialstale_evals.navigation import metrics as nm
from spatialstale_evals.navigation.counts import NavigationCounts
from spatialstale_evals.navigation.strategies import STRATEGIES
from spatialstale_evals.world.regimes import REGIMES

#: The natural order of the family's table dimensions, in the precedence its tables sort by.
ORDER: dict[str, Iterable[str]] = {
    "regime": REGIMES,
    "strategy": STRATEGIES,
    "modality": OBSERVATIONS,
    "outcome": OUTCOMES,
}
#: The rates the side-by-side table's paired tests compare.
TESTED = ("success", "death")


NAV_GROUP = ["model", "config", "regime", "strategy", "modality"]


def navigation_table(nav: pd.DataFrame) -> pd.DataFrame:
    """Success/death/timeout (% of episodes) by model x strategy x regime, with
    the paper's values beside them where the model matches."""
    if nav.empty:
        return pd.DataFrame()
    rows = []
    for key, g in nav.groupby(NAV_GROUP, sort=False):
        row = dict(zip(NAV_GROUP, key))
        c = NavigationCounts.total(rows_of(g))
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
    return sort_table(pd.DataFrame(rows), ORDER)


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
    return sort_table(pd.DataFrame(rows), ORDER)


def steps_table(nav: pd.DataFrame) -> pd.DataFrame:
    """Mean trajectory length by outcome and strategy (the paper's Figure 6
    decomposition; the mean is the task metric's ``steps_of``)."""
    if nav.empty:
        return pd.DataFrame()
    rows = []
    for key, g in nav.groupby(NAV_GROUP, sort=False):
        c = NavigationCounts.total(rows_of(g))
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
    return sort_table(pd.DataFrame(rows), ORDER)


# -- prompt against tool ------------------------------------------------------------


def _rates(g: pd.DataFrame, mode: str) -> dict[str, Any]:
    if g.empty:
        return {f"{mode}_episodes": 0}
    n = len(g)

    def mean(column: str) -> float:
        return 100 * float(g[column].fillna(0).sum()) / n if column in g else math.nan

    out = {f"{mode}_episodes": n, **{f"{mode}_{k}": mean(k) for k in ("success", "death", "timeout", "death_on_stale")}}
    out[f"{mode}_tokens"] = float(g["sample_tokens"].sum()) / n
    calls = "navigator_calls" if mode == "tool" else "steps"  # the prompt setting: one call a step
    out[f"{mode}_calls"] = float(g[calls].sum()) / n
    if mode == "tool":
        out |= {
            "read_memory": mean("read_memory"),
            "memory_calls": float(g["memory_calls"].sum()) / n,
            "memory_reads": float(g["memory_reads"].sum()) / n,
            "death_on_stale_read": mean("death_on_stale_read"),
        }
    return out


def _per_seed(g: pd.DataFrame, metric: str) -> dict[str, Fraction]:
    return {
        seed: Fraction(int(round(float(s[metric].sum()))), len(s))
        for seed, s in g.groupby("instance_id")
        if float(s[metric].sum()).is_integer()
    }


def _family(row: Mapping[str, Any]) -> tuple[Any, ...]:
    """The family of tests a row's belong to, as the strategy tests' (``inference.CELL``)."""
    return tuple(row[k] for k in ("model", "config", "regime", "modality"))


def navigate_access_table(nav: pd.DataFrame) -> pd.DataFrame:
    """Prompt against tool for the navigate task (module docstring); empty without a tool run."""
    if nav is None or nav.empty:
        return pd.DataFrame()
    rows: list[dict[str, Any]] = []
    for cell, modes in split(nav, ["model", "config", "regime", "modality", "strategy"]):
        row = {**cell, **_rates(modes["tool"], "tool"), **_rates(modes["prompt"], "prompt")}
        if not modes["prompt"].empty:
            for metric in TESTED:
                a, b = _per_seed(modes["tool"], metric), _per_seed(modes["prompt"], metric)
                row |= paired_columns([(a[s], b[s]) for s in sorted(set(a) & set(b))], f"{metric}_")
        rows.append(row)
    for key in dict.fromkeys(map(_family, rows)):
        members = [r for r in rows if _family(r) == key]
        tested = [(r, m) for r in members for m in TESTED if f"{m}_pvalue" in r]
        for (r, m), adjusted in zip(tested, holm([r[f"{m}_pvalue"] for r, m in tested])):
            r[f"{m}_pvalue_holm"] = adjusted
    return pd.DataFrame(rows)


NOTES = {
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
    "navigate_access": (
        "The same strategy's memory view in every step's prompt (prompt: the paper's protocol) and as the file "
        "/memories/lake.md behind the read-only memory tool (tool), on the same seeds. The episodes and the view "
        "are the same; what differs is that the agent must fetch the view, and pays for it. 'death on stale' counts "
        "deaths on a changed cell in either setting; 'of it read' only those whose entry the agent had read, with its "
        "claim, before the fatal move. p: paired Wilcoxon signed-rank tests of per-seed rates (tool against prompt), "
        "Holm-adjusted within each model x config x regime x modality."
    ),
}

#: The family's tables of the report's fixed layout, in order (its entry's ``report_sections`` places them).
TABLES = {
    "navigation": ReportTable(
        title="Navigation: success / death / timeout by model x strategy x regime",
        columns=[
            *labels("model", "config", "regime", "strategy", "modality"),
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
        build=lambda nav, built: navigation_table(nav),
        missing="No navigate logs: the navigation sections are empty.",
        note=NOTES["navigation"],
        terminal=True,
    ),
    "gain": ReportTable(
        title=f"{paper.AUDITED.upper()} success gain over {paper.BASELINE}",
        columns=[
            *labels("model", "config", "regime", "modality"),
            (f"{paper.AUDITED}_success", f"{paper.AUDITED} success %", f1d),
            (f"{paper.BASELINE}_success", f"{paper.BASELINE} success %", f1d),
            ("gain_pp", "gain (pp)", f1d),
            ("paper_gain_pp", "paper gain (pp)", f1d),
        ],
        build=lambda nav, built: gain_table(built["navigation"]),
        missing=(
            f"Needs navigate logs of both {paper.AUDITED} and {paper.BASELINE} for the same model, regime and modality."
        ),
        note=NOTES["gain"],
    ),
    "steps": ReportTable(
        title="Mean trajectory length by outcome and strategy",
        columns=[
            *labels("model", "config", "regime", "strategy", "modality", "outcome"),
            ("episodes", "episodes", integer),
            ("mean_steps", "mean steps", f1d),
            ("sd_steps", "sd", f1d),
            ("median_steps", "median", f1d),
            ("paper_mean_steps", "paper mean steps", f1d),
        ],
        build=lambda nav, built: steps_table(nav),
        missing="No navigate logs.",
        note=NOTES["steps"],
        terminal=True,
    ),
    "navigate_access": ReportTable(
        title="Navigation with the memory view in the prompt and behind the memory tool, side by side",
        columns=[
            *labels("model", "config", "regime", "modality", "strategy"),
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
        build=lambda nav, built: navigate_access_table(nav),
        missing="Needs navigate logs with -T memory_access=tool (beside them, the same runs without).",
        note=NOTES["navigate_access"],
    ),
}
