"""What a dataset file must hold, checked line by line before any model call.

The manifest's checksums catch a file damaged by accident; they cannot catch
one edited on purpose and re-hashed. So every instance line is also checked
against the rules the generator follows, and the first one broken is an
error naming the file, the line and the field (``file:line: field: problem``):

* the line is a JSON object with every field, each of its type: integers are
  integers (not floats, strings or booleans), text is text;
* ``id`` is unique in the file, and the file holds the manifest's count;
* ``regime`` is the file's, ``height`` and ``width`` the manifest's;
* ``max_steps`` is positive (and at most ``MAX_STEPS``);
* ``g0`` and ``grid`` are grids of that size (``S`` at the start, ``G`` at the
  goal), ``grid`` differing from ``g0`` only on ice and holes;
* every event's ``step`` is in 1 .. ``max_steps`` - 1, the steps in order, and
  every event cell is on the grid and an ice or hole cell;
* ``memory`` is not empty, its ids are unique, every entry's cell is on the
  grid, its claim is ``SAFE`` or ``DANGER`` and true of ``g0`` (the store is
  written before any change), and its text is the one its fields give
  (``[mem_021] SAFE at (2,5): Frozen ice - safe to walk``); a distractor note
  (claim ``NOTE``, cell (-1,-1)) reads ``[note_03] Note: ...``;
* the goal is reachable from the start on every grid an agent meets: ``g0``,
  ``grid`` and the grid after each event (the rule the generator draws by).

A lifetime line (``world/lifetimes.py``, the ``lifelong`` task's files) is
checked the same way (``check_lifetime_line``): the fields it shares with an
instance line by the same rules; exactly the manifest's number of episodes,
each's ``changes`` distinct ice or hole cells on the grid, its ``events`` by
the rules above on the grid the episode starts on, and the goal reachable on
every grid of every episode. Where both files are read (``lifetimes.load``),
line N must be the lifetime of the instance on the instance file's line N
(its id, seed, budget, ``g0``, and the instance's own grid and schedule as
episode 1), and the files must hold as many lines as the manifests list.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from spatialstale_evals.world.grid import FROZEN, HOLE, GridError, flip_cells, validate_grid
from spatialstale_evals.world.memory import DANGER, NOTE, NOTE_PATTERN, SAFE, claim_of, entry_text

#: The largest step budget a dataset (or ``-T max_steps``) may give: far above
#: the canonical sets' (200 on 32x32), low enough that an episode stays finite.
MAX_STEPS = 10_000
INSTANCE_FIELDS = ("id", "regime", "seed", "height", "width", "max_steps", "g0", "grid", "events", "memory")
ENTRY_FIELDS = ("id", "row", "col", "claim", "text", "source")
CLAIMS = (SAFE, DANGER)
#: A grid's cells as bits: 0 for a hole, 1 for any other cell.
_FREE_BITS = str.maketrans({HOLE: "0", FROZEN: "1", "S": "1", "G": "1"})


class LineError(ValueError):
    """A field of one line breaks a rule: ``field`` names it (``memory[3].row``)."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field


def _integer(value: Any, field: str) -> int:
    if type(value) is not int:
        raise LineError(field, f"must be an integer, got {type(value).__name__} {str(value)[:30]!r}")
    return value


def _text(value: Any, field: str) -> str:
    if not isinstance(value, str) or not value:
        raise LineError(field, f"must be non-empty text, got {type(value).__name__} {str(value)[:30]!r}")
    return value


def _list(value: Any, field: str) -> list[Any]:
    if not isinstance(value, list):
        raise LineError(field, f"must be a list, got {type(value).__name__}")
    return value


def _cell(value: Any, field: str, height: int, width: int) -> tuple[int, int]:
    if not isinstance(value, list) or len(value) != 2:
        raise LineError(field, f"must be a [row, col] pair, got {str(value)[:30]!r}")
    row, col = (_integer(v, f"{field}[{i}]") for i, v in enumerate(value))
    if not (0 <= row < height and 0 <= col < width):
        raise LineError(field, f"({row},{col}) is off the {height}x{width} grid")
    return row, col


def _grid(value: Any, field: str, height: int, width: int) -> tuple[str, ...]:
    try:
        grid = validate_grid(_list(value, field))
    except GridError as exc:
        raise LineError(field, str(exc)) from None
    if (len(grid), len(grid[0])) != (height, width):
        raise LineError(field, f"is {len(grid)}x{len(grid[0])}, the manifest says {height}x{width}")
    return grid


