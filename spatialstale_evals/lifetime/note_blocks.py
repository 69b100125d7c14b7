"""A notes file's text cut into entries: single lines (``note_forms``) and the
structured forms that span lines, each rewritten into lines the one grammar reads.

* **JSON** (a line opening with ``{`` or ``[``, fenced or not): an object or
  list of cells with states (``{"(3,4)": "hole"}``, ``{"holes": [[3,4]]}``,
  ``[{"cell": [3,4], "state": "H"}]``, ``{"row": 3, "col": 4, "hole": true}``);
  keys naming the past (``was``, ``previous``, ``old``...) are dropped, ``now``
  / ``current`` / ``new`` make their value current; strings elsewhere are read
  as note lines.
* **Markdown table** (a header row, a ``|---|`` row): each data row is read as
  ``cell : column : column``; a past column is dropped; ``row`` and ``col``
  columns make the cell; a yes/no under a claim word's header claims it or not.
* **Copied map**: rows of S/F/H/G (``?``, ``.`` or any other symbol: no claim)
  under a header that says what it is (``map``, ``grid``, ``layout``, ``board``
  or a legend ``H=hole``); rows numbered from 0, or exactly the grid's height of
  them; each row exactly the grid's width. Rows that cannot be placed (fewer
  unnumbered rows, a row number past the grid: numbered from 1) are one
  ambiguous entry. A legend may name other symbols
  (``X=hole``); one that contradicts S/F/H/G makes the map ambiguous.
* **Lists under a header**: ``Holes:`` (or ``## Safe cells``) and then lines
  holding only cells (``- (3,4)``) read as ``Holes: (3,4)``, until a blank line.

A block's time and doubt words (``Old map:``, ``Possible holes:``) apply to it.
JSON is tried on a bounded window, numbers longer than four digits stay strings,
nesting is bounded: no input raises.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from spatialstale_evals.lifetime.note_forms import (
    ANY_CELL,
    HOLE_CLAIM,
    LETTERS,
    SAFE,
    UNKNOWN,
    Reading,
    read_line,
    tokens,
)


@dataclass
class Entry:
    """An entry of a text: the lines it spans (counted as unparsed when nothing
    is read), and its reading."""

    lines: int
    reading: Reading


_RECOMMENDED = re.compile(r"^\s*(SAFE|HOLE) at \((\d{1,4}),(\d{1,4})\)\s*$")
_JSON_START = re.compile(r"^\s*(?:\{\s*(?:$|[\"'}])|\[\s*(?:$|[\[{\"\]]|-?\d+\s*,\s*-?\d+\s*\]\s*,\s*\[))")
_JSON_WINDOW = 256 * 1024
_JSON_DEPTH = 12
_FENCE = re.compile(r"^\s*(```|~~~)")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_MAP_WORD = re.compile(r"\b(map|grid|layout|board)\b", re.IGNORECASE)
_LEGEND = re.compile(r"(?<![\w])([A-Z?.#*@_])\s*[=:]\s*([A-Za-z]+)")
_MAP_SYMBOLS = "SFHG?.#*@AX_"
_SYMBOL = f"[{re.escape(_MAP_SYMBOLS)}]"
_MAP_ROW = re.compile(
    rf"^\s*(?:[-*]\s+)?(?:(?:row\s*)?(\d{{1,4}})(?!\d)\s*[:|.)]?\s+)?"
    rf"[|`]?\s*({_SYMBOL}(?:[ |]*{_SYMBOL})*)\s*[|`]?\s*$",
    re.IGNORECASE,
)
_INDEX_ROW = re.compile(r"[\s\d|]+")
_PAST_KEYS = ("was", "previous", "prev", "old", "before", "former", "original", "initial", "earlier", "history")
_NOW_KEYS = ("now", "current", "new", "latest", "updated")
_CELL_KEYS = ("cell", "pos", "position", "coord", "coords", "coordinate", "coordinates", "location", "loc", "rc")
_ROW_KEYS, _COL_KEYS = ("row", "r"), ("col", "column", "c")
_YES, _NO = ("yes", "y", "true", "1", "x", "✓", "✔", "✅"), ("no", "n", "false", "0", "✗", "✘", "❌", "-")


def read_text(text: str, height: int, width: int) -> Iterator[Entry]:
    """Every entry of one file's text (module docstring); blank lines,
    headings and fences are structure, not entries."""
    lines = text.split("\n")  # as the memory tool numbers lines: \n only
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    i, section, json_tried_to = 0, None, 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if not stripped:
            section, i = None, i + 1
            continue
        if _FENCE.match(line):
            i += 1
            continue
        if offsets[i] >= json_tried_to and _JSON_START.match(line):
            end, value, tried = _json_at(text, offsets[i])
            json_tried_to = max(json_tried_to, tried)
            if value is not None:
                last = next(k for k in range(i, len(lines)) if offsets[k + 1] > end - 1)
                yield from _block([_entry(t, height, width) for t in json_lines(value)], _count(lines[i : last + 1]))
                i = last + 1
                continue
        if stripped.startswith("|") and i + 1 < len(lines) and _TABLE_RULE.match(lines[i + 1]):
            last = i + 2
            while last < len(lines) and lines[last].strip().startswith("|"):
                last += 1
            yield from (Entry(1, _entry(t, height, width)) for t in table_lines(lines[i:last]))
            i = last
            continue
        if stripped.startswith("|") and stripped.endswith("|") and len(stripped) > 1:  # a row with no header
            yield Entry(1, _entry(" : ".join(_cells_of(stripped)), height, width))
            i += 1
            continue
        fast = _RECOMMENDED.match(line)
        if not fast and not ANY_CELL.search(line):
            rows = _map_rows(lines, i + 1, height, width)
            if rows is not None:
                end, map_lines = rows
                yield from _block([_entry(t, height, width) for t in map_text(stripped, map_lines)], end - i - 1)
                section, i = None, end
                continue
            header = stripped.startswith("#") or stripped.rstrip("*").endswith(":")
            section = stripped if header else None
            if not stripped.startswith("#"):
                yield Entry(1, Reading(read=header and any(t.kind == "claim" for t in tokens(stripped))))
            i += 1
            continue
        if section is not None and _only_cells(line):
            line = f"{section.lstrip('#').strip()} {line}"
        else:
            section = None  # a list under a header ends at the first line that is not a list item
        yield Entry(1, _entry(line, height, width))
        i += 1


@lru_cache(maxsize=65536)
def _entry(line: str, height: int, width: int) -> Reading:
    """One line's reading (memoised: the store is read at every episode's
    start and end, mostly the same lines; a Reading is never changed)."""
    fast = _RECOMMENDED.match(line)
    if fast:
        cell = (int(fast[2]), int(fast[3]))
        inside = 0 <= cell[0] < height and 0 <= cell[1] < width
        return Reading([(cell, fast[1])], read=True) if inside else Reading()
    return read_line(line, height, width)


def _block(readings: list[Reading], lines: int) -> Iterator[Entry]:
    """A block's readings; its lines count as unparsed when none of them read."""
    if any(r.read for r in readings):
        yield from (Entry(0, r) for r in readings)
    else:
        yield Entry(lines, Reading())


