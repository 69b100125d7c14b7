"""Reading a judge's reply in the ``stale`` task (docs/specification.md#stale), leniently and
without raising, as ``parsing.py`` reads the agents' replies: pure Python, so
it can be fuzzed. A dimension without a readable verdict is None (the scorer
leaves it unscored) and the reason is said."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from spatialstale_evals.harness.parsing import all_objects, looks_like_refusal

#: How a judge may write a dimension's verdict: ``true``, ``"pass"``, ``"FAIL"``, 1 ...
_VERDICT_WORDS = {"pass": True, "passed": True, "true": True, "yes": True, "1": True}
_VERDICT_WORDS |= {"fail": False, "failed": False, "false": False, "no": False, "0": False}
_VERDICT_KEYS = ("pass", "passed", "verdict", "result", "score")


@dataclass(frozen=True)
class StaleJudgement:
    """The pass / fail a judge reply gives each dimension (None: no usable
    verdict), the reasoning it gave, and what was wrong when some verdict is missing."""

    passes: dict[str, bool | None]
    reasons: dict[str, str] = field(default_factory=dict)
    problem: str | None = None

    @property
    def failed(self) -> bool:
        return any(v is None for v in self.passes.values())


def _verdict(value: Any) -> bool | None:
    if isinstance(value, dict):
        lowered = {str(k).lower(): v for k, v in value.items()}
        return next((_verdict(lowered[k]) for k in _VERDICT_KEYS if k in lowered), None)
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return {1: True, 0: False}.get(value)  # type: ignore[call-overload]
    return _VERDICT_WORDS.get(str(value).strip().lower()) if isinstance(value, str) else None


def judge_key(dimension: str) -> str:
    """The key STALE's judge writes a dimension's verdict under: ``dim1_eval``."""
    return f"{dimension}_eval"


def _dimension_value(objects: list[dict[str, Any]], dimension: str) -> Any:
    """What the first of ``objects`` that names ``dimension`` says of it: STALE's own
    judge shape ``{"dim1_eval": {"reasoning": ..., "pass": ...}}``, or
    ``"dim1"``/``"dim1_pass"`` keys, or ``{"dimension": "dim1", "pass": ...}``."""
    keys = (judge_key(dimension), dimension, f"{dimension}_pass", f"{dimension}_result")
    for obj in objects:
        lowered = {str(k).lower(): v for k, v in obj.items()}
        found = next((lowered[k] for k in keys if k in lowered), None)
        if found is not None:
            return found
        if str(lowered.get("dimension", "")).lower() == dimension:
            return obj
    return None


def parse_stale_judgement(text: str | None, dimensions: Sequence[str], refused: bool = False) -> StaleJudgement:
    """Each asked dimension's verdict from a judge reply, read leniently (prose
    and fences around the JSON allowed). Never raises: a dimension without a
    verdict is None and ``problem`` says why (an empty reply, a refusal, no
    JSON, or which dimensions had none)."""
    text = text or ""
    objects = all_objects(text)[::-1]  # the last verdict first: a judge may quote the rubric's example
    values = {d: _dimension_value(objects, d) for d in dimensions}
    passes = {d: None if v is None else _verdict(v) for d, v in values.items()}
    reasons = {
        d: str(next((v[k] for k in ("reasoning", "reason") if k in v), ""))
        for d, v in values.items()
        if isinstance(v, dict)
    }
    if all(p is not None for p in passes.values()):
        return StaleJudgement(passes, reasons)
    if not text.strip():
        problem = "empty reply"
    elif refused or (not objects and looks_like_refusal(text)):
        problem = "refusal"
    elif not objects:
        problem = "no JSON object in the reply"
    else:
        problem = "no readable verdict for " + ", ".join(d for d, p in passes.items() if p is None)
    return StaleJudgement(passes, reasons, problem)
