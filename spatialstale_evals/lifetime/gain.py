"""The memory gain: what the notes are worth to an agent, from two runs of
the ``lifelong`` task that differ only in ``memory`` (``notes``, the default,
or any other arm of ``arms.MEMORY_ARMS``, against ``none``: no memory tool,
no mention of notes).

Per model, configuration (its label without ``memory=...``), regime and
memory arm, the lifetimes both runs played are paired, and for each of SPL,
success and deaths (per-lifetime means over its episodes, as exact
fractions) the gain is with minus without, tested with the exact signed-rank test
(``harness.significance.exact_signed_rank``: the exact null distribution of
the rank sum, ties included, at any number of lifetimes), Holm's adjustment
over the tests of a (model, configuration, regime) cell (three per arm), as
the report adjusts navigate's strategy tests within a cell.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import pandas as pd

from spatialstale_evals import paper
from spatialstale_evals.harness.significance import exact_signed_rank, holm
from spatialstale_evals.lifetime.arms import DEFAULT_MEMORY, MEMORY_ARMS, MEMORY_PARAMETERS
from spatialstale_evals.lifetime.measures import spl_fraction
from spatialstale_evals.world.env import SUCCESS

#: The task argument, and the arm every other is measured against.
MEMORY, WITHOUT = "memory", "none"
if WITHOUT not in MEMORY_ARMS or MEMORY_ARMS[WITHOUT].tool:
    raise RuntimeError(f"memory={WITHOUT} is no longer the arm without memory (arms.MEMORY_ARMS)")
#: The gains tested: name -> the count of the lifetime's episodes it averages (SPL: its exact terms).
GAINS = {"spl": "spl", "success": "success", "deaths": "death"}
CELL = ("model", "config", "regime")


def spl_terms(episodes: Sequence[Mapping[str, Any]]) -> list[str]:
    """The exact SPL of each episode of a lifetime's records (``"7/8"``); none
    for records of a log written before they had the shortest path."""
    terms = []
    for r in episodes:
        if "shortest" in r:
            spl = spl_fraction(r["outcome"] == SUCCESS, int(r["steps"]), r["shortest"])
            terms += [] if spl is None else [str(spl)]
    return terms


def base_config(config: Any) -> str:
    """A configuration label without its memory architecture (``memory=...`` and
    the other ``arms.MEMORY_PARAMETERS``; ``config_label``'s ``key=value`` parts)."""
    return ", ".join(p for p in str(config or "").split(", ") if p and p.split("=", 1)[0] not in MEMORY_PARAMETERS)


def default_memory() -> str:
    """The task's default ``memory`` (``arms.DEFAULT_MEMORY``, its signature's default)."""
    return DEFAULT_MEMORY


def memory_of(record: Mapping[str, Any]) -> str:
    """The ``memory`` a record's run (or task arguments) had; the default for a log that names none."""
    value = record.get(MEMORY)
    return default_memory() if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


def _value(value: Any) -> Mapping[str, float]:
    return json.loads(value) if isinstance(value, str) else value


def _exact(x: float) -> Fraction:
    """A summed count as a fraction (counts are whole; an epochs' mean has a small denominator)."""
    return Fraction(x).limit_denominator(10**6)


def lifetime_rates(frame: pd.DataFrame) -> dict[str, dict[str, Fraction]]:
    """Per lifetime (``instance_id``, its epochs pooled): each gain's mean over
    its episodes as an exact fraction (SPL from its exact terms when the record
    has them, else the summed float)."""
    out: dict[str, dict[str, Fraction]] = {}
    for lifetime, rows in frame.groupby("instance_id", sort=True):
        values = [_value(v) for v in rows["value"]]
        played = sum(v.get("played", 0.0) for v in values)
        if not played:
            continue
        terms = [t for ts in rows["spl_terms"] if isinstance(ts, list) for t in ts] if "spl_terms" in rows else []
        rates = {gain: _exact(sum(v.get(key, 0.0) for v in values)) / _exact(played) for gain, key in GAINS.items()}
        if terms:  # SPL's exact terms (a record of a log that has them)
            rates["spl"] = sum((Fraction(t) for t in terms), Fraction(0)) / len(terms)
        out[str(lifetime)] = rates
    return out


def memory_gain_table(records: pd.DataFrame, alpha: float = paper.ALPHA) -> pd.DataFrame:
    """One row per (model, configuration, regime, memory arm, gain) where runs
    with the arm and without memory share lifetimes: the lifetimes paired, the
    mean with and without, the gain, the test's statistic, p and Holm-adjusted p."""
    if records is None or records.empty or "instance_id" not in records.columns:
        return pd.DataFrame()
    frame = records.assign(
        config=records["config"].map(base_config) if "config" in records.columns else "",
        memory=[memory_of(r) for r in records.to_dict("records")],
    )
    if "architecture" in frame.columns:  # each architecture its own arm (``memory=transcript, compaction=trim``)
        frame = frame.assign(memory=[a.removeprefix(f"{MEMORY}=") for a in frame["architecture"]])
    keys = [k for k in CELL if k in frame.columns]
    rows: list[dict[str, Any]] = []
    for key, g in frame.groupby(keys, sort=True, dropna=False):
        without = lifetime_rates(g[g["memory"] == WITHOUT])
        cell = dict(zip(keys, key if isinstance(key, tuple) else (key,)))
        family = []
        for arm in [m for m in MEMORY_ARMS if m != WITHOUT and m in set(g["memory"])] + sorted(
            set(g["memory"]) - set(MEMORY_ARMS)
        ):
            with_ = lifetime_rates(g[g["memory"] == arm])
            shared = sorted(set(with_) & set(without))
            for gain in GAINS if shared else ():
                t = exact_signed_rank([with_[s][gain] for s in shared], [without[s][gain] for s in shared])
                family.append(
                    cell | {
                        "memory": arm, "gain": gain, "lifetimes": t.n_pairs, "differing": t.n_nonzero,
                        "with": t.mean_a, "without": t.mean_b, "memory_gain": t.mean_diff, "statistic": t.statistic,
                        "method": t.method or t.note, "pvalue": t.pvalue,
                    }  # fmt: skip
                )
        for row, adjusted in zip(family, holm([r["pvalue"] for r in family])):
            row["pvalue_holm"] = adjusted
            row["significant"] = bool(adjusted < alpha) if not math.isnan(adjusted) else False
        rows += family
    return pd.DataFrame(rows)