def _events(
    raw: list[Any], grid: tuple[str, ...], max_steps: int, prefix: str = "events"
) -> list[tuple[int, list[tuple[int, int]]]]:
    """The events of a schedule played on ``grid`` (``prefix``: the field that holds them)."""
    height, width = len(grid), len(grid[0])
    events, last = [], 0
    for i, event in enumerate(raw):
        where = f"{prefix}[{i}]"
        if not isinstance(event, Mapping) or set(event) != {"step", "cells"}:
            raise LineError(where, f"must be {{step, cells}}, got {str(event)[:40]!r}")
        step = _integer(event["step"], f"{where}.step")
        if not 1 <= step < max_steps:
            raise LineError(f"{where}.step", f"{step} is outside 1..{max_steps - 1} (max_steps {max_steps})")
        if step < last:
            raise LineError(f"{where}.step", f"{step} comes after step {last}: events must be in step order")
        last = step
        cells = [_cell(c, f"{where}.cells[{j}]", height, width) for j, c in enumerate(_list(event["cells"], where))]
        for j, (r, c) in enumerate(cells):
            if grid[r][c] not in (FROZEN, HOLE):
                raise LineError(f"{where}.cells[{j}]", f"({r},{c}) is {grid[r][c]}: only ice and holes change")
        events.append((step, cells))
    return events


def _entry(raw: Any, index: int, g0: tuple[str, ...]) -> str:
    """Check one memory entry against ``g0``; its id."""
    where = f"memory[{index}]"
    if not isinstance(raw, Mapping):
        raise LineError(where, f"must be an object, got {type(raw).__name__}")
    missing = [k for k in ENTRY_FIELDS if k not in raw]
    if missing:
        raise LineError(where, f"lacks {', '.join(missing)}")
    eid = _text(raw["id"], f"{where}.id")
    row, col = _integer(raw["row"], f"{where}.row"), _integer(raw["col"], f"{where}.col")
    claim, text = raw["claim"], _text(raw["text"], f"{where}.text")
    _text(raw["source"], f"{where}.source")
    if claim == NOTE:
        if (row, col) != (-1, -1):
            raise LineError(where, f"a NOTE is about no cell: row and col must be -1, got ({row},{col})")
        found = NOTE_PATTERN.fullmatch(text)
        if found is None or found.group("id") != eid:
            raise LineError(f"{where}.text", f"a note must read '[{eid}] Note: ...', got {text[:50]!r}")
        return eid
    if claim not in CLAIMS:
        raise LineError(f"{where}.claim", f"must be one of {', '.join((*CLAIMS, NOTE))}, got {str(claim)[:20]!r}")
    height, width = len(g0), len(g0[0])
    for name, value, size in (("row", row, height), ("col", col, width)):
        if not 0 <= value < size:
            raise LineError(f"{where}.{name}", f"{value} is off the {height}x{width} grid")
    kind = g0[row][col]
    if claim != claim_of(kind):
        raise LineError(f"{where}.claim", f"{claim} is not true of g0, whose ({row},{col}) is {kind}")
    expected = entry_text(eid, row, col, kind)
    if text != expected:
        raise LineError(f"{where}.text", f"{text[:60]!r} does not say what the fields do: {expected!r}")
    return eid


def _identity(data: Any, fields: Sequence[str], regime: str, height: int, width: int) -> int:
    """The fields an instance line and a lifetime line share: every field of
    ``fields`` present, ``id`` text, ``regime`` the file's, ``seed`` an integer,
    ``height`` and ``width`` the manifest's, ``max_steps`` in range; returns that."""
    if not isinstance(data, Mapping):
        raise LineError("(line)", f"must be a JSON object, got {type(data).__name__}")
    missing = [k for k in fields if k not in data]
    if missing:
        raise LineError(missing[0], "missing")
    _text(data["id"], "id")
    if data["regime"] != regime:
        raise LineError("regime", f"{str(data['regime'])[:20]!r}, but the file holds {regime}")
    _integer(data["seed"], "seed")
    for name, size in (("height", height), ("width", width)):
        if _integer(data[name], name) != size:
            raise LineError(name, f"{data[name]}, but the manifest says {size}")
    max_steps = _integer(data["max_steps"], "max_steps")
    if not 1 <= max_steps <= MAX_STEPS:
        raise LineError("max_steps", f"{max_steps} is outside 1..{MAX_STEPS}")
    return max_steps


