"""What the stale task's scorer and metrics add in the memory-tool setting
(``memory_access.py``): the retrieval evidence as counts, a paragraph of the
explanation, and the ratios that split the judge's verdicts by retrieval.

An answer is counted as *with the new state read* when the file of the
newest relevant session (the one that holds the new state,
``relevant_session_index``'s last) had been read before it. A failure with it
read is an arbitration failure (the agent saw the update and still answered
from the old fact); a failure without it, a retrieval failure (it never
looked where the update was). Nothing here is added in the prompt setting,
whose samples and scores stay as they were.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from spatialstale_evals.harness.counts import ratio
from spatialstale_evals.stale_corpus.corpus import STALE_DIMENSIONS, STALE_TYPES

#: The count of whether dimension ``{dimension}``'s answer came after the new state was read.
READ_KEY = "{dimension}_new_state_read"


def memory_counts(answers: Mapping[str, Mapping[str, Any]]) -> dict[str, float | int]:
    """A scenario's memory counts (none for answers of the prompt setting): the
    agent's model and memory calls, the calls refused and failed, the distinct
    files read and the bytes read over its probes, and per answered dimension
    whether the session holding the new state had been read (``dim1_new_state_read``)."""
    used = {d: a["memory"] for d, a in answers.items() if "memory" in a}
    if not used:
        return {}
    return {
        "model_calls": sum(int(answers[d].get("model_calls", 0)) for d in used),
        "memory_calls": sum(m["calls"] for m in used.values()),
        "memory_refused": sum(m["refused"] for m in used.values()),
        "memory_failed": sum(m["failed"] for m in used.values()),
        "files_read": len({f for m in used.values() for f in m["files_read"]}),
        "bytes_read": sum(m["bytes_read"] for m in used.values()),
        **{READ_KEY.format(dimension=d): int(m["new_state_read"]) for d, m in used.items()},
    }


def memory_lines(meta: Mapping[str, Any], answers: Mapping[str, Mapping[str, Any]]) -> str:
    """The explanation's paragraph on retrieval (empty in the prompt setting):
    per answer, its memory calls and which relevant sessions it had read."""
    used = {d: a["memory"] for d, a in answers.items() if "memory" in a}
    if not used:
        return ""
    relevant = list(meta.get("relevant_sessions") or [])
    newest = max(relevant, default=None)
    lines = [f"Memory (relevant sessions {', '.join(map(str, relevant))}; {newest} holds the new state):"]
    for d, m in used.items():
        read = ", ".join(map(str, m["relevant_read"])) or "none"
        refused = f", {m['refused']} refused" if m["refused"] else ""
        lines.append(
            f"- {d}: {m['calls']} memory call(s){refused}, {len(m['files_read'])} file(s) read; "
            f"relevant sessions read before the answer: {read}"
        )
    return "\n".join(lines)


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        return None
    return float(value)


def answers_of(values: Sequence[Mapping[str, Any]]) -> list[tuple[float | None, float]]:
    """Every tool-setting answer of ``values``: (its verdict, 1.0 pass, 0.0 fail,
    None unjudged; whether the new state had been read)."""
    found = []
    for value in values:
        for d in STALE_DIMENSIONS:
            read = _number(value.get(READ_KEY.format(dimension=d)))
            if read is None:
                continue
            cell = next((value[k] for t in STALE_TYPES if (k := f"{d}_{t}") in value), None)
            found.append((_number(cell), read))
    return found


def read_rate(values: Sequence[Mapping[str, Any]]) -> float | None:
    """Answers given after the new state was read, over the answers."""
    found = answers_of(values)
    return ratio(sum(read for _, read in found), len(found))


def accuracy_when(read: bool) -> Callable[[Sequence[Mapping[str, Any]]], float | None]:
    """Passed / judged answers among those with (``read``) or without the new state read."""

    def compute(values: Sequence[Mapping[str, Any]]) -> float | None:
        weights = [(cell, r if read else 1 - r) for cell, r in answers_of(values) if cell is not None]
        return ratio(sum(cell * w for cell, w in weights), sum(w for _, w in weights))

    return compute


def per_scenario(key: str) -> Callable[[Sequence[Mapping[str, Any]]], float | None]:
    """The mean of a per-scenario count over the scenarios that have it."""

    def compute(values: Sequence[Mapping[str, Any]]) -> float | None:
        found = [float(v[key]) for v in values if key in v]
        return ratio(sum(found), len(found))

    return compute


#: The ratios of the memory-tool setting by metric name (``scoring.py`` registers them; the report uses them too).
RETRIEVAL_RATIOS: dict[str, Callable[[Sequence[Mapping[str, Any]]], float | None]] = {
    "new_state_read_rate": read_rate,
    "accuracy_new_state_read": accuracy_when(True),
    "accuracy_new_state_unread": accuracy_when(False),
    "memory_calls_per_scenario": per_scenario("memory_calls"),
}