def _count(lines: list[str]) -> int:
    return sum(bool(line.strip()) and not _FENCE.match(line) for line in lines)


def _only_cells(line: str) -> bool:
    toks = tokens(line)
    allowed = {"cell", "lsep", "sep", "fill", "arrow", "stop"}
    return any(t.kind == "cell" for t in toks) and all(
        t.kind in allowed or t.kind == "other" and t.text.isdigit() for t in toks
    )


# --- JSON -----------------------------------------------------------------------------


def _small_int(text: str) -> int | str:
    return int(text) if len(text.lstrip("-")) <= 4 else text


_DECODER = json.JSONDecoder(parse_int=_small_int, parse_float=lambda s: s, parse_constant=lambda s: s)


def _json_at(text: str, start: int) -> tuple[int, Any, int]:
    """(end offset, value or None, how far the attempt read) of a JSON value at ``start``."""
    window = text[start : start + _JSON_WINDOW]
    try:
        value, end = _DECODER.raw_decode(window, len(window) - len(window.lstrip()))
    except json.JSONDecodeError as err:
        return start, None, start + max(err.pos, 1)
    except (RecursionError, ValueError):
        return start, None, start + len(window)
    rest = window[end:].split("\n", 1)[0]
    if rest.strip(" \t,`") or not isinstance(value, dict | list):
        return start, None, start + end
    return start + end, value, start + end


