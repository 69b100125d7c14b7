"""The report's table of STALE's three questions on both kinds of memory
(``stale_probe_table``): for each model run on both, the stale task's
accuracy per dimension (both types pooled) beside the probe task's accuracy
on stale targets of the same dimension: the same three questions about a
conversation's facts and about a lake's cells. It reads two families, so it
is the report's (each family's own tables are in its package:
``stale_corpus/tables.py``, ``probing/tables.py``).
"""

from __future__ import annotations

import pandas as pd

from spatialstale_evals.analysis.tables import nan
from spatialstale_evals.probing import scoring as ps
from spatialstale_evals.probing import tables as probes
from spatialstale_evals.probing.probes import OF_STALE_DIMENSION
from spatialstale_evals.stale_corpus.corpus import STALE_DIMENSIONS, STALE_TYPES
from spatialstale_evals.stale_corpus.scoring import cell_key, dimension_accuracy_of, judged
from spatialstale_evals.stale_corpus.tables import GROUP


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
