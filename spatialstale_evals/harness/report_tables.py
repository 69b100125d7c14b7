"""The pandas helpers every report table shares, the families' own tables
(``<family>/tables.py``) and the report's (``analysis/``) alike: a ratio as
the report shows it (None -> NaN), the natural order of a table's rows
(by model, configuration label and each dimension in its registry's order),
and the mean and sample sd over seeds.

Conventions (also stated in the report): a ratio with a zero denominator is
NaN (shown as "-"), where the task metrics show 0; a configuration label's
values sort by type (numbers numerically, a registry's values in its order).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from spatialstale_evals.harness import counts
from spatialstale_evals.harness.observe import OBSERVATIONS
from spatialstale_evals.harness.params import choices
from spatialstale_evals.world.regimes import REGIMES

#: The natural order of the lake's own table dimensions (a family adds its own: ``sort_table``'s ``orders``).
LAKE_ORDER: dict[str, Iterable[str]] = {"regime": REGIMES, "modality": OBSERVATIONS}
#: Columns that hold a configuration label (``key=value, ...``), sorted by ``label_key``.
LABEL_COLUMNS = ("config", "base_config", "stale_config", "probe_config", "levels")
#: Where a label's parts begin: ``, `` before ``name=`` (a JSON value's own commas are not followed by one).
_PART = re.compile(r", (?=[A-Za-z_][\w.-]*=)")


def nan(value: float | None) -> float:
    """A ratio of a family's metrics as the report shows it: None -> NaN."""
    return math.nan if value is None else float(value)


def ratio(num: float, den: float) -> float:
    return nan(counts.ratio(num, den))


def order(values: Iterable[str], known: Iterable[str]) -> list[str]:
    """The distinct ``values`` in the order of ``known``, unknown ones after, sorted."""
    known = list(known)
    values = list(dict.fromkeys(values))
    return [v for v in known if v in values] + sorted(v for v in values if v not in known)


@functools.cache
def registry_order(name: str) -> tuple[str, ...]:
    """The values a task parameter ``name`` admits, in the order a task declares
    them (its ``Literal``), as text; () when no task declares it so."""
    from spatialstale_evals import task_functions  # the suite's tasks, imported when a table is sorted

    for task in task_functions().values():
        try:
            return tuple(str(v) for v in choices(task, name))
        except (KeyError, TypeError):
            continue
    return ()


def value_key(name: str, text: str) -> tuple[int, float, str]:
    """A configuration value ordered by its type: None first, then numbers
    (booleans as 0 / 1) numerically, then the values a registry declares in
    its order, then any other text alphabetically."""
    if text in ("None", "null"):
        return (0, 0.0, "")
    if text in ("True", "False", "true", "false"):
        return (1, float(text.lower() == "true"), "")
    try:
        number = float(text)
    except ValueError:
        number = math.nan
    if not math.isnan(number):
        return (1, number, "")
    known = registry_order(name)
    return (2, float(known.index(text)), "") if text in known else (3, 0.0, text)


def label_key(label: Any) -> tuple[tuple[str, tuple[int, float, str]], ...]:
    """A configuration label (``distractors=16, batch_size=5``; '' for the
    defaults, first) as a key that orders each ``name=value`` part by name,
    then by ``value_key``: ``distractors=2`` before ``=8`` before ``=16``."""
    text = "" if label is None or (isinstance(label, float) and math.isnan(label)) else str(label)
    parts = [part.partition("=") for part in _PART.split(text)] if text else []
    return tuple((name, value_key(name, value) if sep else (3, 0.0, "")) for name, sep, value in parts)


def _ranks(values: Iterable[Any], key: Any) -> dict[Any, int]:
    return {v: i for i, v in enumerate(sorted(dict.fromkeys(values), key=key))}


def sort_table(df: pd.DataFrame, orders: Mapping[str, Iterable[str]] = LAKE_ORDER) -> pd.DataFrame:
    """Sort by model, config and then every dimension of ``orders`` present,
    in that precedence and each in its natural order (a configuration label
    by ``label_key``: numbers numerically, not as text)."""
    if df.empty:
        return df
    keys = {}
    for col in LABEL_COLUMNS:
        if col in df and col not in orders:
            ranked_labels = _ranks(df[col], label_key)
            keys[col] = lambda s, ranked=ranked_labels: s.map(ranked)
    for col, known in orders.items():
        if col in df:
            ranked = order(df[col], known)
            keys[col] = lambda s, ranked=ranked: s.map({v: i for i, v in enumerate(ranked)})
    by = [c for c in ("model", "config") if c in df] + [c for c in keys if c != "config"]
    return df.sort_values(by, key=lambda s: keys[s.name](s) if s.name in keys else s).reset_index(drop=True)


def mean_sd(values: pd.Series) -> tuple[float, float]:
    """Mean and sample sd (ddof=1; NaN for one value) of the defined values; NaN, NaN for none."""
    v = values.dropna()
    if v.empty:
        return math.nan, math.nan
    return float(v.mean()), float(v.std(ddof=1)) if len(v) > 1 else math.nan


def rows_of(g: pd.DataFrame) -> list[dict[str, Any]]:
    """A frame's rows as dicts (a count record's ``total`` reads them)."""
    return g.to_dict("records")  # type: ignore[return-value]
