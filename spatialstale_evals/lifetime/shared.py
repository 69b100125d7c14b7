"""``lifelong -T memory=shared``: two agents, one memory store.

The episodes of a lifetime alternate between the ``walker`` (odd episodes,
the task's model) and the ``scout`` (even episodes, Inspect's model role
``scout``: ``--model-role scout=<model>``, default the task's model). Each
episode is a fresh conversation with the memory tool; both write the same
``/memories``. ``scout_access=readonly`` lets the scout read but refuses its
writes (a tool error it sees, counted). The runtime keeps the provenance
(``provenance.Ledger``: who wrote each line, in which episode), which the
agents never see, and from it each episode's record gets (``shared_record``):

- the notes at the episode's start split by author and scored like all notes
  (``note_scores``, the knowable cells each author's lines tell right:
  ``note_balanced`` per author);
- **stale propagation**, per writer: the distinct claims of that writer's
  lines that the episode's agent (the reader) viewed while they were false
  on the lake (``stale_read``); of those, the ones it acted on: a SAFE claim
  on a hole it then died in (``hazard_deaths``), or a HOLE claim on ice on a
  shortest safe path of the lake that it never entered in an episode that
  was not a shortest-path success (``detours``); and the ones it repaired
  (its notes at the end of the episode claim the cell exactly as it is).

The writes made and refused are listed in the record too. A writer and its
reader may be one agent (its own stale note); the report's trust-gap view
has a row per (writer, reader) pair (``tables.propagation_rows``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, get_args

from inspect_ai.model import Model

from spatialstale_evals.lifetime import prompts
from spatialstale_evals.lifetime.measures import CLASSES, balanced
from spatialstale_evals.lifetime.notes import Notes, note_scores, parse_notes
from spatialstale_evals.lifetime.provenance import SEEDED, Ledger
from spatialstale_evals.lifetime.records import knowable_counts
from spatialstale_evals.world.env import SUCCESS
from spatialstale_evals.world.grid import Cell, Grid, path_steps

#: The two agents of ``memory=shared``, in the order they play (episode 1 is the walker's).
AUTHORS = ("walker", "scout")
#: The Inspect model role of the second agent.
SCOUT_ROLE = "scout"
#: The values of ``scout_access`` (the default first).
ScoutAccess = Literal["readwrite", "readonly"]
SCOUT_ACCESS: tuple[str, ...] = get_args(ScoutAccess)
#: Every author a line can have (the seed's lines included).
WRITERS = (*AUTHORS, SEEDED)
#: The propagation counts per (writer, reader), in the record and the sample's counts.
PROPAGATION_KEYS = ("read", "stale_read", "acted_on", "hazard_deaths", "detours", "repaired")


def author_of(episode: int) -> str:
    """Who plays episode ``episode`` (from 1): the walker the odd ones, the scout the even ones."""
    return AUTHORS[(episode - 1) % len(AUTHORS)]


def writable(settings: Any, episode: int) -> bool:
    """Whether the agent of ``episode`` may write: all do but a read-only scout."""
    return not (settings.memory == "shared" and settings.scout_access == "readonly" and author_of(episode) == "scout")


def system_prompt(settings: Any, author: str) -> str:
    """The system prompt of an episode played by ``author``: the arm's, and
    for a read-only scout the sentence saying so."""
    text = settings.system_text()
    if settings.memory == "shared" and settings.scout_access == "readonly" and author == "scout":
        text += prompts.SCOUT_READ_ONLY
    return text


def agent_models(settings: Any, model: Model, scout: Model) -> dict[str, Model]:
    """The model of each author: the task's for the walker; for the scout,
    under ``memory=shared``, ``scout`` (the model role, default the task's)."""
    return {"walker": model, "scout": scout if settings.memory == "shared" else model}


def _distances(grid: Grid, source: Cell) -> dict[Cell, int]:
    """Moves from ``source`` to every cell reachable over non-hole cells."""
    from collections import deque

    h, w = len(grid), len(grid[0])
    dist, queue = {source: 0}, deque([source])
    while queue:
        r, c = queue.popleft()
        for nr, nc in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1)):
            if 0 <= nr < h and 0 <= nc < w and (nr, nc) not in dist and grid[nr][nc] != "H":
                dist[(nr, nc)] = dist[(r, c)] + 1
                queue.append((nr, nc))
    return dist


def on_shortest_path(grid: Grid, start: Cell, goal: Cell, cell: Cell) -> bool:
    """Whether ``cell`` lies on some shortest safe path from ``start`` to ``goal``."""
    ahead, behind = _distances(grid, start), _distances(grid, goal)
    shortest = ahead.get(goal)
    return shortest is not None and ahead.get(cell, -1) + behind.get(cell, -1) == shortest and cell in ahead


