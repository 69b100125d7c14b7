"""How the report shows a table, as plain data a family can declare: its
columns (source, header, format), title, the note printed under it and the
text shown when it has no rows (:class:`ReportTable`, named by a family's
``TaskFamily.layout_tables``), and the cell formats every table uses.

The report (``analysis/report.py``) lays out the families' tables and its
own (the tables that read several families, ``analysis/layout.py``) alike.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

Fmt = Callable[[Any], str]
#: (column or row-function, header, formatter) of each column a table shows, in order.
Spec = Sequence[tuple["str | Callable[[pd.Series], str]", str, Fmt]]


def _nan(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def f3(v: Any) -> str:
    return "-" if _nan(v) else f"{v:.3f}"


def f1d(v: Any) -> str:
    return "-" if _nan(v) else f"{v:.1f}"


def f2d(v: Any) -> str:
    return "-" if _nan(v) else f"{v:.2f}"


def pval(v: Any) -> str:
    if _nan(v):
        return "-"
    return f"{v:.2g}" if v < 0.01 else f"{v:.3f}"


def text(v: Any) -> str:
    return "" if _nan(v) else str(v)


def yes(v: Any) -> str:
    return "**yes**" if v is True or v == 1 else ""


def integer(v: Any) -> str:
    return "-" if _nan(v) else str(int(v))


def pm(mean_col: str, sd_col: str) -> Callable[[pd.Series], str]:
    def fmt(row: pd.Series) -> str:
        m, s = row[mean_col], row[sd_col]
        return "-" if _nan(m) else (f"{m:.3f} +- {s:.3f}" if not _nan(s) else f"{m:.3f}")

    return fmt


def labels(*names: str) -> Spec:
    """Text columns shown under their own names (the grouping columns: ``model``, ``config``, ...)."""
    return [(name, name, text) for name in names]


def metric_columns(headers: Mapping[str, str], fmt: Fmt = f3) -> Spec:
    """The columns of pooled metrics, each under its header: a table that
    computes each metric of ``headers`` by its registered name (a family's
    metric list) shows it with no column written twice."""
    return [(name, header, fmt) for name, header in headers.items()]


@dataclass(frozen=True)
class ReportTable:
    """One table of the report's fixed layout that a family computes from its own records.

    Attributes:
        title: The heading above it.
        columns: What it shows (``Spec``); a column absent from the table is left out.
        build: The table from (the family's records, the family's tables built
            before this one, by name): a DataFrame, empty when there is nothing to show.
        missing: Shown instead of an empty table.
        note: Printed under a non-empty table; ``{alpha}`` and ``{min_pairs}``
            are filled in (the report's significance level, the fewest pairs that can reach it).
        terminal: Whether ``spatialstale report`` prints it on the terminal too.
    """

    title: str
    columns: Spec
    build: Callable[[Any, Mapping[str, Any]], Any]
    missing: str
    note: str = ""
    terminal: bool = False
