"""The report's view of where the memory lives: each task's runs with its
memory in the prompt (``memory_access=prompt``, the paper's and STALE's
protocol) beside the same runs with it behind the memory tool
(``memory_access=tool``), per model and configuration (the configuration
without ``memory_access`` and ``max_memory_calls``), with the tool runs'
retrieval evidence and the paired tests where the samples pair.

- ``stale_access_table``: per dimension (both conflict types pooled) and
  ``all``: the judged accuracy in each setting; in the tool setting the
  judge's verdicts split by retrieval (passed / failed with the session that
  holds the new state read before the answer, and without: a failure with it
  is the agent's arbitration, without it its retrieval;
  ``stale_corpus/retrieval.py``), the agent's model and memory calls and the
  tokens per scenario (agent and judge) in each. On ``all``: the paired
  Wilcoxon test of the per-scenario accuracy (passed / judged answers) on
  the scenarios judged in both settings, Holm-adjusted over the table's tests.
- ``navigate_access_table``: per regime, modality and strategy: success,
  death and timeout rates, deaths on a stale cell, tokens per episode, in
  each setting; in the tool setting the episodes that read the file, memory
  calls and reads per episode and deaths on a stale entry the agent had read
  (``death_on_stale_read``); paired Wilcoxon tests of per-seed success and
  death rates (exact fractions), Holm-adjusted within each (model, config,
  regime, modality) family, as the strategy tests are.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Any

import pandas as pd

from spatialstale_evals.analysis.tables import nan
from spatialstale_evals.harness.counts import ratio
from spatialstale_evals.harness.significance import holm, paired_wilcoxon
from spatialstale_evals.navigation.memory_access import ACCESS_FACTORS
from spatialstale_evals.stale_corpus.corpus import STALE_DIMENSIONS, STALE_TYPES
from spatialstale_evals.stale_corpus.retrieval import READ_KEY, RETRIEVAL_RATIOS

MODES = ("prompt", "tool")
TESTED = ("success", "death")


def base_config(config: str) -> str:
    """A configuration label without the memory-access arguments (``config_label``'s ``key=value`` parts)."""
    return ", ".join(p for p in str(config or "").split(", ") if p and p.split("=", 1)[0] not in ACCESS_FACTORS)


def access_of(config: str) -> str:
    """The memory setting a configuration label names (``prompt`` when it names none)."""
    part = next((p for p in str(config or "").split(", ") if p.startswith("memory_access=")), "")
    return part.split("=", 1)[1] if part else "prompt"


def _split(records: pd.DataFrame, keys: Sequence[str]) -> Iterable[tuple[dict[str, Any], dict[str, pd.DataFrame]]]:
    """Per group of ``keys`` (``config`` as its base), the records of each setting; groups with a tool run only."""
    frame = records.assign(config=records["config"].map(base_config), access=records["config"].map(access_of))
    for key, g in frame.groupby(list(keys), sort=False, dropna=False):
        modes = {m: g[g["access"] == m] for m in MODES}
        if not modes["tool"].empty:
            yield dict(zip(keys, key if isinstance(key, tuple) else (key,))), modes


def _test_columns(pairs: Sequence[tuple[Fraction, Fraction]], prefix: str = "") -> dict[str, Any]:
    t = paired_wilcoxon([a for a, _ in pairs], [b for _, b in pairs])
    return {f"{prefix}n_pairs": t.n_pairs, f"{prefix}diff_pp": 100 * t.mean_diff if pairs else math.nan,
            f"{prefix}pvalue": t.pvalue}  # fmt: skip


def _holm(rows: list[dict[str, Any]], column: str) -> None:
    tested = [r for r in rows if column in r]
    for row, adjusted in zip(tested, holm([r[column] for r in tested])):
        row[column + "_holm"] = adjusted


# -- stale --------------------------------------------------------------------------


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
    for cell, modes in _split(stale, ["model", "config"]):
        tokens = {m: nan(ratio(sum(g["sample_tokens"]), len(g))) for m, g in modes.items()}
        for dimension in (*STALE_DIMENSIONS, "all"):
            dims = STALE_DIMENSIONS if dimension == "all" else (dimension,)
            row = {**cell, "dimension": dimension}
            for mode, g in modes.items():
                row |= _stale_cells(list(g["value"]), dims, mode) if not g.empty else {f"{mode}_scenarios": 0}
                row[f"{mode}_tokens"] = tokens[mode]
            if dimension == "all":
                a, b = _scenario_accuracy(modes["tool"]), _scenario_accuracy(modes["prompt"])
                row |= _test_columns([(a[u], b[u]) for u in sorted(set(a) & set(b))])
            rows.append(row)
    _holm(rows, "pvalue")
    return pd.DataFrame(rows)


# -- navigate -----------------------------------------------------------------------


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
    for cell, modes in _split(nav, ["model", "config", "regime", "modality", "strategy"]):
        row = {**cell, **_rates(modes["tool"], "tool"), **_rates(modes["prompt"], "prompt")}
        if not modes["prompt"].empty:
            for metric in TESTED:
                a, b = _per_seed(modes["tool"], metric), _per_seed(modes["prompt"], metric)
                row |= _test_columns([(a[s], b[s]) for s in sorted(set(a) & set(b))], f"{metric}_")
        rows.append(row)
    for key in dict.fromkeys(map(_family, rows)):
        members = [r for r in rows if _family(r) == key]
        tested = [(r, m) for r in members for m in TESTED if f"{m}_pvalue" in r]
        for (r, m), adjusted in zip(tested, holm([r[f"{m}_pvalue"] for r, m in tested])):
            r[f"{m}_pvalue_holm"] = adjusted
    return pd.DataFrame(rows)