def propagation(
    views: list[dict[str, Any]], reader: str, record: Mapping[str, Any], grid: Grid, end: Notes
) -> dict[str, dict[str, int]]:
    """Per writer: the claims the reader read and the stale ones, acted on and
    repaired (module docstring) in one episode, from the views it made
    (``Ledger.views``, each with the claims read) and its record."""
    read: dict[str, set[tuple[int, int, str, str]]] = {}
    for view in views:
        for r, c, claim, writer, _, now in view["read"]:
            read.setdefault(str(writer), set()).add((r, c, claim, now))
    start = tuple(record["trajectory"][0])
    goal = (len(grid) - 1, len(grid[0]) - 1)
    goal = next(((r, c) for r, row in enumerate(grid) for c, k in enumerate(row) if k == "G"), goal)
    entered = {tuple(p) for p in record["trajectory"]}
    death = tuple(record["death_cell"]) if record.get("death_cell") else None
    best = record["outcome"] == SUCCESS and record["steps"] == path_steps(grid)
    out: dict[str, dict[str, int]] = {}
    for writer, claims in read.items():
        counts = dict.fromkeys(PROPAGATION_KEYS, 0)
        counts["read"] = len(claims)
        for r, c, claim, now in claims:
            if now is None or claim == now:
                continue
            counts["stale_read"] += 1
            hazard = claim == "SAFE" and death == (r, c)
            detour = claim == "HOLE" and not best and (r, c) not in entered
            detour = detour and on_shortest_path(grid, start, goal, (r, c))
            counts["hazard_deaths"] += hazard
            counts["detours"] += detour
            counts["acted_on"] += hazard or detour
            counts["repaired"] += end.claims.get((r, c), set()) == {now}
        out[writer] = counts
    return out


def by_author(
    ledger: Ledger, files: Mapping[str, str], grid: Grid, ever_seen: set[Cell], last_seen: Mapping[Cell, str],
    height: int, width: int,
) -> dict[str, dict[str, Any]]:  # fmt: skip
    """The notes at an episode's start split by the author of each line, each
    part scored like all notes: its note scores, knowable counts and ``note_balanced``."""
    out: dict[str, dict[str, Any]] = {}
    for author, part in ledger.by_author(files).items():
        notes = parse_notes(part, height, width)
        knowable = knowable_counts(notes, grid, last_seen)
        shares = balanced((knowable[f"told_{c}"], knowable[f"knowable_{c}"]) for c in CLASSES)
        out[author] = {
            "notes": note_scores(notes, grid, ever_seen),
            "knowable": knowable,
            "note_balanced": None if shares != shares else shares,
        }
    return out


def shared_record(
    ledger: Ledger, episode: int, reader: str, record: Mapping[str, Any], grid: Grid, end: Notes,
    authored: dict[str, dict[str, Any]],
) -> dict[str, Any]:  # fmt: skip
    """What ``memory=shared`` adds to an episode's record (module docstring)."""
    views = [v for v in ledger.views if v["episode"] == episode]
    strip = ("episode", "author")
    return {
        "author": reader,
        "writes": [{k: v for k, v in w.items() if k not in strip} for w in ledger.writes if w["episode"] == episode],
        "refused_writes": sum(r["episode"] == episode for r in ledger.refused),
        "views": len(views),
        "by_author": authored,
        "propagation": propagation(views, reader, record, grid, end),
    }


def shared_counts(record: Mapping[str, Any]) -> dict[str, float]:
    """The sample counts of an episode's ``shared`` part: per author the
    knowable counts of its lines (``author_<a>_told_safe`` ...), per
    (writer, reader) the propagation counts (``prop_<writer>_<reader>_<key>``),
    the refused writes. Nothing for an episode of another arm."""
    shared = record.get("shared")
    if not shared:
        return {}
    counts: dict[str, float] = {"refused_writes": float(shared["refused_writes"])}
    for author, part in shared["by_author"].items():
        counts |= {f"author_{author}_{k}": float(v) for k, v in part["knowable"].items()}
        counts[f"author_{author}_hazard_claims"] = float(part["notes"]["hazard_claims"])
        counts[f"author_{author}_stale_claims"] = float(part["notes"]["stale_claims"])
    for writer, prop in shared["propagation"].items():
        counts |= {f"prop_{writer}_{shared['author']}_{k}": float(v) for k, v in prop.items()}
    return counts
