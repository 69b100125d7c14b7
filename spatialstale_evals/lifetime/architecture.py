"""The report's architecture table: where the memory lives, compared on the
same lifetimes, one table per regime.

A run's *architecture* is its memory-related task arguments
(``arms.MEMORY_PARAMETERS``: ``memory`` and the parameters its arms add, at
their non-default values: ``memory=transcript, compaction=trim,
compaction_threshold=3000``), so the table is generic over arms: a parameter
an arm adds is a key of its rows by being listed there. Per model,
configuration (its label without those arguments) and regime, one row per
architecture: lifetimes, SPL, success, deaths, ``note_balanced`` of the notes
(runs with the memory tool) and ``kept_balanced`` of what compaction kept
(runs that compacted: ``compactions.py``), the hazard claims acted on, tokens
per lifetime, and the SPL memory gain against ``memory=none`` on the paired
lifetimes (the report's ``memory_gain`` table tests it, ``gain.py``).
``architecture_tests``: every pair of architectures of a cell on the
lifetimes both played, the per-lifetime SPL compared by the exact signed-rank
test (``harness.significance.exact_signed_rank``), Holm's adjustment over the
pairs of the cell.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Mapping
from dataclasses import fields
from typing import Any

import pandas as pd

from spatialstale_evals import paper
from spatialstale_evals.harness.significance import exact_signed_rank, holm
from spatialstale_evals.lifetime.arms import DEFAULT_MEMORY, MEMORY_ARMS, MEMORY_PARAMETERS
from spatialstale_evals.lifetime.gain import base_config, lifetime_rates
from spatialstale_evals.lifetime.measures import CLASSES, balanced
from spatialstale_evals.lifetime.scoring import pooled_ratio, ratio, totals
from spatialstale_evals.lifetime.solver import LifelongSettings

#: The label of the arm every other is measured against.
WITHOUT = "memory=none"
CELL = ("model", "config", "regime")


def _defaults() -> dict[str, Any]:
    """The memory parameters' defaults, as the task's settings hold them (``LifelongSettings``)."""
    found = {f.name: f.default for f in fields(LifelongSettings)}
    return {name: found[name] for name in MEMORY_PARAMETERS if name in found}


def architecture_of(task_args: Mapping[str, Any]) -> str:
    """A run's architecture label: ``memory=...`` and its other memory arguments that differ from the defaults."""
    defaults = _defaults()
    memory = task_args.get("memory") or DEFAULT_MEMORY
    parts = [f"memory={memory}"]
    for name in MEMORY_PARAMETERS:
        if name != "memory" and name in task_args and task_args[name] != defaults.get(name):
            parts.append(f"{name}={task_args[name]}")
    return ", ".join(parts)


def keeps_notes(task_args: Mapping[str, Any]) -> bool:
    """Whether the run offered the memory tool (so its notes have a ``note_balanced``)."""
    arm = MEMORY_ARMS.get(str(task_args.get("memory") or DEFAULT_MEMORY))
    return bool(task_args.get("memory_tool")) or (arm is not None and arm.tool)


def _value(v: Any) -> Mapping[str, float]:
    return json.loads(v) if isinstance(v, str) else v


def _kept_balanced(summed: Mapping[str, float]) -> float:
    """``note_balanced`` of what the compactions kept (pooled over them; NaN without one)."""
    return balanced((summed.get(f"kept_told_{c}", 0.0), summed.get(f"kept_knowable_{c}", 0.0)) for c in CLASSES)


def architecture_tables(records: pd.DataFrame, alpha: float = paper.ALPHA) -> dict[str, pd.DataFrame]:
    """``architectures`` and ``architecture_tests`` (module docstring) of report records
    with an ``architecture`` column; empty frames without one."""
    if records is None or records.empty or "architecture" not in records.columns:
        return {"architectures": pd.DataFrame(), "architecture_tests": pd.DataFrame()}
    frame = records.assign(config=records["config"].map(base_config) if "config" in records.columns else "")
    keys = [k for k in CELL if k in frame.columns]
    rows: list[dict[str, Any]] = []
    tests: list[dict[str, Any]] = []
    for key, cell in frame.groupby(keys, sort=True, dropna=False):
        label = dict(zip(keys, key if isinstance(key, tuple) else (key,)))
        rates = {arch: lifetime_rates(g) for arch, g in cell.groupby("architecture", sort=False)}
        without = rates.get(WITHOUT, {})
        for arch, g in cell.groupby("architecture", sort=True):
            summed = totals(_value(v) for v in g["value"] if v is not None)
            lives = rates[arch]
            paired = sorted(set(lives) & set(without))
            gain = (
                sum(lives[s]["spl"] - without[s]["spl"] for s in paired) / len(paired)
                if paired and arch != WITHOUT else math.nan
            )  # fmt: skip
            notes = bool(g["keeps_notes"].any()) if "keeps_notes" in g else True
            rows.append(
                label | {
                    "architecture": arch, "lifetimes": len(g), "spl": pooled_ratio(summed, "spl"),
                    "success": pooled_ratio(summed, "episode_success_rate"),
                    "deaths": pooled_ratio(summed, "episode_death_rate"),
                    "note_balanced": pooled_ratio(summed, "note_balanced") if notes else math.nan,
                    "kept_balanced": _kept_balanced(summed), "compactions": summed.get("compactions", 0.0),
                    "hazards_acted_on": summed.get("hazards_acted_on", math.nan),
                    "tokens_per_lifetime": ratio(summed.get("tokens", 0.0), len(g)),
                    "spl_gain_vs_none": float(gain), "paired_with_none": len(paired) if arch != WITHOUT else 0,
                }  # fmt: skip
            )
        family = []
        for a, b in itertools.combinations(sorted(rates), 2):
            shared = sorted(set(rates[a]) & set(rates[b]))
            if not shared:
                continue
            t = exact_signed_rank([rates[a][s]["spl"] for s in shared], [rates[b][s]["spl"] for s in shared])
            family.append(
                label | {
                    "architecture": a, "against": b, "lifetimes": t.n_pairs, "differing": t.n_nonzero,
                    "spl": t.mean_a, "spl_against": t.mean_b, "difference": t.mean_diff, "statistic": t.statistic,
                    "method": t.method or t.note, "pvalue": t.pvalue,
                }  # fmt: skip
            )
        for row, adjusted in zip(family, holm([r["pvalue"] for r in family])):
            row["pvalue_holm"] = adjusted
            row["significant"] = bool(adjusted < alpha) if not math.isnan(adjusted) else False
        tests += family
    return {"architectures": pd.DataFrame(rows), "architecture_tests": pd.DataFrame(tests)}
