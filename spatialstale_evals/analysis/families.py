"""The report's sections for task families outside its fixed layout: a family
registered with its own ``tables`` shows them; any other shows a summary (per
model, configuration and table dimension: the samples counted and the mean of
each numeric field of its records). So a new task is in the report as soon as
it is registered (``harness/family.py``), and gets tables of its own by
declaring them in its entry."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from spatialstale_evals.analysis.tables import sort_table
from spatialstale_evals.harness.family import TaskFamily

#: Record fields every family's records carry (``analysis/logs.py``), not summarised.
COMMON_FIELDS = ("model", "config", "model_name", "instance_id", "seed", "epoch", "eval_id", "log", "sample_tokens")


def summary_table(records: pd.DataFrame, family: TaskFamily) -> pd.DataFrame:
    """Per model x config x the family's dimensions: ``n`` and the mean of every
    numeric field (NaN where no record has a number)."""
    if records is None or records.empty:
        return pd.DataFrame()
    keys = ["model", "config", *(d for d in family.dimensions if d in records.columns)]
    values = [c for c in records.columns if c not in keys and c not in COMMON_FIELDS and _numeric(records[c])]
    rows = []
    for group, df in records.groupby(keys, dropna=False, sort=False):
        group = group if isinstance(group, tuple) else (group,)
        row: dict[str, Any] = dict(zip(keys, group)) | {"n": len(df)}
        for c in values:
            numbers = [float(v) for v in df[c] if _is_number(v)]
            row[c] = sum(numbers) / len(numbers) if numbers else math.nan
        rows.append(row)
    return sort_table(pd.DataFrame(rows))


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value)


def _numeric(column: pd.Series) -> bool:
    return any(_is_number(v) for v in column)


def family_tables(family: TaskFamily, records: pd.DataFrame) -> dict[str, tuple[str, pd.DataFrame]]:
    """The family's report tables by key: its own (``TaskFamily.tables``), else the summary."""
    if family.tables is not None:
        return dict(family.tables(records))
    title = f"{family.name}: samples and the mean of each score field, by model x config x dimension"
    return {"summary": (title, summary_table(records, family))}


def plain_markdown(df: pd.DataFrame) -> str:
    """A table as Markdown, numbers to three decimals, NaN as '-'."""
    if df is None or df.empty:
        return "_(no data)_"

    def cell(value: Any) -> str:
        if isinstance(value, float):
            return "-" if math.isnan(value) else f"{value:.3f}"
        return str(value).replace("|", "/")

    lines = ["| " + " | ".join(map(str, df.columns)) + " |", "|" + "---|" * len(df.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines)


def extra_sections(
    registered: Mapping[str, TaskFamily], records: Mapping[str, pd.DataFrame]
) -> list[tuple[str, dict[str, tuple[str, pd.DataFrame]]]]:
    """(family name, its tables) for every family outside the report's fixed layout."""
    return [
        (name, family_tables(family, records.get(name, pd.DataFrame())))
        for name, family in registered.items()
        if not family.in_report_layout
    ]
