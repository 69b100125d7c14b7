"""The ``stale`` family's registry entry: not in the run matrix (its corpus is
a file or a download, not the lake's seeds); its cost against the scripted
``stale-aware`` agent and ``judge`` (``stale_corpus/cost.py``); a report
record keeps the judged cells as one field, the conflict type and who judged;
its report tables (``stale_corpus/tables.py``); the example runs on the test
fixture's five records."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from spatialstale_evals.harness.family import Example, TaskFamily, register_family
from spatialstale_evals.harness.memory_tool import ACCESS_SECTION
from spatialstale_evals.stale_corpus.cost import estimate
from spatialstale_evals.stale_corpus.scripted import STALE_REPLIERS
from spatialstale_evals.stale_corpus.tables import TABLES

#: The example's corpus, in a checkout: the test fixture (the published file is 306 MB and a download).
EXAMPLE_CORPUS = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "stale_mini.json"


def detail(meta: Mapping[str, Any]) -> dict[str, Any]:
    judge = meta.get("judge") or {}
    return {"type": meta.get("type"), "judged_by": judge.get("model"), "judge_problem": judge.get("problem")}


def record(task_args: Mapping[str, Any], value: Mapping[str, Any], detail: Mapping[str, Any]) -> dict[str, Any]:
    # the sample's counts as one field: a table of records would give every record every cell's column
    return {"value": dict(value), **detail}


REPLIERS = STALE_REPLIERS.items()
FAMILY = register_family(
    TaskFamily(
        name="stale",
        scorer="stale_judge",
        report_sections=(("STALE", ("stale", "stale_probe")), (ACCESS_SECTION, ("stale_access",))),
        unit="scenario",
        # types and dimensions stay in the config: runs that overlap in them are rows apart, not counted twice
        dimensions=(),
        detail=detail,
        record=record,
        layout_tables=TABLES,
        in_default_matrix=False,
        estimate=estimate,
        cost_agents={"model": "stale-aware", "grader": "judge"},
        # the corpus's scripted agents and judge: the reply to the last probe, a memory call, or the judge's verdicts
        scripted_agents={name: (lambda messages, tools, seed, f=f: f(messages, tools)) for name, f in REPLIERS},
        # the aware agent answers from the newest session, the naive one recalls the old fact
        example=Example(
            models=("spatialstale/stale-aware", "spatialstale/stale-naive"),
            view_model="spatialstale/stale-naive",
            view_args={"path": EXAMPLE_CORPUS},
            args={"path": EXAMPLE_CORPUS},
            roles={"grader": "spatialstale/judge"},
        ),
    )
)
