"""Lenient, counted parsing of model replies.

Nothing a model writes may crash a run, and nothing it gets wrong may be
silently miscounted: every reply parses to the judgements that could be
recovered plus exact counts of what could not. Pure Python (no Inspect), so
it can be fuzzed in isolation.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from spatialstale_evals.harness import prompts
from spatialstale_evals.harness.bounded_json import MAX_DEPTH, json_values
from spatialstale_evals.harness.numbers import MAX_DIGITS, NUMBER, TOO_LONG, bounded_int, bounded_number
from spatialstale_evals.world.grid import MOVE_ORDER
from spatialstale_evals.world.memory import DANGER, SAFE

TRUE_WORDS = {"true", "yes", "y", "1", "stale", "t"}
FALSE_WORDS = {"false", "no", "n", "0", "valid", "f", "not stale", "fresh"}
#: An entry id as a model may write it (``mem_021``, ``MEM-21``, ``note 3``):
#: matched by its kind and number, so ``mem_3`` and ``note_03`` stay apart.
#: Its number is bounded (``numbers.NUMBER``): ``mem_<4400 digits>`` is no id (an unknown one).
_ID = re.compile(rf"(mem|note)[_\- ]?({NUMBER})", re.IGNORECASE)


def _id_key(match: re.Match[str]) -> tuple[str, int]:
    return match.group(1).lower(), int(match.group(2))  # at most MAX_DIGITS digits: the pattern's bound


_REFUSAL = re.compile(
    r"\b(I\s*(?:can(?:'|no)?t|cannot|won'?t|am unable|'m unable|am not able|'m not able)|"
    r"I'm sorry|I am sorry|unable to (?:help|assist|comply|determine)|as an ai)\b",
    re.IGNORECASE,
)
_FENCE = re.compile(r"```(?:json|JSON)?")


@dataclass(frozen=True)
class Judgement:
    """One entry's verdict as the model gave it (the exact verdict JSON of docs/specification.md#detect)."""

    memory_id: str
    is_stale: bool
    confidence: float | None = None
    staleness: float | None = None
    reasoning: str = ""
    #: ``output="edit"``: the claim a stale verdict says holds now (SAFE or
    #: DANGER), None when it proposes none (or the verdict is not stale).
    corrected: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "memory_id": self.memory_id,
            "is_stale": self.is_stale,
            "confidence": self.confidence,
            "staleness": self.staleness,
            "reasoning": self.reasoning,
            **({"corrected": self.corrected} if self.corrected is not None else {}),
        }


@dataclass
class ParsedAudit:
    """What one audit reply said about the entries it was asked about."""

    judgements: dict[str, Judgement] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)
    unknown_ids: list[str] = field(default_factory=list)
    duplicate_ids: list[str] = field(default_factory=list)
    unparseable: bool = False
    refusal: bool = False

    @property
    def failures(self) -> int:
        """Entries of the batch with no usable verdict: omitted, unreadable or
        answered more than once. They are scored as not flagged."""
        return len(self.missing) + len(self.invalid)

    def counts(self) -> dict[str, int]:
        return {
            "parse_failures": self.failures,
            "missing": len(self.missing),
            "invalid": len(self.invalid),
            "unknown_ids": len(self.unknown_ids),
            "duplicate_ids": len(self.duplicate_ids),
            "unparseable_replies": int(self.unparseable),
            "refusals": int(self.refusal),
        }


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return {1: True, 0: False}.get(value)  # type: ignore[call-overload]
    if isinstance(value, str):
        word = value.strip().lower()
        if word in TRUE_WORDS:
            return True
        if word in FALSE_WORDS:
            return False
    return None


#: The longest text read as a number in [0, 1] (``"0.75"``, ``"75%"``): a longer one is unreadable.
_MAX_NUMBER_CHARS = 32


def _as_unit_float(value: Any) -> float | None:
    if isinstance(value, str):
        text = value.strip()
        if len(text) > _MAX_NUMBER_CHARS:
            return None
        try:
            number = float(text.rstrip("%")) / (100 if text.endswith("%") else 1)
        except ValueError:
            return None
    else:  # a bool, a number too long (numbers.TOO_LONG) or an int past float range is none
        found = bounded_number(value)
        if found is None:
            return None
        number = found
    if number != number or not 0.0 <= number <= 1.0:  # NaN or out of range
        return None
    return number


