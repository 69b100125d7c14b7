"""The helpers the report's own tables share (the tables that read several
families: ``inference.py``, ``trust.py``, ``gap.py``, and the summaries of
``families.py``), over the shared layer's (``harness/report_tables.py``).
Each family's own tables live in its package (``<family>/tables.py``) and
reach the report through its registry entry (``TaskFamily.layout_tables``).

Conventions (also stated in the report):

- Navigation rates are per episode (every epoch of every seed counts once);
  the paired tests use per-seed rates (mean over that seed's epochs).
- Correlations and path-conditioned recall use the paper's protocol only: the
  default configuration (B = 10, binary output, the navigator auditing for
  itself, no history), text modality for the correlation.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pandas as pd

from spatialstale_evals.harness import report_tables
from spatialstale_evals.harness.report_tables import nan, order, ratio
from spatialstale_evals.navigation.tables import ORDER

__all__ = ["ORDER", "nan", "order", "ratio", "sort_table"]


def sort_table(df: pd.DataFrame, extra: Mapping[str, Iterable[str]] | None = None) -> pd.DataFrame:
    """Sort by model, config and then every dimension present, in its natural
    order (the regimes', strategies', modalities' and outcomes' registries, then ``extra``)."""
    return report_tables.sort_table(df, {**ORDER, **(extra or {})})
