"""Model output made safe to log and to use, where it enters the harness.

Inspect writes its log as UTF-8 JSON through pydantic, and two things a
provider may send cannot be written: a string holding a lone surrogate
(``\\ud800``: what a model's tokenizer, an OpenAI-compatible server or a
corpus file may hand us; ``json.loads`` accepts one) and a value nested deeper
than pydantic serialises (about 255 levels: "Circular reference detected
(depth exceeded)"). Either one in a message, the store or an event makes the
sample's log write fail, and with it the whole eval. Inspect (0.3.285) has no
public place to clean a reply before it is logged (its hooks observe, they do
not rewrite; no ``GenerateConfig`` option does it), so every model reply (its
text, reasoning and tool calls) and every corpus text passes through here as
it arrives, before the harness puts any of it in a message, the store or an
event of its own:

* a surrogate pair is joined into the character it stands for, and each lone
  surrogate becomes U+FFFD (the replacement character);
* a value inside a tool call's arguments nested deeper than
  ``bounded_json.MAX_DEPTH`` becomes a short string saying so (``TOO_DEEP``).

Nothing else is touched, so output that was already loggable comes out
identical (the same object). Each replacement (a character or a value) is
counted in the sample's store (``REPLACED_KEY``, ``unloggable_replaced``).

A reply with no choices at all (a provider's empty answer) is a failed turn,
not an ``IndexError``: it comes out as one empty assistant message (which every
family's parser reads as no answer: a fallback step, an unparseable audit, an
unanswered probe), counted under ``EMPTY_KEY``. Both counts are written to the
sample's metadata by ``record_replacements``, only when non-zero, so a clean
sample's metadata is unchanged.

What Inspect records itself from the provider (the model event's raw output)
is outside the harness's reach: docs/scoring.md ("Output the log cannot
hold") gives the failure and the recovery (``inspect eval-retry``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from inspect_ai.model import ChatCompletionChoice, ChatMessageAssistant, ModelOutput
from inspect_ai.util import store

from spatialstale_evals.harness.bounded_json import MAX_DEPTH

#: The sample store key and metadata key of the count of characters and values replaced.
REPLACED_KEY = "unloggable_replaced"
#: The sample store key and metadata key of the count of replies with no choices.
EMPTY_KEY = "empty_outputs"
REPLACEMENT = "\ufffd"
#: Every per-sample tally written to the sample's metadata (when non-zero): these two,
#: and those other modules register (``register_tally``: the memory quota's refusals).
TALLY_KEYS: list[str] = [REPLACED_KEY, EMPTY_KEY]
#: What a value nested deeper than ``MAX_DEPTH`` becomes.
TOO_DEEP = f"<a value nested over {MAX_DEPTH} deep>"
_SURROGATE = re.compile("[\ud800-\udfff]")


def loggable(text: str) -> tuple[str, int]:
    """``text`` with each lone surrogate replaced by U+FFFD (a pair joined), and
    how many characters were replaced."""
    if _SURROGATE.search(text) is None:
        return text, 0
    joined = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return _SURROGATE.subn(REPLACEMENT, joined)


def loggable_value(value: Any, depth: int = 0) -> tuple[Any, int]:
    """A JSON-like value (dicts, lists, strings; keys too) with every string made
    loggable and every container deeper than ``MAX_DEPTH`` levels below it
    replaced by ``TOO_DEEP``; and how many replacements were made. Recursion is
    bounded by ``MAX_DEPTH`` whatever the value's depth."""
    if isinstance(value, str):
        return loggable(value)
    if isinstance(value, (Mapping, list, tuple)) and depth >= MAX_DEPTH:
        return TOO_DEEP, 1
    if isinstance(value, Mapping):
        out, total = {}, 0
        for key, inner in value.items():
            key, n_key = loggable_value(key, depth + 1)
            out[key], n_inner = loggable_value(inner, depth + 1)
            total += n_key + n_inner
        return out, total
    if isinstance(value, (list, tuple)):
        items = [loggable_value(v, depth + 1) for v in value]
        return type(value)(v for v, _ in items), sum(n for _, n in items)
    return value, 0


def _bounded_calls(output: ModelOutput) -> tuple[ModelOutput, int]:
    """``output`` with every tool call's arguments bounded in depth (a copy when any was
    too deep). Done before anything serialises the output: pydantic cannot."""
    choices, total = [], 0
    for choice in output.choices:
        calls = []
        for call in choice.message.tool_calls or []:
            arguments, replaced = loggable_value(call.arguments)
            total += replaced
            calls.append(replace(call, arguments=arguments) if replaced else call)
        message = choice.message
        if message.tool_calls:
            message = message.model_copy(update={"tool_calls": calls})
        choices.append(choice.model_copy(update={"message": message}))
    return (output.model_copy(update={"choices": choices}), total) if total else (output, 0)


def _is_loggable(output: ModelOutput) -> bool:
    try:
        output.model_dump_json()
    except Exception:  # noqa: BLE001 - pydantic's serialization error wraps the UnicodeEncodeError
        return False
    return True


def loggable_output(output: ModelOutput) -> ModelOutput:
    """The model output itself when it can be logged and has a choice; else a copy
    that can (every string made loggable, tool-call arguments bounded in depth, an
    empty assistant message for a reply with no choices), each repair counted in
    the sample's store."""
    if not output.choices:
        count(EMPTY_KEY, 1)
        empty = ChatMessageAssistant(content="", model=output.model or None, source="generate")
        output = output.model_copy(update={"choices": [ChatCompletionChoice(message=empty, stop_reason="unknown")]})
    output, deep = _bounded_calls(output)
    count(REPLACED_KEY, deep)
    if _is_loggable(output):
        return output
    try:
        data, replaced = loggable_value(output.model_dump())
        clean = ModelOutput.model_validate(data)
    except Exception:  # noqa: BLE001 - not a text problem: left to Inspect, as before
        return output
    count(REPLACED_KEY, replaced)
    return clean


def count(key: str, n: int) -> None:
    """Add ``n`` to the current sample's tally under ``key`` (outside a sample: ignored)."""
    if n:
        try:
            tally = store()
        except Exception:  # noqa: BLE001 - no sample running (a test calling a parser directly)
            return
        tally.set(key, int(tally.get(key, 0)) + n)


def register_tally(key: str) -> str:
    """Add ``key`` to the tallies written to a sample's metadata; returns it."""
    if key not in TALLY_KEYS:
        TALLY_KEYS.append(key)
    return key


def tallies(tally: Any = None) -> dict[str, int]:
    """The non-zero counts (``TALLY_KEYS``) of ``tally`` (a sample's store; by default
    the running sample's), for its metadata."""
    try:
        tally = store() if tally is None else tally
        found = {key: int(tally.get(key, 0)) for key in TALLY_KEYS}
    except Exception:  # noqa: BLE001 - no sample running
        return {}
    return {key: n for key, n in found.items() if n}


def record_replacements(metadata: dict[str, Any]) -> None:
    """Copy the sample's repair counts into its metadata, those that are non-zero."""
    metadata.update(tallies())