#: The words a proposed correction may say its claim with: the entry format's
#: claims, and what a model may write instead (a cell type, its letter).
_CLAIM_WORD = r"(safe|danger|dangerous|deadly|hole|ice|frozen|[HF])"
_CLAIM_WORDS = re.compile(rf"\b{_CLAIM_WORD}\b", re.IGNORECASE)
_DANGER_WORDS = {"danger", "dangerous", "deadly", "hole", "h"}
#: An edit written out: the claim after "with", "->", "to", "into", "now", "becomes".
_TRANSITION = re.compile(
    rf"(?:\bwith|->|\u2192|\bto|\binto|\bnow|\bbecomes?)\s+(?:an?\s+)?{_CLAIM_WORD}\b", re.IGNORECASE
)
#: A claim at the start, as the entry format writes it (``[mem_044] DANGER at (5,4): ...``),
#: or with a remark after it (``DANGER (previously SAFE)``); not ``ice or hole``.
_LEADING = re.compile(rf"^\s*(?:\[[^\]]*\]\s*)?{_CLAIM_WORD}\b(?=\s*(?:at\b|[(:,.;-]|$))", re.IGNORECASE)
_NEGATION = re.compile(r"\b(not|no longer|never|isn't|unsafe|non)\b", re.IGNORECASE)


def _claim(word: str) -> str:
    return DANGER if word.lower() in _DANGER_WORDS else SAFE


def read_claim(value: Any) -> str | None:
    """The claim a correction proposes, read leniently but never guessed:
    ``"DANGER"``, ``"hole"``, ``"H"``, an edit written out (``"replace SAFE at
    (3,4) with DANGER at (3,4)"``, ``"SAFE -> DANGER"``: the claim it goes to),
    a claim leading the text (``"DANGER at (3,4)"``, a whole entry line,
    ``"DANGER (previously SAFE)"``), or a text naming only one claim. A
    negated one (``"not safe"``), one naming both without saying which it
    goes to, or none at all is unreadable: None (counted as a flag without a
    correction, ``corrections_missing``). An object is read by its ``claim``
    (or ``corrected``, ``state``, ``type``) field."""
    if isinstance(value, dict):
        value = next((value[k] for k in ("claim", "corrected", "state", "type") if k in value), None)
    if not isinstance(value, str):
        return None
    if moves := _TRANSITION.findall(value):
        return _claim(moves[-1])
    if leading := _LEADING.match(value):
        return _claim(leading.group(1))
    if _NEGATION.search(value):
        return None
    claims = {_claim(word) for word in _CLAIM_WORDS.findall(value)}
    return claims.pop() if len(claims) == 1 else None


def _objects(text: str) -> list[dict[str, Any]]:
    """Every JSON object in ``text`` that looks like a judgement, in order.

    Decodes greedily at each ``{``, so it copes with prose around the JSON,
    code fences, several blocks, a list cut off mid-way (the complete objects
    before the cut survive) and wrapper objects like ``{"results": [...]}``.
    Bounded (``bounded_json``): an over-long reply or a value nested too deep
    yields nothing, in time linear in the reply.
    """
    found: list[dict[str, Any]] = []
    for value in json_values(text).values:
        found.extend(_flatten(value))
    return found