def check_line(data: Any, regime: str, height: int, width: int) -> None:
    """Every rule of the module docstring for one instance line (but the file-wide ones);
    a ``LineError`` names the first field that breaks one."""
    max_steps = _identity(data, INSTANCE_FIELDS, regime, height, width)
    g0, grid = _grid(data["g0"], "g0", height, width), _grid(data["grid"], "grid", height, width)
    changed = [(r, c) for r in range(height) for c in range(width) if g0[r][c] != grid[r][c]]
    if any(g0[r][c] not in (FROZEN, HOLE) or grid[r][c] not in (FROZEN, HOLE) for r, c in changed):
        raise LineError("grid", "differs from g0 on a start or goal cell: only ice and holes change")
    events = _events(_list(data["events"], "events"), grid, max_steps)
    memory = _list(data["memory"], "memory")
    if not memory:
        raise LineError("memory", "is empty: every instance has a memory store to audit")
    seen: dict[str, int] = {}
    for index, entry in enumerate(memory):
        eid = _entry(entry, index, g0)
        if eid in seen:
            raise LineError(f"memory[{index}].id", f"{eid} is also memory[{seen[eid]}]'s id")
        seen[eid] = index
    _check_reachable(g0, grid, events)


def reachable(grid: Sequence[str]) -> bool:
    """Whether the goal (bottom right) can be reached from the start (top left) over
    non-hole cells, 4-connected: ``grid.has_path``'s answer, by a flood fill over
    the cells as the bits of one integer (fast enough to check every grid of a
    32x32 file as it loads)."""
    height, width = len(grid), len(grid[0])
    cells = "".join(grid)[::-1]  # bit i is cell i (row-major)
    free = int(cells.translate(_FREE_BITS), 2)
    column = sum(1 << (r * width) for r in range(height))
    not_first, not_last = ~column & free, ~(column << (width - 1)) & free
    goal = 1 << (height * width - 1)
    reach, previous = 1 & free, 0
    while reach != previous and not reach & goal:
        previous = reach
        reach |= ((reach << 1) & not_first) | ((reach >> 1) & not_last) | ((reach << width) | (reach >> width)) & free
    return bool(reach & goal)


def _check_reachable(g0: tuple[str, ...], grid: tuple[str, ...], events: Sequence[tuple[int, list]]) -> None:
    if not reachable(g0):
        raise LineError("g0", "the goal cannot be reached from the start")
    if not reachable(grid):
        raise LineError("grid", "the goal cannot be reached from the start")
    current = grid
    for i, (step, cells) in enumerate(events):
        current = flip_cells(current, cells)
        if not reachable(current):
            raise LineError(f"events[{i}]", f"after step {step} the goal cannot be reached from the start")


# -- lifetimes (world/lifetimes.py) -------------------------------------------------

LIFETIME_FIELDS = ("id", "regime", "seed", "height", "width", "max_steps", "g0", "episodes")


def check_lifetime_line(data: Any, regime: str, height: int, width: int, episodes: int) -> None:
    """Every rule of a lifetime line on its own (the module docstring's, for a
    lifetime): the fields an instance line shares, each of its type and range;
    ``g0`` a grid of the manifest's size; exactly ``episodes`` episodes (the
    manifest's), each ``{changes, events}``, whose changes are distinct ice or
    hole cells on the grid and whose events follow the instance rules on the
    grid the episode starts on; the goal reachable on every grid an agent meets.
    (That line N is the lifetime of the instance on the instance file's line N
    is checked where both files are read: ``lifetimes.load``.)"""
    max_steps = _identity(data, LIFETIME_FIELDS, regime, height, width)
    end = _grid(data["g0"], "g0", height, width)
    if not reachable(end):
        raise LineError("g0", "the goal cannot be reached from the start")
    worlds = _list(data["episodes"], "episodes")
    if len(worlds) != episodes:
        raise LineError("episodes", f"holds {len(worlds)} episodes; the manifest says every lifetime has {episodes}")
    for k, world in enumerate(worlds):
        where = f"episodes[{k}]"
        if not isinstance(world, Mapping) or set(world) != {"changes", "events"}:
            raise LineError(where, f"must be {{changes, events}}, got {str(world)[:40]!r}")
        raw = _list(world["changes"], f"{where}.changes")
        changes = [_cell(c, f"{where}.changes[{j}]", height, width) for j, c in enumerate(raw)]
        for j, (r, c) in enumerate(changes):
            if end[r][c] not in (FROZEN, HOLE):
                raise LineError(f"{where}.changes[{j}]", f"({r},{c}) is {end[r][c]}: only ice and holes change")
        if len(set(changes)) != len(changes):
            twice = next(j for j, cell in enumerate(changes) if cell in changes[:j])
            raise LineError(f"{where}.changes[{twice}]", f"{changes[twice]} is listed twice")
        grid = flip_cells(end, changes)
        if not reachable(grid):
            raise LineError(f"{where}.changes", "the episode starts on a lake whose goal cannot be reached")
        events = _events(_list(world["events"], f"{where}.events"), grid, max_steps, f"{where}.events")
        for i, (step, cells) in enumerate(events):
            grid = flip_cells(grid, cells)
            if not reachable(grid):
                raise LineError(f"{where}.events[{i}]", f"after step {step} the goal cannot be reached from the start")
        end = grid
