"""Text from outside made safe to log, where it enters the harness.

Inspect writes its log as UTF-8 JSON, and a Python string holding a lone
surrogate (``\\udcff``: what a model's tokenizer or a corpus file may hand us)
cannot be encoded: the log writer fails and takes the whole eval with it. So
every model reply (its text, reasoning and tool calls) and every corpus text
passes through here as it arrives: a surrogate pair is joined into the
character it stands for, and each lone surrogate becomes U+FFFD (the
replacement character). Nothing else is touched, so text that was already
loggable comes out identical.

The replacements made during a sample are counted in its store
(``REPLACED_KEY``) and written to the sample's metadata under the same key by
``record_replacements`` (only when some were made, so a clean sample's
metadata is unchanged).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from inspect_ai.model import ModelOutput
from inspect_ai.util import store

#: The sample store key and metadata key of the count of characters replaced.
REPLACED_KEY = "replaced_characters"
REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")


def loggable(text: str) -> tuple[str, int]:
    """``text`` with each lone surrogate replaced by U+FFFD (a pair joined), and
    how many characters were replaced."""
    if _SURROGATE.search(text) is None:
        return text, 0
    joined = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return _SURROGATE.subn(REPLACEMENT, joined)


def loggable_value(value: Any) -> tuple[Any, int]:
    """A JSON-like value (dicts, lists, strings; keys too) with every string made loggable."""
    if isinstance(value, str):
        return loggable(value)
    if isinstance(value, Mapping):
        out, total = {}, 0
        for key, inner in value.items():
            key, n_key = loggable_value(key)
            out[key], n_inner = loggable_value(inner)
            total += n_key + n_inner
        return out, total
    if isinstance(value, (list, tuple)):
        items = [loggable_value(v) for v in value]
        return type(value)(v for v, _ in items), sum(n for _, n in items)
    return value, 0


def _is_loggable(output: ModelOutput) -> bool:
    try:
        output.model_dump_json()
    except Exception:  # noqa: BLE001 - pydantic's serialization error wraps the UnicodeEncodeError
        return False
    return True


def loggable_output(output: ModelOutput) -> ModelOutput:
    """The model output itself when it can be logged; else a copy with every string made
    loggable, the replacements counted in the sample's store."""
    if _is_loggable(output):
        return output
    try:
        data, replaced = loggable_value(output.model_dump())
        clean = ModelOutput.model_validate(data)
    except Exception:  # noqa: BLE001 - not a text problem: left to Inspect, as before
        return output
    count_replaced(replaced)
    return clean


def count_replaced(count: int) -> None:
    """Add ``count`` replacements to the current sample's tally (outside a sample: ignored)."""
    if count:
        try:
            tally = store()
        except Exception:  # noqa: BLE001 - no sample running (a test calling a parser directly)
            return
        tally.set(REPLACED_KEY, int(tally.get(REPLACED_KEY, 0)) + count)


def record_replacements(metadata: dict[str, Any]) -> None:
    """Copy the sample's tally into its metadata, when it made any replacement."""
    try:
        replaced = int(store().get(REPLACED_KEY, 0))
    except Exception:  # noqa: BLE001 - no sample running
        return
    if replaced:
        metadata[REPLACED_KEY] = replaced
