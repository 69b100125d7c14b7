"""Finding the JSON objects in a model's reply within fixed bounds.

A model's reply is read by trying to decode a JSON value at every ``{`` (prose,
code fences and several blocks around the JSON allowed). Done naively that is
unsafe on hostile text: Python's decoder recurses once per nesting level (a
reply of 100,000 ``[`` raises ``RecursionError``), and a failed decode builds
an error message whose cost grows with its position in the text, so a reply
of many ``{`` takes time quadratic in its length. Here:

* A reply longer than ``MAX_REPLY_CHARS`` is not read at all (no objects).
* Before a candidate is decoded, a bracket scan (string-aware) finds where it
  closes; one that nests deeper than ``MAX_DEPTH`` (``{`` and ``[`` together)
  or never closes is not decoded. Only a closed, shallow candidate is handed
  to the decoder, as its own short string, so its recursion is bounded and a
  failure costs its own length.
* An integer of more than ``numbers.MAX_DIGITS`` digits decodes to
  ``numbers.TOO_LONG`` (no reader takes it for a number), not to ``int()``'s
  4,300-digit ``ValueError`` that would drop the whole object.
* The whole search is linear in the reply: a scan that went too deep hands
  its open brackets on to the candidates inside it instead of rescanning
  them (the last ``CARRIED`` such scans are kept), a
  candidate that never closes marks every bracket open at the end as never
  closing, and the total text scanned is capped at ``SCAN_FACTOR`` times the
  reply's length (plus ``SCAN_SLACK``); past that cap the search stops with
  the objects found so far.

Within the bounds, the result is exactly that of decoding greedily at every
``{`` (a decoded value is skipped whole; a failed one moves on one character).
Pure Python, no Inspect, so it can be fuzzed in isolation.
"""

from __future__ import annotations

import json
import re
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from spatialstale_evals.harness.numbers import json_int

#: Replies longer than this (characters) are not searched: they hold no objects.
MAX_REPLY_CHARS = 1_048_576
#: The deepest nesting (objects and arrays together) a decoded value may have.
MAX_DEPTH = 64
#: The text scanned over all candidates is at most this many times the reply's length ...
SCAN_FACTOR = 4
#: ... plus this many characters.
SCAN_SLACK = 65_536

#: How many deep scans' open brackets are kept for the starts that follow (a
#: reply may interleave a few scans in different string contexts: ``"{"{"{``).
CARRIED = 4

_STRUCTURE = re.compile(r'[{}\[\]"]')
#: The rest of a JSON string after its opening quote, through its closing quote.
_STRING_REST = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_CLOSERS = {"}": "{", "]": "["}
#: A run of more than ``MAX_DEPTH`` opening brackets (whitespace between allowed): every
#: ``{`` of it that has more than ``MAX_DEPTH`` of them from itself on nests too deep.
_DEEP_RUN = re.compile(rf"(?:[{{\[][ \t\r\n]*){{{MAX_DEPTH + 1},}}")
_OPENER = re.compile(r"[{\[]")
#: Integers past ``numbers.MAX_DIGITS`` digits decode to ``numbers.TOO_LONG``, never to ``int()``'s error.
_DECODER = json.JSONDecoder(parse_int=json_int)


@dataclass
class Found:
    """The values decoded from a reply, and the bound that cut the search short, if any:
    ``"size"`` (the reply is over ``MAX_REPLY_CHARS``), ``"scan"`` (the scan budget ran
    out), or ``"depth"`` (some candidate nested deeper than ``MAX_DEPTH``)."""

    values: list[Any] = field(default_factory=list)
    limit: str | None = None


@dataclass
class _Scan:
    """Where a bracket scan stopped: ``end`` (the index of the closing bracket) when
    the candidate closed; else the brackets still open (``stack``: positions) and
    the position reached (``at``), with ``deep`` when it went over ``MAX_DEPTH``."""

    end: int | None
    stack: deque[int]
    at: int
    deep: bool
    cost: int


def _bracket_scan(text: str, stack: deque[int], at: int, budget: int) -> _Scan:
    """Scan from ``at`` with ``stack`` open until the first bracket of the stack closes,
    the nesting goes over ``MAX_DEPTH``, the text ends, or ``budget`` characters are spent."""
    start_at = at
    while True:
        if at - start_at > budget:
            return _Scan(None, stack, at, False, at - start_at)
        match = _STRUCTURE.search(text, at)
        if match is None:
            return _Scan(None, stack, len(text), False, len(text) - start_at)
        char, at = match.group(), match.end()
        if char == '"':
            rest = _STRING_REST.match(text, at)
            if rest is None:  # the string never ends: neither does anything open
                return _Scan(None, stack, len(text), False, len(text) - start_at)
            at = rest.end()
        elif char in "{[":
            stack.append(at - 1)
            if len(stack) > MAX_DEPTH:
                return _Scan(None, stack, at, True, at - start_at)
        else:
            if text[stack[-1]] != _CLOSERS[char]:  # a mismatched bracket: the candidate is not JSON
                return _Scan(None, stack, at, False, at - start_at)
            stack.pop()
            if not stack:
                return _Scan(at - 1, stack, at, False, at - start_at)


def json_values(text: str) -> Found:
    """Every JSON value decoded at a ``{`` of ``text``, in order, within the bounds above."""
    found = Found()
    if len(text) > MAX_REPLY_CHARS:
        found.limit = "size"
        return found
    budget = SCAN_FACTOR * len(text) + SCAN_SLACK
    never_closes: set[int] = set()
    # the brackets still open when a recent scan went too deep, and where it stopped
    carried: list[tuple[deque[int], int]] = []
    pos = 0
    while (start := text.find("{", pos)) >= 0:
        pos = start + 1
        if start in never_closes:
            continue
        if (run := _DEEP_RUN.match(text, start)) is not None:  # skip to the run's last shallow starts
            openers = [m.start() for m in _OPENER.finditer(text, start, run.end())]
            pos = openers[-MAX_DEPTH - 1] + 1
            found.limit = found.limit or "depth"
            continue
        stack, at = deque([start]), start + 1
        for open_, _ in carried:
            while open_ and open_[0] < start:
                open_.popleft()
        for index, (open_, stopped) in enumerate(carried):
            if open_ and open_[0] == start:  # the scan from here is that deep one, minus its outer brackets
                stack, at = open_, stopped
                del carried[index]
                break
        carried = [(open_, stopped) for open_, stopped in carried if open_]
        scan = _bracket_scan(text, stack, at, budget)
        budget -= scan.cost
        if scan.deep:
            found.limit = found.limit or "depth"
            scan.stack.popleft()
            carried = [*carried[-(CARRIED - 1) :], (scan.stack, scan.at)]
            continue
        if scan.end is None:
            if budget < 0:
                found.limit = "scan"
                return found
            if scan.at >= len(text):
                never_closes.update(p for p in scan.stack if text[p] == "{")
            continue
        try:
            value, _ = _DECODER.raw_decode(text[start : scan.end + 1])
        except (ValueError, RecursionError):
            continue
        found.values.append(value)
        pos = scan.end + 1
    return found
