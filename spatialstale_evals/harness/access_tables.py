"""What the report's side-by-side tables of where the memory lives share
(navigate's ``navigation/tables.py``, stale's ``stale_corpus/tables.py``):
a task's runs with its memory in the prompt (``memory_access=prompt``, the
paper's and STALE's protocol) beside the same runs with it behind the memory
tool (``memory_access=tool``), per model and configuration without the
memory-access arguments; and the paired test's columns."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from fractions import Fraction
from typing import Any

import pandas as pd

from spatialstale_evals.harness.memory_tool import ACCESS_FACTORS, MEMORY_ACCESS
from spatialstale_evals.harness.significance import holm, paired_wilcoxon

MODES = MEMORY_ACCESS


def base_config(config: str) -> str:
    """A configuration label without the memory-access arguments (``config_label``'s ``key=value`` parts)."""
    return ", ".join(p for p in str(config or "").split(", ") if p and p.split("=", 1)[0] not in ACCESS_FACTORS)


def access_of(config: str) -> str:
    """The memory setting a configuration label names (``prompt`` when it names none)."""
    part = next((p for p in str(config or "").split(", ") if p.startswith("memory_access=")), "")
    return part.split("=", 1)[1] if part else "prompt"


def split(records: pd.DataFrame, keys: Sequence[str]) -> Iterable[tuple[dict[str, Any], dict[str, pd.DataFrame]]]:
    """Per group of ``keys`` (``config`` as its base), the records of each setting; groups with a tool run only."""
    frame = records.assign(config=records["config"].map(base_config), access=records["config"].map(access_of))
    for key, g in frame.groupby(list(keys), sort=False, dropna=False):
        modes = {m: g[g["access"] == m] for m in MODES}
        if not modes["tool"].empty:
            yield dict(zip(keys, key if isinstance(key, tuple) else (key,))), modes


def paired_columns(pairs: Sequence[tuple[Fraction, Fraction]], prefix: str = "") -> dict[str, Any]:
    """The paired Wilcoxon test of (tool, prompt) pairs: pairs, mean difference (pp) and p."""
    t = paired_wilcoxon([a for a, _ in pairs], [b for _, b in pairs])
    return {f"{prefix}n_pairs": t.n_pairs, f"{prefix}diff_pp": 100 * t.mean_diff if pairs else math.nan,
            f"{prefix}pvalue": t.pvalue}  # fmt: skip


def holm_column(rows: list[dict[str, Any]], column: str) -> None:
    """Adds ``<column>_holm`` to the rows that have ``column``: Holm's adjustment over all of them."""
    tested = [r for r in rows if column in r]
    for row, adjusted in zip(tested, holm([r[column] for r in tested])):
        row[column + "_holm"] = adjusted