def _flatten(value: Any) -> Iterable[dict[str, Any]]:
    if isinstance(value, dict):
        if any(k in value for k in ("memory_id", "id", "entry_id")):
            yield value
        else:
            for inner in value.values():
                yield from _flatten(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _flatten(inner)


#: The stop reasons of a reply cut at a length limit (the output's, or the context window's).
CUT_STOP_REASONS = frozenset({"max_tokens", "model_length"})


def looks_like_refusal(text: str) -> bool:
    return bool(_REFUSAL.search(text or ""))


def parse_audit_reply(
    text: str | None,
    expected_ids: Sequence[str],
    output: str = "binary",
    threshold: float | None = None,
    refused: bool = False,
) -> ParsedAudit:
    """Judgements for ``expected_ids`` from a reply, with counted failures.

    ``output="binary"`` reads ``is_stale``; ``"continuous"`` reads a
    ``staleness`` in [0, 1] and flags it when ``staleness >= threshold``
    (which ``continuous`` requires: the task's default is its ``threshold``);
    ``"edit"`` reads ``is_stale`` and, on a stale verdict, the ``corrected``
    claim (``read_claim``; a correction on a valid verdict is ignored).
    ``refused`` marks a provider-level refusal (e.g. a content filter).
    """
    if output == "continuous" and threshold is None:
        raise ValueError("continuous output needs a threshold")
    text = (text if isinstance(text, str) else "").replace("\u2019", "'")
    by_number = {}
    for eid in expected_ids:
        match = _ID.fullmatch(eid)
        by_number[_id_key(match) if match else eid] = eid
    parsed = ParsedAudit()
    objects = _objects(_FENCE.sub("", text))
    seen: set[str] = set()
    for obj in objects:
        raw_id = obj.get("memory_id", obj.get("id", obj.get("entry_id")))
        match = _ID.search(str(raw_id)) if raw_id is not None else None
        eid = by_number.get(_id_key(match)) if match else None
        if eid is None:
            parsed.unknown_ids.append(str(raw_id))
            continue
        if eid in seen:
            parsed.duplicate_ids.append(eid)
            continue
        seen.add(eid)
        staleness = None
        if output == "continuous":
            staleness = _as_unit_float(obj.get("staleness", obj.get("score")))
            flagged = None if staleness is None else staleness >= threshold
        else:
            flagged = _as_bool(obj.get("is_stale", obj.get("stale")))
        if flagged is None:
            parsed.invalid.append(eid)
            continue
        reasoning = obj.get("reasoning", "")
        corrected = read_claim(obj.get("corrected", obj.get("correction"))) if output == "edit" and flagged else None
        parsed.judgements[eid] = Judgement(
            memory_id=eid,
            is_stale=flagged,
            confidence=_as_unit_float(obj.get("confidence")),
            staleness=staleness,
            reasoning=reasoning if isinstance(reasoning, str) else json.dumps(reasoning),
            corrected=corrected,
        )
    # An entry answered twice has no single verdict: a parse failure, not flagged.
    for eid in dict.fromkeys(parsed.duplicate_ids):
        parsed.judgements.pop(eid, None)
        if eid not in parsed.invalid:
            parsed.invalid.append(eid)
    parsed.missing = [eid for eid in expected_ids if eid not in seen]
    parsed.unparseable = not objects
    parsed.refusal = refused or (not parsed.judgements and looks_like_refusal(text))
    return parsed


class _TooDeep:
    """Stands in, in a message, for a value nested too deep to print."""

    def __repr__(self) -> str:
        return f"<a value nested over {MAX_DEPTH} deep>"


#: The most characters of a bad argument shown back in a problem's text.
_SHOWN_CHARS = 60


def _printable(value: Any) -> Any:
    """``value`` itself, unless it nests deeper than ``MAX_DEPTH`` (its ``repr`` would
    recurse once per level) or holds an integer too long to print (``str()`` refuses
    over 4,300 digits): then a stand-in saying so. A string is cut to ``_SHOWN_CHARS``
    (it is echoed to the model in the fallback's text and kept in the record)."""
    if isinstance(value, str) and len(value) > _SHOWN_CHARS:
        return value[:_SHOWN_CHARS] + "..."
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, int) and _cell_number(item) is None and not isinstance(item, bool):
            return TOO_LONG
        if isinstance(item, (list, tuple, dict)):
            if depth >= MAX_DEPTH:
                return _TooDeep()
            stack.extend((inner, depth + 1) for inner in (item.values() if isinstance(item, dict) else item))
    return value


@dataclass(frozen=True)
class MoveChoice:
    """The action a navigation reply yields, or why it yields none."""

    direction: str | None
    problem: str | None
    extra_calls: int


def parse_move(tool_calls: Sequence[Any] | None) -> MoveChoice:
    """The first tool call, if it is a valid ``move``; later calls are counted
    and ignored (one move per decision).

    ``tool_calls`` are objects with ``function``, ``arguments`` (a dict) and an
    optional ``parse_error`` (Inspect's ToolCall).
    """
    calls = list(tool_calls or [])
    if not calls:
        return MoveChoice(None, prompts.NO_TOOL_CALL, 0)
    first, extra = calls[0], len(calls) - 1
    function = getattr(first, "function", None)
    if function != "move":
        return MoveChoice(None, prompts.UNKNOWN_TOOL.format(function=function), extra)
    if getattr(first, "parse_error", None):
        return MoveChoice(None, prompts.UNPARSEABLE_ARGUMENTS.format(error=first.parse_error), extra)
    arguments = getattr(first, "arguments", None)
    if not isinstance(arguments, dict) or "direction" not in arguments:
        return MoveChoice(None, prompts.NO_DIRECTION, extra)
    value = arguments["direction"]
    direction = value.strip().upper() if isinstance(value, str) else None
    if direction not in MOVE_ORDER:
        return MoveChoice(None, prompts.INVALID_DIRECTION.format(value=_printable(value)), extra)
    return MoveChoice(direction, None, extra)


