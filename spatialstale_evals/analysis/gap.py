"""The Memory Trust Gap view: what trusting stale memory costs each model, how
that moves with how memory is written and framed, and how it grows with the
model's capability (docs/memory.md, "Factors").

The **stale-memory tax** of a cell (model, configuration without the memory
factors, modality, regime with changes) at one factor level is the death
rate with every entry as written (``no_filter``) minus the death rate without
memory (``no_memory``), in percentage points, with a paired Wilcoxon test on
the shared seeds' exact per-seed death rates (``stats.paired_wilcoxon``),
Holm-adjusted over the levels of the cell (one family per cell). ``no_memory``
at a level runs with the memory-section factors at their defaults (it has no
memory section; ``harness.memory_text.SECTION_FACTORS``), so every style,
position and distractor level is set against the same memory-free baseline,
and each framing level against the baseline with that framing line.

``model_info`` (``--model-info models.csv``: a model column and one numeric
column, such as parameters in billions or a benchmark score) adds that
capability to every row and a plot of the tax against it: the Trust Gap's
capability curve.

Where the agent writes its own memory (the ``lifelong`` task) the view adds
the task's row: the hazard claims its notes held at episode starts (SAFE on a
cell that was a hole) and how many it acted on, i.e. walked into the cell and
died there (``acted_on_table``).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from spatialstale_evals.analysis.inference import paired_vectors
from spatialstale_evals.analysis.tables import sort_table
from spatialstale_evals.analysis.trust import RAW, WITHOUT_MEMORY, is_clean
from spatialstale_evals.harness.family import TaskFamily, families
from spatialstale_evals.harness.params import choices
from spatialstale_evals.harness.significance import holm, paired_wilcoxon

CELL = ["model", "base_config", "modality", "regime"]
#: The label of the paper's level (every factor at its default).
DEFAULT_LEVEL = "paper defaults"


#: The columns of a family's trust-gap rows (``TaskFamily.trust_gap``), after its groups.
ACTED_ON_COLUMNS = ("samples", "episodes", "hazard_claims", "acted_on", "acted_on_rate", "deaths", "death_on_hazard")
#: The columns of lifelong's ``memory=shared`` rows, one per (writer, reader) pair (``lifetime/shared.py``).
PROPAGATION_COLUMNS = ("read", "stale_read", "hazard_deaths", "detours", "repaired")


def acted_on_table(registered: Mapping[str, TaskFamily], records: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The trust-gap view's rows of the tasks where the agent writes its own
    memory (a family's ``trust_gap``): per task, model, config and regime, the
    hazard claims its notes held at episode starts and how many it acted on
    (walked into the cell and died), as a share of the claims and of the deaths."""
    frames = []
    for name, family in registered.items():
        rows = records.get(name)
        if family.trust_gap is None or rows is None or rows.empty:
            continue
        frame = family.trust_gap(rows)
        if frame is not None and not frame.empty:
            frames.append(frame.assign(task=name))
    if not frames:
        return pd.DataFrame()
    df = pd.concat(frames, ignore_index=True)
    keys = [c for c in ("task", "model", "config", "regime", "writer", "reader") if c in df.columns]
    columns = [c for c in (*ACTED_ON_COLUMNS, *PROPAGATION_COLUMNS) if c in df.columns]
    return sort_table(df[[*keys, *columns]])


