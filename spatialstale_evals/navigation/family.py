"""The ``navigate`` family's registry entry: what the matrix runs (per
strategy and navigation modality, ``epochs`` episodes per seed), its cost
bounds, and what a report record keeps (the episode's counts, outcome,
trajectory and death cell; the strategy's arm and the memory factors), and
its report tables and plots."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, get_args

from spatialstale_evals.harness.family import Example, MatrixAxis, MatrixSpecLike, TaskFamily, register_family
from spatialstale_evals.harness.memory_text import FACTORS, SECTION_FACTORS
from spatialstale_evals.harness.memory_tool import ACCESS_FACTORS, ACCESS_SECTION
from spatialstale_evals.harness.observe import OBSERVATIONS
from spatialstale_evals.navigation.cost import estimate, settings_of
from spatialstale_evals.navigation.scripted import scripted_reply
from spatialstale_evals.navigation.strategies import STRATEGIES, StrategyName
from spatialstale_evals.navigation.tables import TABLES


def paper_strategies() -> list[str]:
    """The built-in strategies the paper ran (``MemoryPolicy.paper``): the matrix's default."""
    return [name for name in get_args(StrategyName) if STRATEGIES[name].paper]


def strategies_help() -> str:
    return "default: the paper's. " + "; ".join(f"{name}: {p.summary}" for name, p in STRATEGIES.items())


#: The matrix crosses strategies x navigation modalities (``--strategies``, ``--nav-modalities``): any
#: registered strategy, the paper's unless told; the text observation unless told.
AXES = (
    MatrixAxis("strategies", "strategy", known=lambda: STRATEGIES, default=paper_strategies, help=strategies_help),
    MatrixAxis(
        "nav_modalities", "modality", "navigation modality", known=lambda: OBSERVATIONS, default=lambda: ("text",)
    ),
)


def matrix_arguments(spec: MatrixSpecLike) -> Iterator[tuple[dict[str, Any], int]]:
    yield {"batch_size": spec.batch_size}, spec.epochs


def detail(meta: Mapping[str, Any]) -> dict[str, Any]:
    return {k: meta.get(k) for k in ("outcome", "trajectory", "death_cell")}


def record(task_args: Mapping[str, Any], value: Mapping[str, Any], detail: Mapping[str, Any]) -> dict[str, Any]:
    return {
        **value,
        "outcome": detail.get("outcome"),
        "trajectory": detail.get("trajectory") or [],
        "death_cell": detail.get("death_cell"),
    }


def plots(tables: Mapping[str, Any], records: Any, out_dir: Path) -> list[Path]:
    """Outcomes by strategy and trajectory lengths (``navigation/plots.py``, imported only when a report is drawn)."""
    from spatialstale_evals.navigation.plots import plot

    return plot(tables, records, out_dir)


FAMILY = register_family(
    TaskFamily(
        name="navigate",
        scorer="navigation_scorer",
        report_sections=(
            ("Navigation", ("navigation", "gain", "steps")),
            ("Memory that matters", ("benefit", "safety")),
            ("Trust gap", ("tax",)),
            (ACCESS_SECTION, ("navigate_access",)),
        ),
        layout_tables=TABLES,
        plots=plots,
        unit="episode",
        dimensions=("regime", "strategy", "modality"),
        detail=detail,
        record=record,
        matrix=matrix_arguments,
        axes=AXES,
        estimate=estimate,
        settings=settings_of,
        scripted_reply=scripted_reply,
        # ``omcd`` with ``filter_mode=history`` is the arm ``omcd[history]`` of the same comparison
        arm_args=("filter_mode",),
        # where the memory lives is a factor of the memory section too: no_memory has nothing to fetch
        factors=(*FACTORS, *ACCESS_FACTORS),
        section_factors=(*SECTION_FACTORS, *ACCESS_FACTORS),
        # the memory agent trusts stale entries and dies on them
        example=Example(
            models=("spatialstale/memory",),
            view_model="spatialstale/memory",
            view_args={"regime": "L2", "strategy": "no_filter", "epochs": 1},
        ),
    )
)
