"""The lifelong task's report tables, from its samples' counts.

``lifetime_tables(records)`` takes one row per sample (epoch) with its counts
(``Score.metadata["counts"]``: the dict, or its JSON text: the report's
``value`` column) and any
grouping columns (``model``, ``regime``, ``agent`` ...) and returns, per
group: SPL, success and ``note_balanced`` by episode index, a summary
(outcome rates, SPL and excess steps, the note scores: ``note_balanced``
beside its attainable bound, precision, recall and coverage; repair rate,
stale and hazard claims per episode start, and ``acted_on_rate``: the hazard
claims the agent acted on, walking into the cell and dying there, per hazard
claim) and deaths by cause; and, where runs with and without memory share
lifetimes, the memory gain (``gain.py``). A record's value may carry the
episodes that acted on a hazard claim (``acted_on_counts``, from the score's
metadata, for logs whose counts lack them); without them ``acted_on_rate``
is NaN. Every score pools counts over the group's samples; an empty
denominator is NaN (the report prints "-").

    python -m spatialstale_evals.lifetime.tables LOG [LOG ...]

prints the tables of lifelong logs (grouped by model and regime).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pandas as pd

from spatialstale_evals.harness.score_counts import counts_of
from spatialstale_evals.lifetime.architecture import architecture_of, architecture_tables, keeps_notes
from spatialstale_evals.lifetime.gain import memory_gain_table, memory_of, spl_terms
from spatialstale_evals.lifetime.notes import DEATH_CAUSES
from spatialstale_evals.lifetime.scoring import pooled_ratio, ratio, totals
from spatialstale_evals.lifetime.shared import AUTHORS, PROPAGATION_KEYS, WRITERS

#: Grouping columns used when present, in this order.
#: (``config``: the report's label of every non-default task argument, so two configurations are never pooled.)
GROUPS = ("model", "config", "agent", "memory", "regime", "view_radius", "initial_memory", "history")
#: The summary table's scores (``scoring.RATIOS`` and ``scoring.BALANCED``).
SUMMARY = (
    "episode_success_rate", "episode_death_rate", "episode_timeout_rate", "episode_limit_rate", "spl",
    "excess_steps", "note_balanced", "note_attainable", "note_precision", "note_recall", "note_coverage",
    "repair_rate", "stale_claims", "hazard_claims", "conflicting_cells", "memory_bytes",
)  # fmt: skip
#: The tables by episode index: key -> the score.
BY_EPISODE = {
    "spl_by_episode": "spl",
    "success_by_episode": "episode_success_rate",
    "note_balanced_by_episode": "note_balanced",
}
#: The value key a report record adds from the episode records: episodes whose
#: death was on a hazard claim (``records.hazard_acted_on``).
ACTED_ON = "hazards_acted_on"


def _value(value: Any) -> Mapping[str, float]:
    return json.loads(value) if isinstance(value, str) else value


def _indices(summed: Mapping[str, float]) -> list[int]:
    return sorted(int(k.removeprefix("played_")) for k in summed if k.startswith("played_"))


def acted_on_counts(metadata: Mapping[str, Any]) -> dict[str, float]:
    """From a sample's score metadata (its episode records): the episodes
    that acted on a hazard claim, in all and per episode index (``_k``);
    nothing for records that do not say (logs written before they did)."""
    records = metadata.get("episodes") or []
    if not records or any("hazard_acted_on" not in r for r in records):
        return {}
    counts = {ACTED_ON: float(sum(bool(r["hazard_acted_on"]) for r in records))}
    counts |= {f"{ACTED_ON}_{r['episode']}": float(bool(r["hazard_acted_on"])) for r in records}
    return counts


def lifetime_tables(records: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The report's lifelong tables (module docstring): ``spl_by_episode``,
    ``success_by_episode``, ``note_balanced_by_episode``, ``summary``,
    ``deaths_by_cause``, ``memory_gain``, ``architectures``, ``architecture_tests`` (``architecture.py``)."""
    keys = [g for g in GROUPS if g in records.columns]
    groups = records.groupby(keys, dropna=False, sort=True) if keys else [((), records)]
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in (*BY_EPISODE, "summary", "deaths")}
    for key, frame in groups:
        label = dict(zip(keys, key if isinstance(key, tuple) else (key,)))
        summed = totals(_value(v) for v in frame["value"] if v is not None)
        ks = _indices(summed)
        for table, score in BY_EPISODE.items():
            rows[table].append(label | {k: pooled_ratio(summed, score, f"_{k}") for k in ks})
        summary = {name: pooled_ratio(summed, name) for name in SUMMARY}
        summary["acted_on_rate"] = ratio(summed.get(ACTED_ON, math.nan), summed.get("hazard_claims", 0.0))
        rows["summary"].append(label | {"lifetimes": len(frame), "episodes": summed.get("played", 0.0)} | summary)
        rows["deaths"].append(label | {c: summed.get(f"death_{c}", 0.0) for c in DEATH_CAUSES})
    index = keys or None

    def table(name: str) -> pd.DataFrame:
        frame = pd.DataFrame(rows[name])
        return frame.set_index(index) if index and not frame.empty else frame

    return {
        **{name: table(name) for name in BY_EPISODE},
        "summary": table("summary"),
        "deaths_by_cause": table("deaths"),
        "memory_gain": memory_gain_table(records),
        **architecture_tables(records),
    }


