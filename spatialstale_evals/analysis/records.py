"""What the report reads from the samples of each task family: the
``samples_df`` columns built from the family's registry entry
(``harness/family.py``: its scorer, what a record keeps of the score's
metadata, whether records carry the instance). A record's counts are the
score's ``metadata["counts"]`` (``harness/score_counts.py``).

``logs.py`` finds and ranks the logs; this module reads one log's samples.
"""

from __future__ import annotations

import functools
import json
import warnings
from typing import Any

import pandas as pd
from inspect_ai.analysis import SampleColumn, samples_df

from spatialstale_evals.harness.family import families
from spatialstale_evals.harness.samples import INSTANCE_KEY, LEGACY_INSTANCE_KEY
from spatialstale_evals.harness.score_counts import counts_of


def score_of(sample: Any, family: str) -> Any:
    return (sample.scores or {}).get(families()[family].scorer)


def instance_json(sample: Any) -> str:
    """The sample's instance as JSON text: from the store (``SampleState``, as
    text; logs of earlier task versions keep it under ``instance``, as text or
    a dict), or from the metadata in the oldest logs."""
    value = sample.store.get(INSTANCE_KEY) or sample.store.get(LEGACY_INSTANCE_KEY) or sample.metadata.get("instance")
    return value if isinstance(value, str) else json.dumps(value)


def sample_columns(family: str) -> list[SampleColumn]:
    """The ``samples_df`` columns of ``family``'s records. Built once per
    (family, whether records carry the instance) and reused for every log:
    Inspect parses a column's JSONPath at its first use (about 25 ms each), so
    fresh columns for each log would parse them again for every log read."""
    return list(_sample_columns(family, families()[family].instance))


@functools.cache
def _sample_columns(family: str, instance: bool) -> tuple[SampleColumn, ...]:
    """The columns; the family's entry is looked up when a sample is read, so a
    family registered again under its name is read by its new entry."""

    def value(s: Any) -> str | None:
        """The sample's counts (``Score.metadata["counts"]``; in a log written
        before they moved there, the score value, which then held them)."""
        score = score_of(s, family)
        return json.dumps(counts_of(score)) if score is not None else None

    def detail(s: Any) -> str | None:
        score = score_of(s, family)
        return None if score is None else json.dumps(families()[family].detail(score.metadata or {}))

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
    if instance:
        columns.append(SampleColumn("instance", path=instance_json, full=True))
        truth = SampleColumn("truth", path=lambda s: json.dumps((s.metadata or {}).get("windows", [])), full=True)
        columns.append(truth)
    return tuple(columns)


def read_samples(path: str, family: str) -> pd.DataFrame:
    """The samples of one log (scores, score metadata, instance) via ``samples_df``."""
    with warnings.catch_warnings():
        # inspect_ai's own use of a pandas keyword that pandas 3 deprecates
        warnings.filterwarnings("ignore", message="The inplace keyword")
        exclude = set(families()[family].exclude)
        df = samples_df(path, columns=sample_columns(family), quiet=True, exclude_fields=exclude)
    return df.astype(object).where(df.notna(), None)