def tax_table(nav: pd.DataFrame, alpha: float, model_info: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per cell and factor level that has ``no_filter`` episodes and
    ``no_memory`` episodes to set them against (see the module docstring)."""
    if nav.empty or "levels" not in nav:
        return pd.DataFrame()
    rows = []
    for key, g in nav.groupby(CELL, sort=False):
        cell = dict(zip(CELL, key))
        if is_clean(cell["regime"]):
            continue
        family = _cell_rows(cell, g)
        for row, adjusted in zip(family, holm([r["pvalue"] for r in family])):
            row["pvalue_holm"] = adjusted
            row["significant"] = bool(adjusted < alpha) if not math.isnan(adjusted) else False
        rows += family
    df = pd.DataFrame(rows)
    if df.empty:
        return df
    df = df.assign(_rank=df["levels"].map(level_rank)).sort_values("_rank", kind="stable").drop(columns="_rank")
    if model_info is not None and not model_info.empty:
        measure = next(c for c in model_info.columns if c != "model")
        info = attach(model_info, df["model"]).rename(columns={measure: "capability"})
        df = df.merge(info, on="model", how="left").assign(capability_measure=measure)
    return sort_table(df.rename(columns={"base_config": "config"}), {"levels": list(dict.fromkeys(df["levels"]))})


def level_rank(label: str) -> tuple[Any, ...]:
    """Rows in a natural order: the paper's defaults, then one factor changed
    (in the order of the navigate family's ``factors``, each level in its declared order), then two..."""
    if label == DEFAULT_LEVEL:
        return (0,)
    parts = [part.split("=", 1) for part in label.split(", ")]
    keys = []
    for name, value in parts:
        try:
            levels = [str(v) for v in choices(families()["navigate"].task_function(), name)]
        except TypeError:  # not a Literal: a number
            levels = []
        keys.append(
            (families()["navigate"].factors.index(name), levels.index(value) if value in levels else _number(value))
        )
    return (len(parts), *keys)


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return math.inf


def _cell_rows(cell: dict[str, Any], g: pd.DataFrame) -> list[dict[str, Any]]:
    raw, bare = g[g["strategy"] == RAW], g[g["strategy"] == WITHOUT_MEMORY]
    rows = []
    for levels, with_memory in raw.groupby("levels", sort=False):
        reference = bare[bare["levels"] == with_memory["levels_no_memory"].iloc[0]]
        if reference.empty:
            continue
        pair = pd.concat([with_memory, reference])
        seeds, a, b = paired_vectors(pair, RAW, WITHOUT_MEMORY, "death")
        t = paired_wilcoxon(a, b)
        rows.append(
            {
                **cell,
                "levels": levels or DEFAULT_LEVEL,
                "death_no_filter": 100 * t.mean_a,
                "death_no_memory": 100 * t.mean_b,
                "death_on_stale": 100 * float(with_memory["death_on_stale"].mean()),
                "tax_pp": 100 * t.mean_diff,
                "n_pairs": t.n_pairs,
                "method": t.method,
                "pvalue": t.pvalue,
                "note": t.note,
            }
        )
    base = next((r["tax_pp"] for r in rows if r["levels"] == DEFAULT_LEVEL), math.nan)
    for r in rows:
        r["tax_vs_default_pp"] = r["tax_pp"] - base
    return rows


def read_model_info(path: str | Path) -> pd.DataFrame:
    """``models.csv``: a header, the model's name (as the report names it, or
    its ``provider/name`` without model args) in the first column and a number
    in the second (its header names the axis). A clear error otherwise."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"model info file {path} does not exist")
    with path.open(newline="", encoding="utf-8") as handle:
        table = list(csv.reader(handle))
    if len(table) < 2 or len(table[0]) < 2:
        raise ValueError(f"{path}: needs a header and one row per model, with a model column and a numeric column")
    column = table[0][1].strip()
    out = []
    for n, line in enumerate(table[1:], start=2):
        if not line or not "".join(line).strip():
            continue
        try:
            out.append({"model": line[0].strip(), column: float(line[1])})
        except (IndexError, ValueError):
            raise ValueError(f"{path} line {n}: expected a model and a number, got {line!r}") from None
    return pd.DataFrame(out)


def attach(model_info: pd.DataFrame, models: pd.Series) -> pd.DataFrame:
    """``model_info`` keyed by the report's model labels: a row named as the
    label, or as its name without model args (``openai/gpt-4o [seed=1]`` ->
    ``openai/gpt-4o``)."""
    by_name = dict(zip(model_info["model"], model_info.drop(columns="model").to_dict("records")))
    rows = []
    for label in dict.fromkeys(models):
        info = by_name.get(label) or by_name.get(str(label).split(" [", 1)[0])
        if info is not None:
            rows.append({"model": label, **info})
    return pd.DataFrame(rows, columns=list(model_info.columns))