def _group_totals(records: pd.DataFrame | None) -> Iterator[tuple[dict[str, Any], pd.DataFrame, dict[str, float]]]:
    """Per group of the trust-gap view (model, config, regime ...): its label,
    its records and their sample counts summed (none for no records)."""
    if records is None or records.empty:
        return
    keys = [g for g in GROUPS if g in records.columns]
    groups = records.groupby(keys, dropna=False, sort=True) if keys else [((), records)]
    for key, frame in groups:
        label = dict(zip(keys, key if isinstance(key, tuple) else (key,)))
        yield label, frame, totals(_value(v) for v in frame["value"] if v is not None)


def hazard_rows(records: pd.DataFrame) -> pd.DataFrame:
    """The trust-gap view's lifelong rows, per group (model, config, regime
    ...): the hazard claims the episodes began with (SAFE claims on cells that
    were holes), how many the agent acted on (it stepped into such a cell and
    died there), that as a share of the hazard claims (``acted_on_rate``, NaN
    with none) and of the deaths (``death_on_hazard``, NaN with none)."""
    rows = []
    for label, frame, summed in _group_totals(records):
        acted, hazards, deaths = (summed.get(k, 0.0) for k in (ACTED_ON, "hazard_claims", "death"))
        rows.append(
            label
            | {
                "samples": len(frame),
                "episodes": summed.get("played", 0.0),
                "hazard_claims": hazards,
                "acted_on": acted if ACTED_ON in summed else math.nan,
                "acted_on_rate": ratio(summed.get(ACTED_ON, math.nan), hazards),
                "deaths": deaths,
                "death_on_hazard": ratio(summed.get(ACTED_ON, math.nan), deaths),
            }
        )
    return pd.DataFrame(rows)


def trust_rows(records: pd.DataFrame) -> pd.DataFrame:
    """The family's trust-gap rows: ``hazard_rows`` and, for ``memory=shared``
    runs, a row per (writer, reader) pair (``propagation_rows``)."""
    frames = [f for f in (hazard_rows(records), propagation_rows(records)) if not f.empty]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def propagation_rows(records: pd.DataFrame) -> pd.DataFrame:
    """The trust-gap view's rows of ``memory=shared`` runs (``hazard_rows``
    beside them): per group (model, config, regime ...) and (writer, reader)
    pair, the sample counts' propagation counts pooled (``prop_<writer>_<reader>_*``),
    and ``acted_on_rate``, acted on / stale read (NaN with none)."""
    rows = []
    for label, frame, summed in _group_totals(records):
        for writer in WRITERS:
            for reader in AUTHORS:
                prefix = f"prop_{writer}_{reader}_"
                if not any(k.startswith(prefix) for k in summed):
                    continue
                counts = {k: summed.get(prefix + k, 0.0) for k in PROPAGATION_KEYS}
                rows.append(label | {"writer": writer, "reader": reader, "samples": len(frame),
                                     "episodes": summed.get("played", 0.0), **counts,
                                     "acted_on_rate": ratio(counts["acted_on"], counts["stale_read"])})  # fmt: skip
    return pd.DataFrame(rows)


def records_from_logs(paths: Sequence[str]) -> pd.DataFrame:
    """One row per sample of lifelong logs: model, the task's grouping
    arguments, the lifetime, the sample's counts (``Score.metadata["counts"]``,
    or the score value of a log written before they moved there) and its
    episodes' exact SPL (``gain.spl_terms``)."""
    from inspect_ai.log import read_eval_log

    rows = []
    for path in paths:
        log = read_eval_log(path)
        args = log.eval.task_args or {}
        for sample in log.samples or []:
            score = (sample.scores or {}).get("lifelong_scorer")
            if score is not None:
                meta = score.metadata or {}
                value = dict(counts_of(score) or {}) | acted_on_counts(meta)
                rows.append(
                    {
                        "model": log.eval.model,
                        "memory": memory_of(args),
                        "architecture": architecture_of(args),
                        "keeps_notes": keeps_notes(args),
                        "regime": args.get("regime", "L2"),
                        "instance_id": str(sample.id),
                        "value": value,
                        "spl_terms": spl_terms(meta.get("episodes") or []),
                    }
                )
    return pd.DataFrame(rows)


def main(argv: Sequence[str]) -> int:
    tables = lifetime_tables(records_from_logs(argv))
    with pd.option_context("display.width", 200, "display.max_columns", 30, "display.precision", 3):
        for name, frame in tables.items():
            print(f"\n{name}\n{frame.to_string(na_rep='-')}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
