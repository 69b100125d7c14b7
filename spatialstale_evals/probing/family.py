"""The ``probe`` family's registry entry: what the matrix runs (once per seed,
per modality), its exact cost, and what a report record keeps (the counts per
dimension x kind x outcome)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from spatialstale_evals.harness.family import Example, MatrixAxis, MatrixSpecLike, TaskFamily, register_family
from spatialstale_evals.harness.observe import OBSERVATIONS
from spatialstale_evals.probing.cost import estimate, settings_of
from spatialstale_evals.probing.scripted import scripted_reply
from spatialstale_evals.probing.tables import TABLES

#: The observation options, the axis detect crosses too (one ``--modalities`` for both).
MODALITIES = MatrixAxis("modalities", "modality", known=lambda: OBSERVATIONS)


def matrix_arguments(spec: MatrixSpecLike) -> Iterator[tuple[dict[str, Any], int]]:
    yield {}, 1


FAMILY = register_family(
    TaskFamily(
        name="probe",
        scorer="probe_scorer",
        report_sections=(("Probes", tuple(TABLES)),),
        layout_tables=TABLES,
        dimensions=("regime", "modality"),
        matrix=matrix_arguments,
        axes=(MODALITIES,),
        estimate=estimate,
        settings=settings_of,
        scripted_reply=scripted_reply,
        in_default_matrix=False,
        example=Example(models=("spatialstale/memory",), view_model="spatialstale/memory", view_args={"regime": "L2"}),
    )
)