def _cell_text(value: Any) -> str | None:
    """``(r,c)`` from ``[3,4]``, ``"(3,4)"``, ``"3,4"``, ``"r3c4"``; None otherwise."""
    if isinstance(value, list) and len(value) == 2 and all(type(v) is int and v >= 0 for v in value):
        return f"({value[0]},{value[1]})"
    if isinstance(value, str) and len(value) < 40:
        cells = [t for t in tokens(value) if t.kind == "cell"]
        alone = re.fullmatch(r"\s*\(?\s*(\d{1,4})\s*,\s*(\d{1,4})\s*\)?\s*", value)
        if alone:
            return f"({alone[1]},{alone[2]})"
        if len(cells) == 1 and all(t.kind in ("cell", "sep") for t in tokens(value)):
            return f"({cells[0].cell[0]},{cells[0].cell[1]})"
    return None


def _key_words(key: str) -> str:
    return re.sub(r"[_\-]+", " ", key)


def _has(key: str, names: tuple[str, ...]) -> bool:
    return any(w in names for w in re.split(r"[^a-z]+", key.lower()))


def _state(key: str, value: Any) -> str | None:
    """The text a (key, value) of a cell's object says about it, or None."""
    if _has(key, _PAST_KEYS):
        return None
    prefix = "now " if _has(key, _NOW_KEYS) else ""
    if isinstance(value, bool):
        claim = _key_words(key)
        return None if not any(t.kind == "claim" for t in tokens(claim)) else prefix + ("" if value else "not ") + claim
    if isinstance(value, str) and "\n" not in value and len(value) < 400:
        return prefix + value
    return None


def json_lines(value: Any, depth: int = 0) -> Iterator[str]:
    """The note lines a JSON value says (module docstring)."""
    if depth > _JSON_DEPTH:
        return
    if isinstance(value, str):
        yield from (line for line in value.split("\n") if line.strip())
    elif isinstance(value, list):
        if len(value) == 3 and _cell_text(value[:2]) and isinstance(value[2], str):
            yield f"{_cell_text(value[:2])} : {value[2]}"
            return
        for item in value:
            yield from json_lines(item, depth + 1)
    elif isinstance(value, dict):
        yield from _object_lines(value, depth)


def _object_lines(obj: dict, depth: int) -> Iterator[str]:
    keys = {k.lower(): k for k in obj if isinstance(k, str)}
    cell = next((_cell_text(obj[keys[k]]) for k in _CELL_KEYS if k in keys and _cell_text(obj[keys[k]])), None)
    row = next((obj[keys[k]] for k in _ROW_KEYS if k in keys), None)
    col = next((obj[keys[k]] for k in _COL_KEYS if k in keys), None)
    if cell is None and type(row) is int and type(col) is int and row >= 0 and col >= 0:
        cell = f"({row},{col})"
    if cell is not None:
        skip = set(_CELL_KEYS) | set(_ROW_KEYS) | set(_COL_KEYS)
        states = [_state(k, v) for k, v in obj.items() if isinstance(k, str) and k.lower() not in skip]
        said = [s for s in states if s]
        if said:
            yield " ; ".join(f"{cell} : {s}" for s in said)
        return
    for key, item in obj.items():
        key = str(key)
        as_cell = _cell_text(key)
        if as_cell is not None:
            if isinstance(item, dict):
                yield from _object_lines({"cell": key, **item}, depth + 1)
            else:
                state = _state("state", item) if not isinstance(item, bool) else None
                if state:
                    yield f"{as_cell} : {state}"
        elif _MAP_WORD.search(_key_words(key)) and _is_rows(item):
            rows = item.split("\n") if isinstance(item, str) else item
            yield from map_text(f"{_key_words(key)}:", rows)
        elif isinstance(item, list) and item and all(_cell_text(c) for c in item):
            yield f"{_key_words(key)}: " + ", ".join(str(_cell_text(c)) for c in item)
        else:
            yield from json_lines(item, depth + 1)


def _is_rows(item: Any) -> bool:
    rows = item.split("\n") if isinstance(item, str) else item
    return isinstance(rows, list) and bool(rows) and all(isinstance(r, str) and _MAP_ROW.match(r) for r in rows)


# --- Markdown tables -----------------------------------------------------------------


def _cells_of(row: str) -> list[str]:
    row = row.strip()
    row = row[1:] if row.startswith("|") else row
    row = row[:-1] if row.endswith("|") else row
    return [c.strip() for c in row.split("|")]


