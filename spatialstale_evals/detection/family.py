"""The ``detect`` family's registry entry: what the matrix runs (once per
seed, per modality, at the matrix's batch size), its exact cost, and what a
report record keeps (every count of the score, the windows' flags; the
instance and its windows' truth), and its report tables and plot."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from spatialstale_evals.detection.cost import estimate, settings_of
from spatialstale_evals.detection.scripted import scripted_reply
from spatialstale_evals.detection.tables import TABLES
from spatialstale_evals.harness.family import (
    HEAVY_FIELDS,
    Example,
    MatrixAxis,
    MatrixSpecLike,
    TaskFamily,
    register_family,
)
from spatialstale_evals.harness.observe import OBSERVATIONS

#: The matrix crosses every observation option (``--modalities``), probe's too.
MODALITIES = MatrixAxis("modalities", "modality", known=lambda: OBSERVATIONS)


def matrix_arguments(spec: MatrixSpecLike) -> Iterator[tuple[dict[str, Any], int]]:
    yield {"batch_size": spec.batch_size}, 1


def detail(meta: Mapping[str, Any]) -> dict[str, Any]:
    return {"windows": [{"step": w["step"], "flagged": w["flagged"]} for w in meta.get("windows", [])]}


def record(task_args: Mapping[str, Any], value: Mapping[str, Any], detail: Mapping[str, Any]) -> dict[str, Any]:
    return {**value, "f1": value.get("f1", 0.0), "windows_flagged": detail["windows"]}


def plots(tables: Mapping[str, Any], records: Any, out_dir: Path) -> list[Path]:
    """F1 by regime and modality (``detection/plots.py``, imported only when a report is drawn)."""
    from spatialstale_evals.detection.plots import plot

    return plot(tables, records, out_dir)


FAMILY = register_family(
    TaskFamily(
        name="detect",
        scorer="detection_scorer",
        report_sections=(("Detection", tuple(TABLES)),),
        layout_tables=TABLES,
        plots=plots,
        dimensions=("regime", "modality"),
        exclude=HEAVY_FIELDS,  # the store is read: it holds the instance
        detail=detail,
        record=record,
        instance=True,
        matrix=matrix_arguments,
        axes=(MODALITIES,),
        estimate=estimate,
        settings=settings_of,
        scripted_reply=scripted_reply,
        # the memory agent in the example; ``random`` audits by coin, so its screenshots have misses to explain
        example=Example(models=("spatialstale/memory",), view_model="spatialstale/random", view_args={"regime": "L2"}),
    )
)
