"""The ``lifelong`` family's registry entry: what the matrix runs (each
lifetime once per seed), its cost bounds, what a report record keeps (the
sample's counts: summed over episodes and per episode index), its own
report tables and plot (SPL and ``note_balanced`` by episode, the memory
gain), its rows of the trust-gap view (hazard claims acted on), and its
scripted agents (``lifetime/scripted.py``: ``diligent``, ``write_once``,
``amnesiac``, ``credulous``; and the built-in policies' turns)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from spatialstale_evals.harness.cost import Cost, StandIn
from spatialstale_evals.harness.family import Example, MatrixSpecLike, TaskFamily, register_family
from spatialstale_evals.lifetime.architecture import architecture_of, keeps_notes
from spatialstale_evals.lifetime.cost import estimate_lifetime_cost
from spatialstale_evals.lifetime.gain import memory_of, spl_terms
from spatialstale_evals.lifetime.scripted import LIFETIME_AGENTS, builtin_reply, lifetime_output
from spatialstale_evals.lifetime.tables import acted_on_counts, lifetime_tables, trust_rows
from spatialstale_evals.world import lifetimes
from spatialstale_evals.world.instance import Instance


def matrix_arguments(spec: MatrixSpecLike) -> Iterator[tuple[dict[str, Any], int]]:
    yield {}, 1  # a lifetime is one sample; its episodes are inside it


def estimate(
    instances: Sequence[Instance], args: dict[str, Any], model: StandIn, roles: Mapping[str, StandIn]
) -> tuple[Cost, Cost]:
    """(low, high) over the lifetimes built on ``instances`` (the first N of the regime)."""
    lives = lifetimes.load(args.get("dataset"), args["regime"])[: len(instances)]
    low = high = Cost()
    for life in lives:
        bounds = estimate_lifetime_cost(life, args)
        low += Cost(**bounds["low"])
        high += Cost(**bounds["high"])
    return low, high


def detail(meta: Mapping[str, Any]) -> dict[str, Any]:
    """What a record keeps of the score's metadata (the episode records): the
    episodes that acted on a hazard claim (``tables.acted_on_counts``) and
    each episode's exact SPL (``gain.spl_terms``)."""
    return acted_on_counts(meta) | {SPL_TERMS: spl_terms(meta.get("episodes") or [])}


def record(task_args: Mapping[str, Any], value: Mapping[str, Any], detail: Mapping[str, Any]) -> dict[str, Any]:
    # the sample's counts and the hazard counts as one field (its per-episode keys vary with ``episodes``),
    # read by ``lifetime_tables``; the exact SPL terms and the run's ``memory`` for the memory gain
    counts = {k: v for k, v in detail.items() if k != SPL_TERMS}
    return {
        "value": dict(value) | counts, SPL_TERMS: detail.get(SPL_TERMS) or [], "memory": memory_of(task_args),
        "architecture": architecture_of(task_args), "keeps_notes": keeps_notes(task_args),
    }  # fmt: skip


SPL_TERMS = "spl_terms"
TITLES = {
    "spl_by_episode": "Lifelong: SPL (success weighted by path length) by episode index",
    "success_by_episode": "Lifelong: success by episode index",
    "note_balanced_by_episode": "Lifelong: note_balanced at each episode start (knowable cells told right, "
    "mean of the SAFE and hole classes)",
    "summary": "Lifelong: outcomes, SPL, notes and repairs by model x regime",
    "deaths_by_cause": "Lifelong: deaths by cause (a SAFE note, no note, an ignored HOLE note)",
    "memory_gain": "Lifelong: memory gain (memory=notes minus memory=none) on the same lifetimes; exact "
    "signed-rank test, Holm within each model x config x regime",
    "architectures": "Lifelong: where the memory lives, per regime (SPL, outcomes, note_balanced of the notes, "
    "kept_balanced of what compaction kept, hazard claims acted on, tokens per lifetime, SPL gain against memory=none)",
    "architecture_tests": "Lifelong: architectures against each other on the same lifetimes (per-lifetime SPL; "
    "exact signed-rank test, Holm within each model x config x regime)",
}


def tables(records: pd.DataFrame) -> dict[str, tuple[str, pd.DataFrame]]:
    if records is None or records.empty:
        return {key: (title, pd.DataFrame()) for key, title in TITLES.items()}
    # the groups (model, config, regime) as columns: the report's tables show columns, not an index
    return {key: (TITLES.get(key, key), table.reset_index()) for key, table in lifetime_tables(records).items()}


def plots(tables: Mapping[str, Any], records: Any, out_dir: Path) -> list[Path]:
    """SPL and ``note_balanced`` by episode (``lifetime/plots.py``, imported only when a report is drawn)."""
    from spatialstale_evals.lifetime.plots import plot

    return plot(tables, records, out_dir)


def _agent(name: str) -> Any:
    return lambda messages, tools, seed: lifetime_output(name, name, messages, tools)


FAMILY = register_family(
    TaskFamily(
        name="lifelong",
        scorer="lifelong_scorer",
        dimensions=("regime",),
        detail=detail,
        record=record,
        matrix=matrix_arguments,
        estimate=estimate,
        in_default_matrix=False,
        tables=tables,
        plots=plots,
        trust_gap=trust_rows,
        scripted_agents={name: _agent(name) for name in LIFETIME_AGENTS},
        scripted_reply=builtin_reply,
        # ``diligent`` repairs its notes, ``write_once`` never does
        example=Example(
            models=("spatialstale/diligent", "spatialstale/write_once"),
            view_model="spatialstale/write_once",
            view_args={"regime": "L2", "episodes": 3},
        ),
    )
)
