"""The stale family's report tables, from its records (one row per
scenario: its judged cells, who judged, the conflict type).

- ``stale_table``: the stale task's accuracy per model x config x conflict
  type x dimension, over judged answers only (the task metrics' own ratios,
  ``stale_corpus/scoring.py``), with the unscored answers (judge failures)
  counted beside (and, on the ``overall`` row, the answers that were empty,
  failed unjudged, or cut at a length limit, and how many of the six cells
  have no judged answer: ``overall`` is NaN unless that is 0), and STALE's
  published number for a model of the same name (judged by upstream's judge
  and rubric, not ours; its overall only beside a run of all six cells); then
  STALE's published rows of the systems no model here matches. ``types`` and
  ``dimensions`` are part of a run's config, so a run of T1 only and a run of
  both are rows apart, each sample counted once.
- ``stale_access_table``: per dimension (both conflict types pooled) and
  ``all``: the judged accuracy with the history in the prompt and in the
  memory store; in the tool setting the judge's verdicts split by retrieval
  (passed / failed with the session that holds the new state read before the
  answer, and without: a failure with it is the agent's arbitration, without
  it its retrieval; ``stale_corpus/retrieval.py``), the agent's model and
  memory calls and the tokens per scenario (agent and judge) in each. On
  ``all``: the paired Wilcoxon test of the per-scenario accuracy (passed /
  judged answers) on the scenarios judged in both settings, Holm-adjusted
  over the table's tests.

The layout, titles and notes are :data:`TABLES`, which the family's registry
entry hands to the report (``TaskFamily.layout_tables``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import pandas as pd

from spatialstale_evals import paper
from spatialstale_evals.harness.access_tables import holm_column, paired_columns, split
from spatialstale_evals.harness.counts import ratio
from spatialstale_evals.harness.report_layout import ReportTable, f1d, f2d, f3, integer, labels, pval, text
from spatialstale_evals.harness.report_tables import nan
from spatialstale_evals.stale_corpus.corpus import STALE_DIMENSIONS, STALE_TYPES
from spatialstale_evals.stale_corpus.retrieval import READ_KEY, RETRIEVAL_RATIOS
from spatialstale_evals.stale_corpus.scoring import (
    CELLS,
    accuracy_of,
    cell_key,
    cell_keys,
    judged,
    mean_of,
    missing_cells,
    overall_of,
)

GROUP = ["model", "config"]
#: The config label of STALE's published rows.
REFERENCE = "reference: STALE as published (upstream's judge)"


def _published(system: str | None, conflict: str, dimension: str) -> float | None:
    return paper.STALE_REFERENCE.get((system, conflict), {}).get(dimension) if system else None


def _cell_row(values: Sequence[Mapping[str, Any]], conflict: str, dimension: str) -> dict[str, Any] | None:
    key = cell_key(dimension, conflict)
    asked = [v for v in values if key in v]
    if not asked:
        return None
    scores = judged(asked, key)
    return {
        "type": conflict,
        "dimension": dimension,
        "scenarios": len(asked),
        "judged": len(scores),
        "passed": int(sum(scores)),
        "accuracy": nan(accuracy_of(key)(asked)),
        "unscored": len(asked) - len(scores),
    }


def _reference_rows(matched: set[str]) -> list[dict[str, Any]]:
    return [
        {"model": system, "config": REFERENCE, "type": conflict, "dimension": d, "upstream": v}
        for (system, conflict), rates in paper.STALE_REFERENCE.items()
        if system not in matched
        for d, v in rates.items()
    ]


def stale_table(stale: pd.DataFrame) -> pd.DataFrame:
    """One row per model x config x type x dimension asked, and its ``overall``
    row; then the published rows of systems no model here matched."""
    if stale.empty:
        return pd.DataFrame()
    rows, matched = [], set()
    for (model, config), g in stale.groupby(GROUP, sort=False):
        values = list(g["value"])
        system = paper.stale_system(str(g["model_name"].iloc[0]))
        matched |= {system} if system else set()
        # who judged, from the scores: a log re-judged with ``inspect score`` keeps its old grader in the header
        cell = {"model": model, "config": config, "judged_by": ", ".join(sorted({str(j) for j in g["judged_by"]}))}
        for conflict in STALE_TYPES:
            for dimension in STALE_DIMENSIONS:
                found = _cell_row(values, conflict, dimension)
                if found:
                    rows.append({**cell, **found, "upstream": _published(system, conflict, dimension)})
        rows.append(
            {
                **cell,
                "type": "all",
                "dimension": "overall",
                "scenarios": len(values),
                "accuracy": nan(overall_of(values)),
                "missing_cells": missing_cells(values),
                "unscored": int(sum(v["judge_failed"] > 0 for v in values)),
                "unanswered": int(sum(v.get("unanswered", 0) for v in values)),
                "empty_answers": int(sum(v.get("empty_answers", 0) for v in values)),
                "truncated_answers": int(sum(v.get("truncated_answers", 0) for v in values)),
                "judge_failure_rate": nan(mean_of("judge_failed")(values)),
                # upstream's overall is over all six cells: beside a run of fewer it would mislead
                "upstream": _published(system, "all", "overall") if cell_keys(values) == list(CELLS) else None,
            }
        )
    return pd.DataFrame(rows + _reference_rows(matched))


def _answers(values: Sequence[Mapping[str, Any]], dims: Sequence[str]) -> list[dict[str, Any]]:
    """Every answer of ``values`` in ``dims``: its verdict (None unjudged) and, in the tool setting, the read flag."""
    found = []
    for v in values:
        for d in dims:
            cell = next((v[k] for t in STALE_TYPES if (k := f"{d}_{t}") in v), None)
            if cell is None:
                continue
            verdict = None if isinstance(cell, float) and math.isnan(cell) else float(cell)
            found.append({"verdict": verdict, "read": v.get(READ_KEY.format(dimension=d))})
    return found


def _stale_cells(values: Sequence[Mapping[str, Any]], dims: Sequence[str], mode: str) -> dict[str, Any]:
    answers = _answers(values, dims)
    judged = [a["verdict"] for a in answers if a["verdict"] is not None]
    out: dict[str, Any] = {f"{mode}_scenarios": len(values), f"{mode}_acc": nan(ratio(sum(judged), len(judged)))}
    if mode == "prompt":  # one agent call an answered probe, of every dimension the scenario was asked
        asked = [sum(any(f"{d}_{t}" in v for t in STALE_TYPES) for d in STALE_DIMENSIONS) for v in values]
        answered = sum(a - v.get("unanswered", 0) for a, v in zip(asked, values))
        out["prompt_calls"] = nan(ratio(answered, len(values)))
    if mode == "tool":
        tool = [v for v in values if "memory_calls" in v]
        judged_read = [(a["verdict"], a["read"]) for a in answers if a["verdict"] is not None and a["read"] is not None]
        out |= {
            "read_rate": nan(ratio(sum(a["read"] for a in answers if a["read"] is not None), len(answers))),
            "passed_read": sum(v * r for v, r in judged_read),
            "failed_read": sum((1 - v) * r for v, r in judged_read),
            "passed_unread": sum(v * (1 - r) for v, r in judged_read),
            "failed_unread": sum((1 - v) * (1 - r) for v, r in judged_read),
            "tool_calls": nan(ratio(sum(v["model_calls"] for v in tool), len(tool))),
            "memory_calls": nan(RETRIEVAL_RATIOS["memory_calls_per_scenario"](tool)),
        }
    return out


def _scenario_accuracy(g: pd.DataFrame) -> dict[str, Fraction]:
    """Per scenario (uid), passed / judged of its answers."""
    rates = {}
    for uid, value in zip(g["instance_id"], g["value"]):
        judged = [a["verdict"] for a in _answers([value], STALE_DIMENSIONS) if a["verdict"] is not None]
        if judged:
            rates[uid] = Fraction(int(sum(judged)), len(judged))
    return rates


def stale_access_table(stale: pd.DataFrame) -> pd.DataFrame:
    """Prompt against tool for the stale task (module docstring); empty without a tool run."""
    if stale is None or stale.empty:
        return pd.DataFrame()
    rows: list[dict[str, Any]] = []
    for cell, modes in split(stale, ["model", "config"]):
        tokens = {m: nan(ratio(sum(g["sample_tokens"]), len(g))) for m, g in modes.items()}
        for dimension in (*STALE_DIMENSIONS, "all"):
            dims = STALE_DIMENSIONS if dimension == "all" else (dimension,)
            row = {**cell, "dimension": dimension}
            for mode, g in modes.items():
                row |= _stale_cells(list(g["value"]), dims, mode) if not g.empty else {f"{mode}_scenarios": 0}
                row[f"{mode}_tokens"] = tokens[mode]
            if dimension == "all":
                a, b = _scenario_accuracy(modes["tool"]), _scenario_accuracy(modes["prompt"])
                row |= paired_columns([(a[u], b[u]) for u in sorted(set(a) & set(b))])
            rows.append(row)
    holm_column(rows, "pvalue")
    return pd.DataFrame(rows)


NOTES = {
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
    "stale_access": (
        "STALE's probes after the history in the conversation (prompt: trimmed to context_tokens) and with every "
        "session in the memory store, read with the memory tool (tool: STALE's memory-agent setting; the whole "
        "haystack, max_memory_calls a probe). The same judge grades both. In the tool setting each answer is split "
        "by retrieval: 'read' when the session holding the new state (relevant_session_index's last) had been read "
        "before the answer; a failure with it read is arbitration (it saw the update and kept the old fact), "
        "without it retrieval. Tokens: agent and judge. p: paired Wilcoxon signed-rank test of per-scenario "
        "accuracy on the scenarios judged in both, Holm-adjusted over the table."
    ),
}

#: The family's tables of the report's fixed layout, in order (its entry's ``report_sections`` places them).
TABLES = {
    "stale": ReportTable(
        title="STALE: the stale task's accuracy by model x conflict type x dimension (our judge)",
        columns=[
            *labels("model", "config"),
            ("judged_by", "judged by", text),
            *labels("type", "dimension"),
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
        build=lambda stale, built: stale_table(stale),
        missing="No stale logs.",
        note=NOTES["stale"],
    ),
    "stale_access": ReportTable(
        title="STALE with the history in the prompt and in the memory store (STALE's memory-agent setting)",
        columns=[
            *labels("model", "config", "dimension"),
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
        build=lambda stale, built: stale_access_table(stale),
        missing="Needs stale logs with -T memory_access=tool (beside them, the same runs without).",
        note=NOTES["stale_access"],
    ),
}