def table_lines(rows: list[str]) -> Iterator[str]:
    """Each data row of a Markdown table (header, rule, rows) as one note line."""
    header = [h.lower().strip("*_` ?") for h in _cells_of(rows[0])]
    past = {j for j, h in enumerate(header) if _has(h, _PAST_KEYS)}
    row_col = next((j for j, h in enumerate(header) if h in _ROW_KEYS), None)
    col_col = next((j for j, h in enumerate(header) if h in _COL_KEYS), None)
    for row in rows[2:]:
        cells = _cells_of(row)
        parts, cell = [], None
        for j, text in enumerate(cells):
            if j in past or j >= len(header) + 1:
                continue
            if j in (row_col, col_col):
                continue
            h = header[j] if j < len(header) else ""
            if text.lower() in _YES + _NO and any(t.kind == "claim" for t in tokens(h)):
                text = h if text.lower() in _YES else f"not {h}"
            elif _has(h, _NOW_KEYS):
                text = f"now {text}"
            parts.append(text)
        if row_col is not None and col_col is not None and max(row_col, col_col) < len(cells):
            r, c = cells[row_col], cells[col_col]
            if re.fullmatch(r"\d{1,4}", r) and re.fullmatch(r"\d{1,4}", c):
                cell = f"({r},{c})"
        yield " : ".join(([cell] if cell else []) + parts)


# --- copied maps ---------------------------------------------------------------------


def _map_rows(lines: list[str], i: int, height: int, width: int) -> tuple[int, list[str]] | None:
    """(the line after the map, its lines) when the header before line ``i`` says
    it is a map and rows of the grid's width follow; None otherwise."""
    header = lines[i - 1]
    if not (_MAP_WORD.search(header) or _LEGEND.search(header)):
        return None
    block: list[str] = [header]
    end = min(len(lines), i + 4)  # a legend and a fence at most: the scan stays bounded, the parse linear
    while i < end and (_FENCE.match(lines[i]) or _LEGEND.search(lines[i]) and not _MAP_ROW.match(lines[i])):
        block.append(lines[i])
        i += 1
    rows: list[str] = []
    end = min(len(lines), i + 2 * height + 4)
    while i < end and (_MAP_ROW.match(lines[i]) or _INDEX_ROW.fullmatch(lines[i]) or _FENCE.match(lines[i])):
        if _MAP_ROW.match(lines[i]):
            rows.append(lines[i])
        i += 1
        if rows and _FENCE.match(lines[i - 1]):
            break
    letters = [_row_letters(r) for r in rows]
    if not rows or any(len(ls) != width for _, ls in letters):
        return None
    numbered = [n for n, _ in letters]
    if all(n is None for n in numbered) and len(rows) != height or any(n is not None and n >= height for n in numbered):
        return i, ["maybe"]  # rows that cannot be placed (too few, or numbered from 1): an ambiguous map
    return i, block[1:] + rows


def _row_letters(row: str) -> tuple[int | None, str]:
    m = _MAP_ROW.match(row)
    assert m is not None
    return (int(m[1]) if m[1] else None), re.sub(r"[ |]", "", m[2])


def map_text(header: str, lines: list[str]) -> Iterator[str]:
    """A copied map's rows as ``(r,c)=L`` lines, under its header's words."""
    if lines == ["maybe"]:
        yield "(0,0): maybe hole"
        return
    legend = dict(_LEGEND.findall(" ".join([header, *lines])))
    meaning: dict[str, str] = {}
    for symbol, word in legend.items():
        toks = tokens(word)
        meaning[symbol.upper()] = toks[0].value if toks and toks[0].kind == "claim" and toks[0].value else UNKNOWN
    if any(s in meaning and meaning[s] not in (LETTERS[s.lower()], UNKNOWN) for s in "SFHG"):
        yield "(0,0): maybe hole"  # a legend that contradicts the letters: ambiguous
        return
    said = tokens(_LEGEND.sub("", header))
    doubt = any(t.kind in ("unc", "q", "doubt") for t in said)
    past = any(t.kind in ("past", "negpast") for t in said)
    rows = [r for r in lines if _MAP_ROW.match(r)]
    if doubt:
        yield "(0,0): maybe hole"  # a map the header doubts: one ambiguous entry
        return
    r = 0
    for row in rows:
        number, letters = _row_letters(row)
        r = number if number is not None else r
        parts = []
        for c, symbol in enumerate(letters.upper()):
            value = UNKNOWN if past else meaning.get(symbol, LETTERS.get(symbol.lower(), UNKNOWN))
            parts.append(f"({r},{c})=" + {SAFE: "F", HOLE_CLAIM: "H"}.get(value, "?"))
        yield " ".join(parts)
        r += 1
