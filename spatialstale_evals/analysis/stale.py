"""The report's STALE tables.

- ``stale_table``: the stale task's accuracy per model x config x conflict
  type x dimension, over judged answers only (the task metrics' own ratios,
  ``stale_corpus/scoring.py``), with the unscored answers (judge failures)
  counted beside (and, on the ``overall`` row, the answers that were empty,
  failed unjudged, or cut at a length limit, and how many of the six cells
  have no judged answer: ``overall`` is NaN unless that is 0), and STALE's published number for a model of the same name
  (judged by upstream's judge and rubric, not ours; its overall only beside a
  run of all six cells); then STALE's published rows of the systems no model
  here matches. ``types`` and ``dimensions`` are part of a run's config, so
  a run of T1 only and a run of both are rows apart, each sample counted once.
- ``stale_probe_table``: for each model run on both, the stale task's
  accuracy per dimension (both types pooled) beside the probe task's accuracy
  on stale targets of the same dimension: the same three questions about a
  conversation's facts and about a lake's cells.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from spatialstale_evals import paper
from spatialstale_evals.analysis import probes
from spatialstale_evals.analysis.tables import nan
from spatialstale_evals.probing import scoring as ps
from spatialstale_evals.probing.probes import OF_STALE_DIMENSION
from spatialstale_evals.stale_corpus.corpus import STALE_DIMENSIONS, STALE_TYPES
from spatialstale_evals.stale_corpus.scoring import (
    CELLS,
    accuracy_of,
    cell_key,
    cell_keys,
    dimension_accuracy_of,
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


def stale_probe_table(stale: pd.DataFrame, probe: pd.DataFrame) -> pd.DataFrame:
    """Per model with both tasks' logs: each STALE dimension's accuracy beside
    the probe task's accuracy on stale targets (and balanced) of the same
    dimension, for every pair of their configurations (and the probe's regime
    and modality)."""
    if stale.empty or probe.empty:
        return pd.DataFrame()
    rows = []
    for (model, config), g in stale.groupby(GROUP, sort=False):
        values = list(g["value"])
        for key, p in probe[probe["model"] == model].groupby(probes.GROUP, sort=False):
            cell = dict(zip(probes.GROUP, key))
            counts = ps.total(p.to_dict("records"))
            for dimension in STALE_DIMENSIONS:
                n = sum(len(judged(values, cell_key(dimension, t))) for t in STALE_TYPES)
                probe_row = probes.dimension_row(counts, OF_STALE_DIMENSION[dimension])
                if not n and not probe_row["asked"]:
                    continue
                rows.append(
                    {
                        "model": model,
                        "stale_config": config,
                        "probe_config": cell["config"],
                        "regime": cell["regime"],
                        "modality": cell["modality"],
                        "dimension": f"{dimension} / {OF_STALE_DIMENSION[dimension]}",
                        "stale_judged": n,
                        "stale_acc": nan(dimension_accuracy_of(dimension)(values)),
                        "probe_stale_n": probe_row["stale_n"],
                        "probe_stale_acc": probe_row["stale_acc"],
                        "probe_balanced": probe_row["balanced"],
                    }
                )
    return pd.DataFrame(rows)
