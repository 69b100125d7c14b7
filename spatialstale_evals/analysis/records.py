"""What the report reads from the samples of each task family: one entry per
family (a new task joins the report here), and the ``samples_df`` columns
built from it.

``logs.py`` finds and ranks the logs; this module reads one log's samples.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd
from inspect_ai.analysis import SampleColumn, samples_df

from spatialstale_evals.harness.samples import INSTANCE_KEY


def _detect_detail(meta: dict[str, Any]) -> dict[str, Any]:
    return {"windows": [{"step": w["step"], "flagged": w["flagged"]} for w in meta.get("windows", [])]}


def _navigate_detail(meta: dict[str, Any]) -> dict[str, Any]:
    return {k: meta.get(k) for k in ("outcome", "trajectory", "death_cell")}


def _no_detail(meta: dict[str, Any]) -> dict[str, Any]:
    return {}


def _stale_detail(meta: dict[str, Any]) -> dict[str, Any]:
    judge = meta.get("judge") or {}
    return {"type": meta.get("type"), "judged_by": judge.get("model"), "judge_problem": judge.get("problem")}


@dataclass(frozen=True)
class Family:
    """How the report reads one task family's samples.

    Attributes:
        scorer: The scorer whose ``Score.value`` holds the sample's counts.
        dimensions: Task arguments that are table dimensions (everything else
            that differs from the default makes a separate configuration).
        exclude: Sample fields not read (by far the largest).
        detail: What of the score's metadata a record keeps.
        instance: Whether records carry the instance and its window truth.
    """

    scorer: str
    dimensions: tuple[str, ...]
    exclude: frozenset[str]
    detail: Callable[[dict[str, Any]], dict[str, Any]]
    instance: bool = False


_HEAVY = frozenset({"messages", "events", "attachments"})
#: The task families the report reads (a detect log's store is read: it holds the instance).
FAMILY_SPECS: dict[str, Family] = {
    "detect": Family("detection_scorer", ("regime", "modality"), _HEAVY, _detect_detail, instance=True),
    "navigate": Family("navigation_scorer", ("regime", "strategy", "modality"), _HEAVY | {"store"}, _navigate_detail),
    "probe": Family("probe_scorer", ("regime", "modality"), _HEAVY | {"store"}, _no_detail),
    # types and dimensions stay in the config: runs that overlap in them are rows apart, not counted twice
    "stale": Family("stale_judge", (), _HEAVY | {"store"}, _stale_detail),
}


def score_of(sample: Any, family: str) -> Any:
    return (sample.scores or {}).get(FAMILY_SPECS[family].scorer)


def instance_json(sample: Any) -> str:
    """The sample's instance as JSON text: from the store (where the solvers
    log it: as text, or as a dict in logs written before issue 17), or from
    the metadata in logs written before that."""
    value = sample.store.get(INSTANCE_KEY) or sample.metadata.get("instance")
    return value if isinstance(value, str) else json.dumps(value)


def sample_columns(family: str) -> list[SampleColumn]:
    spec = FAMILY_SPECS[family]

    def value(s: Any) -> str | None:
        score = score_of(s, family)
        return json.dumps(score.value) if score is not None else None

    def detail(s: Any) -> str | None:
        score = score_of(s, family)
        return None if score is None else json.dumps(spec.detail(score.metadata or {}))

    columns = [
        SampleColumn("id", path="id", required=True, type=str),
        SampleColumn("epoch", path="epoch", required=True),
        SampleColumn("error", path=lambda s: str(s.error.message) if s.error else "", full=True),
        SampleColumn("seed", path="metadata.seed"),
        SampleColumn("value", path=value, full=True),
        SampleColumn("detail", path=detail, full=True),
        SampleColumn(
            "sample_tokens", path=lambda s: sum(u.total_tokens for u in (s.model_usage or {}).values()), full=True
        ),
    ]
    if spec.instance:
        columns.append(SampleColumn("instance", path=instance_json, full=True))
        truth = SampleColumn("truth", path=lambda s: json.dumps((s.metadata or {}).get("windows", [])), full=True)
        columns.append(truth)
    return columns


def read_samples(path: str, family: str) -> pd.DataFrame:
    """The samples of one log (scores, score metadata, instance) via ``samples_df``."""
    with warnings.catch_warnings():
        # inspect_ai's own use of a pandas keyword that pandas 3 deprecates
        warnings.filterwarnings("ignore", message="The inplace keyword")
        exclude = set(FAMILY_SPECS[family].exclude)
        df = samples_df(path, columns=sample_columns(family), quiet=True, exclude_fields=exclude)
    return df.astype(object).where(df.notna(), None)