# -- probe answers (the ``probe`` task) ------------------------------------------------

#: How a probe's answer field reads as a yes/no: ``state`` SAFE/DANGER (is the
#: cell safe?), ``premise_holds`` true/false.
_ANSWER_WORDS: dict[str, dict[str, bool]] = {
    "state": {"safe": True, "frozen": True, "ice": True, "danger": False, "dangerous": False, "hole": False},
    "premise_holds": {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False},
}


@dataclass(frozen=True)
class ProbeAnswer:
    """The yes/no a probe reply gives (``value``), or why it gives none (``problem``)."""

    value: bool | None
    problem: str | None = None
    reply: dict[str, Any] = field(default_factory=dict)


def all_objects(text: str) -> list[dict[str, Any]]:
    """Every JSON object in ``text``, outer ones before those nested in them
    (prose and code fences around the JSON allowed; bounded as ``_objects`` is)."""
    found: list[dict[str, Any]] = []
    for value in json_values(text).values:
        queue = deque([value])
        while queue:
            item = queue.popleft()
            if isinstance(item, dict):
                found.append(item)
                queue.extend(item.values())
            elif isinstance(item, list):
                queue.extend(item)
    return found


def _cell_number(value: Any) -> int | None:
    """One coordinate as a model may write it (``2``, ``2.0``, ``"2"``), within
    ``MAX_DIGITS`` digits; None for anything else (``2.5``, a bool, a longer number)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if -(10**MAX_DIGITS) < value < 10**MAX_DIGITS else None
    if isinstance(value, float):
        return int(value) if value.is_integer() and abs(value) < 10**MAX_DIGITS else None
    return bounded_int(value) if isinstance(value, str) else None


def _read_cell(value: Any) -> tuple[int, int] | None:
    """A cell as a model may write it: ``[2, 5]``, ``"(2,5)"``, ``{"row": 2, "col": 5}``;
    None when it is not two bounded integers (``numbers.MAX_DIGITS``)."""
    if isinstance(value, dict):
        value = [value.get("row", value.get("r")), value.get("col", value.get("c"))]
    if isinstance(value, str):
        value = re.findall(r"-?\d+", value)
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        return None
    r, c = (_cell_number(v) for v in value)
    return None if r is None or c is None else (r, c)


def parse_probe_answer(
    text: str | None, answer_field: str, cell: tuple[int, int], refused: bool = False
) -> ProbeAnswer:
    """The first JSON object holding ``answer_field`` (a key of
    ``_ANSWER_WORDS``), read leniently; a ``cell`` in it must be the one asked
    about. Never raises: a reply without a usable answer says why."""
    text = text or ""
    objects = [o for o in all_objects(text) if answer_field in {str(k).lower() for k in o}]
    if not objects:
        if refused or looks_like_refusal(text):
            return ProbeAnswer(None, "refusal")
        return ProbeAnswer(None, f"no JSON object with {answer_field!r}")
    reply = {str(k).lower(): v for k, v in objects[0].items()}
    raw = reply[answer_field]
    words = _ANSWER_WORDS[answer_field]
    if isinstance(raw, bool):
        value = raw if answer_field != "state" else None
    elif isinstance(raw, (int, float)):
        value = {1: True, 0: False}.get(raw) if answer_field != "state" else None  # type: ignore[call-overload]
    else:
        value = words.get(str(raw).strip().lower())
    if value is None:
        return ProbeAnswer(None, f"unreadable {answer_field!r}: {str(raw)[:40]!r}", reply)
    if reply.get("cell") is not None and _read_cell(reply["cell"]) != tuple(cell):
        return ProbeAnswer(None, f"answered about another cell: {str(reply['cell'])[:20]}", reply)
    return ProbeAnswer(value, None, reply)
