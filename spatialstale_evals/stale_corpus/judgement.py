"""Reading a judge's reply in the ``stale`` task (docs/specification.md#stale), leniently and
without raising, as ``parsing.py`` reads the agents' replies: pure Python, so
it can be fuzzed.

The verdict is the reply's own top-level JSON value that gives a readable
verdict for every dimension asked: an object (STALE's judge shape
``{"dim1_eval": {"reasoning", "pass"}, ...}`` or ``{"dim1": "pass", ...}``) or
a list of ``{"dimension": "dim1", "pass": ...}`` objects. Objects nested in
another value are never read as the verdict, nor is the rubric's own example
(``prompts.STALE_JUDGE_SYSTEM``) when a judge quotes it, before or after its
verdict. Two complete verdicts that disagree leave the reply without one. A
reply without a complete verdict is a failed judgement: the scorer leaves
the whole scenario unscored; what partial verdicts it held are kept for the
record, and the reason is said."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from spatialstale_evals.harness.bounded_json import json_values
from spatialstale_evals.harness.parsing import looks_like_refusal
from spatialstale_evals.stale_corpus import prompts

#: How a judge may write a dimension's verdict: ``true``, ``"pass"``, ``"FAIL"``, 1 ...
_VERDICT_WORDS = {"pass": True, "passed": True, "true": True, "yes": True, "1": True}
_VERDICT_WORDS |= {"fail": False, "failed": False, "false": False, "no": False, "0": False}
_VERDICT_KEYS = ("pass", "passed", "verdict", "result", "score")


def rubric_example() -> Any:
    """The example verdict the rubric shows the judge (its last line), as JSON."""
    return json.loads(prompts.STALE_JUDGE_SYSTEM.strip().splitlines()[-1])


_EXAMPLE = rubric_example()


@dataclass(frozen=True)
class StaleJudgement:
    """The pass / fail a judge reply gives each dimension (None: no usable
    verdict), the reasoning it gave, and what was wrong when some verdict is missing."""

    passes: dict[str, bool | None]
    reasons: dict[str, str] = field(default_factory=dict)
    problem: str | None = None

    @property
    def failed(self) -> bool:
        return self.problem is not None or any(v is None for v in self.passes.values())


def _verdict(value: Any) -> bool | None:
    if isinstance(value, dict):
        lowered = {str(k).lower(): v for k, v in value.items()}
        return next((_verdict(lowered[k]) for k in _VERDICT_KEYS if k in lowered), None)
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return {1: True, 0: False}.get(value)  # type: ignore[call-overload]
    return _VERDICT_WORDS.get(str(value).strip().lower()) if isinstance(value, str) else None


_FENCE = re.compile(r"```(?:json|JSON)?")


def judge_key(dimension: str) -> str:
    """The key STALE's judge writes a dimension's verdict under: ``dim1_eval``."""
    return f"{dimension}_eval"


def top_level_values(text: str) -> list[Any]:
    """Every JSON object that stands on its own in ``text`` (prose and code fences
    around allowed), in order, what is nested in one not listed apart; or, for a
    reply that is one JSON array (a list of per-dimension verdicts), that array.
    Read within the bounds of ``harness/bounded_json.py`` (size, depth, linear
    time): a reply past them has no values, so no verdict."""
    stripped = _FENCE.sub("", text).strip()
    if stripped.startswith("[") and "]" in stripped:
        # the array decoded through the same bounded reader, as the one field of an object
        wrapped = json_values('{"verdicts": ' + stripped[: stripped.rfind("]") + 1] + "}").values
        if wrapped and isinstance(wrapped[0], dict) and isinstance(wrapped[0].get("verdicts"), list):
            return [wrapped[0]["verdicts"]]
    return [value for value in json_values(text).values if isinstance(value, dict)]


def _dimension_value(candidate: dict[str, Any] | list[Any], dimension: str) -> Any:
    """What one candidate verdict says of ``dimension``: an object's ``dim1_eval`` /
    ``dim1`` / ``dim1_pass`` / ``dim1_result`` key, or a list's ``{"dimension": "dim1", ...}`` item."""
    if isinstance(candidate, list):
        items = [i for i in candidate if isinstance(i, dict)]
        return next((i for i in items if str(i.get("dimension", "")).lower() == dimension), None)
    lowered = {str(k).lower(): v for k, v in candidate.items()}
    keys = (judge_key(dimension), dimension, f"{dimension}_pass", f"{dimension}_result")
    return next((lowered[k] for k in keys if k in lowered and lowered[k] is not None), None)


def _read(candidate: dict[str, Any] | list[Any], dimensions: Sequence[str]) -> tuple[dict, dict]:
    values = {d: _dimension_value(candidate, d) for d in dimensions}
    passes = {d: None if v is None else _verdict(v) for d, v in values.items()}
    reasons = {
        d: str(next((v[k] for k in ("reasoning", "reason") if k in v), ""))
        for d, v in values.items()
        if isinstance(v, dict)
    }
    return passes, reasons


def parse_stale_judgement(text: str | None, dimensions: Sequence[str], refused: bool = False) -> StaleJudgement:
    """Each asked dimension's verdict from a judge reply's own top-level verdict
    (the module docstring says which). Never raises: without a complete verdict
    the judgement is failed and ``problem`` says why (an empty reply, a refusal,
    no JSON, conflicting verdicts, or which dimensions had none)."""
    text = text or ""
    candidates = [v for v in top_level_values(text) if v != _EXAMPLE]
    read = [_read(c, dimensions) for c in candidates]
    complete = [(p, r) for p, r in read if all(v is not None for v in p.values())]
    if complete and all(p == complete[0][0] for p, _ in complete):
        return StaleJudgement(*complete[0])
    if complete:
        return StaleJudgement(dict.fromkeys(dimensions), problem="conflicting verdicts in one reply")
    best = max(read, key=lambda pr: sum(v is not None for v in pr[0].values()), default=(dict.fromkeys(dimensions), {}))
    passes, reasons = best
    if not text.strip():
        problem = "empty reply"
    elif refused or (not candidates and looks_like_refusal(text)):
        problem = "refusal"
    elif not candidates:
        problem = "no JSON object in the reply"
    else:
        problem = "no readable verdict for " + ", ".join(d for d, p in passes.items() if p is None)
    return StaleJudgement(passes, reasons, problem)
