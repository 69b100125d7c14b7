"""Several files of one eval: which copy the report reads, and why the others not.

Files share an ``eval_id`` when a log is copied (two folders merged, a backup
beside the original) and when ``inspect eval-retry`` writes a new log of a
failed eval (it carries the finished samples over). Their headers may agree
while their samples do not: a copy can be truncated or damaged past its
header, or hold fewer samples than the retry. So the copies of one eval are
all read first, and the most complete readable one is kept: the most usable
samples (scored, no error), then the best-first order the log table already
has (complete before partial, newer before older). Every other copy is set
aside with the reason, for the report's list of skipped files. Deciding by
the header alone (as before) let a damaged copy hide a good one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd
from inspect_ai.log import EvalLog

#: Reads one log's samples (``records.read_samples``); raises when it cannot.
Reader = Callable[[str, str], pd.DataFrame]


def batches(headers: Sequence[EvalLog]) -> list[list[EvalLog]]:
    """``headers`` in batches with no eval id twice (the first copy of each, the
    second, ...): ``evals_df`` keeps one row per eval id, so the log table is
    built a batch at a time to keep a row for every copy."""
    out: list[list[EvalLog]] = []
    seen: dict[str, int] = {}
    for header in headers:
        k = seen[header.eval.eval_id] = seen.get(header.eval.eval_id, -1) + 1
        if k == len(out):
            out.append([])
        out[k].append(header)
    return out


def usable(samples: pd.DataFrame) -> int:
    """Samples that count: no error, and a score."""
    return sum(1 for s in samples.itertuples() if not s.error and s.value is not None)


def unreadable(exc: Exception) -> str:
    return f"unreadable samples ({type(exc).__name__}: {str(exc)[:200]})"


def choose_copies(
    evals: pd.DataFrame, read: Reader
) -> tuple[pd.DataFrame, list[tuple[str, str]], dict[str, pd.DataFrame]]:
    """``evals`` (best first, as ``logs.eval_table`` orders it) with one row per
    eval id; the ``(path, reason)`` of every copy set aside; and the samples of
    the copies kept, already read (by path). When no copy of an eval can be
    read, the first is kept (its reading fails again, and is reported, as a
    single unreadable log's is) and the others are set aside with their errors."""
    if evals.empty:
        return evals, [], {}
    aside: list[tuple[str, str]] = []
    kept: dict[str, pd.DataFrame] = {}
    drop: list[Any] = []
    for eval_id, group in evals.groupby("eval_id", sort=False):
        if len(group) == 1:
            continue
        found: dict[str, pd.DataFrame] = {}
        errors: dict[str, str] = {}
        for row in group.itertuples():
            try:
                found[row.log] = read(row.log, row.family)
            except Exception as exc:  # noqa: BLE001 - a copy that cannot be read is set aside, not fatal
                errors[row.log] = unreadable(exc)
        # max() keeps the first of equals: the table's best-first order breaks ties
        keep = max(found, key=lambda log: usable(found[log])) if found else group["log"].iloc[0]
        if keep in found:
            kept[keep] = found[keep]
        for row in group.itertuples():
            if row.log == keep:
                continue
            this = errors.get(row.log) or f"{usable(found[row.log])} usable sample(s)"
            used = f"{usable(found[keep])} usable sample(s)" if keep in found else "unreadable too"
            why = f"another copy of eval {eval_id} was read instead ({keep}: {used}); this copy: {this}"
            aside.append((row.log, why))
            drop.append(row.Index)
    return evals.drop(index=drop).reset_index(drop=True), aside, kept
