"""The runtime's record of who wrote each line of the memory, and what the
agent is shown of it (``lifelong -T provenance=...``, ``memory=shared``).

The Memory Trust Gap paper argues the runtime, not the model, should settle
whether an old note or the present view has authority, before the context is
built. This module keeps what that needs and nothing the agent can see:

- :class:`Ledger`: every write that succeeded (its author, episode, phase,
  command and path) and every write refused (``scout_access=readonly``), and
  a *blame* of every line of every file: the episode and author that last
  wrote it. A write changes the blame only where it changed the text: a line
  whose exact text was in the store before the write keeps its stamp (a
  rewrite with ``create`` that repeats a line does not make it newer), every
  other line is stamped with the write's episode and author (``git blame``'s
  rule, by text).
- :func:`runtime_memory`: the memory tool the agents are given. It is the
  quota-bounded tool (same name, description and parameters, so a
  provider's native binding, Anthropic's ``memory_20250818`` which Inspect
  binds by the tool's name and parameter names, is kept) that records each
  write in the ledger, refuses writes of a read-only author (a tool error,
  counted), and under ``provenance=stamped`` or ``resolved`` annotates the
  answer to a ``view`` of a file: each line that holds a claim is shown with
  :data:`ASSERTED` (the episode that last wrote it); under ``resolved`` a
  line about a cell the agent sees now, claiming what the view contradicts,
  is shown with :data:`CONTRADICTED` (the cell's state now) instead. The
  files stay what the agent wrote: only the answer is annotated, and the
  notes are scored from the files.
- :func:`step_labels`: what the step prompt adds: :data:`VERIFIED` (the view
  is the lake now) and, under ``resolved``, one :data:`CONTRADICTED_NOTE`
  line per note the view contradicts.

Under ``provenance=none`` with ``memory=notes`` none of this runs (the tool and
the prompts are the ones the task had before: byte-identical samples).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from inspect_ai.tool import Tool, ToolDef, ToolError
from inspect_ai.util import store_as

from spatialstale_evals.harness.memory_tool import MemoryStore, canonical
from spatialstale_evals.lifetime.note_forms import read_line
from spatialstale_evals.lifetime.notes import claim_of_kind
from spatialstale_evals.world.grid import UNSEEN, Cell, Grid

#: The values of the task's ``provenance`` parameter (the default first).
ProvenanceName = Literal["none", "stamped", "resolved"]
PROVENANCES: tuple[str, ...] = get_args(ProvenanceName)
#: The ``memory`` arms whose notes can be stamped.
PROVENANCE_MEMORIES = ("notes", "shared")
#: Who wrote a line that was in the store before any agent wrote (``initial_memory=paper``).
SEEDED = "seeded"

#: A claim line of a viewed file under ``stamped`` (and ``resolved``, when nothing contradicts it).
ASSERTED = "  [asserted; last written in episode {episode}]"
#: A claim line under ``resolved`` about a cell in view whose state contradicts it.
CONTRADICTED = "  [CONTRADICTED by the current view: ({row},{col}) is {state} now; last written in episode {episode}]"
#: Added to every step prompt under ``stamped`` and ``resolved``.
VERIFIED = "Verified now: the view above is the lake as it is at this step; your notes are assertions from the past."
#: One per note the current view contradicts, under ``resolved``.
CONTRADICTED_NOTE = (
    "CONTRADICTED by the current view: ({row},{col}) is {state} now; your notes say {claim} "
    "(last written in episode {episode})."
)
#: A stamp at the end of a viewed line (how an agent, and the scripted ones, strip it).
STAMP = re.compile(r"  \[(?:asserted|CONTRADICTED by the current view)[^\]\n]*\]$", re.MULTILINE)
#: A contradiction shown to the agent (in a view's stamp or a step prompt): the cell and its state now.
CONTRADICTION = re.compile(
    r"CONTRADICTED by the current view: \((?P<row>\d{1,4}),(?P<col>\d{1,4})\) is (?P<state>SAFE|HOLE) now"
)
#: A line of the memory tool's ``cat -n`` answer.
_NUMBERED = re.compile(r"^(?P<num>\s*\d+)\t(?P<text>.*)$")
#: The answer to a write by a read-only author.
READ_ONLY = "Not written: your access to /memories is read-only; you can view files but not change them."
#: Memory commands that read (every other command writes).
READS = ("view",)


@dataclass
class Ledger:
    """The runtime's provenance of the memory store (module docstring): the
    writes made and refused, the views answered (what the agent was shown),
    and each file's blame: path -> one ``[text, episode, author]`` per line."""

    writes: list[dict[str, Any]] = field(default_factory=list)
    refused: list[dict[str, Any]] = field(default_factory=list)
    views: list[dict[str, Any]] = field(default_factory=list)
    blame: dict[str, list[list[Any]]] = field(default_factory=dict)

    def seed(self, files: Mapping[str, str]) -> None:
        """Lines in the store before any write: written in episode 0 by ``seeded``."""
        self.blame = {path: [[line, 0, SEEDED] for line in text.split("\n")] for path, text in files.items()}

    def reblame(self, files: Mapping[str, str], episode: int, author: str) -> None:
        """The blame after a write that left the store holding ``files``."""
        pool: dict[str, list[list[Any]]] = {}
        for lines in self.blame.values():
            for entry in lines:
                pool.setdefault(entry[0], []).append(entry)
        blame: dict[str, list[list[Any]]] = {}
        for path, text in files.items():
            blame[path] = []
            for line in text.split("\n"):
                kept = pool.get(line)
                blame[path].append(list(kept.pop(0)) if kept else [line, episode, author])
        self.blame = blame

    def stamp(self, path: str, number: int) -> tuple[int, str] | None:
        """The (episode, author) of line ``number`` (from 1) of ``path``, if the blame has it."""
        lines = self.blame.get(path, [])
        return (int(lines[number - 1][1]), str(lines[number - 1][2])) if 0 < number <= len(lines) else None

    def by_author(self, files: Mapping[str, str]) -> dict[str, dict[str, str]]:
        """The store's lines split by who last wrote them: author -> path -> text
        (a line the blame does not know, written behind the tool's back, is ``seeded``)."""
        parts: dict[str, dict[str, list[str]]] = {}
        for path, text in files.items():
            lines = self.blame.get(path, [])
            for i, line in enumerate(text.split("\n")):
                author = str(lines[i][2]) if i < len(lines) and lines[i][0] == line else SEEDED
                parts.setdefault(author, {}).setdefault(path, []).append(line)
        return {a: {p: "\n".join(ls) for p, ls in paths.items()} for a, paths in parts.items()}


@dataclass
class Session:
    """What the runtime knows of the episode under way: its index, its author
    (``walker``, or ``scout`` under ``memory=shared``), whether that author may
    write, the phase (``step`` or ``write_back``) and the episode itself (the
    view now, the lake now); the provenance setting, the lake's size, the ledger."""

    provenance: str = "none"
    episode: int = 0
    author: str = "walker"
    writable: bool = True
    phase: str = "step"
    #: The episode being played (a ``LifeEpisode``: its ``seen`` and ``grid`` now), None before the first.
    current: Any = None
    height: int = 0
    width: int = 0
    ledger: Ledger = field(default_factory=Ledger)

    def begin(self, episode: int, author: str, writable: bool, current: Any) -> None:
        """A new episode: its index, its author and whether it may write, the episode object."""
        self.episode, self.author, self.writable, self.phase, self.current = episode, author, writable, "step", current

    @property
    def view(self) -> Grid | None:
        """The lake as the agent sees it now (``?`` out of view)."""
        return None if self.current is None else self.current.seen

    @property
    def truth(self) -> Grid | None:
        """The lake as it is now."""
        return None if self.current is None else self.current.grid


def _contradiction(cells: list[tuple[Cell, str]], view: Grid | None) -> tuple[Cell, str] | None:
    """The first (cell, state now) of a line's claims that the view contradicts."""
    for (r, c), claim in cells:
        if view is not None and 0 <= r < len(view) and 0 <= c < len(view[0]) and view[r][c] != UNSEEN:
            now = claim_of_kind(view[r][c])
            if now != claim:
                return (r, c), now
    return None


def claims_read(text: str, path: str, session: Session) -> list[list[Any]]:
    """The claims of a file the agent viewed, each ``[row, col, claim, writer,
    written_episode, truth_now]`` (``truth_now``: the claim true of the cell
    on the lake at the moment of the view), one per distinct claim line's claim."""
    out: list[list[Any]] = []
    for i, line in enumerate(text.split("\n"), start=1):
        stamp = session.ledger.stamp(path, i) or (0, SEEDED)
        for (r, c), claim in read_line(line, session.height, session.width).claims:
            now = claim_of_kind(session.truth[r][c]) if session.truth is not None else None
            out.append([r, c, claim, stamp[1], stamp[0], now])
    return out


def annotate_view(answer: str, path: str, session: Session) -> str:
    """The memory tool's ``cat -n`` answer with each claim line stamped
    (module docstring); lines without a claim, and the header, unchanged."""
    out = []
    for line in answer.split("\n"):
        found = _NUMBERED.match(line)
        stamp = session.ledger.stamp(path, int(found["num"])) if found else None
        claims = read_line(found["text"], session.height, session.width).claims if found else []
        if found is None or stamp is None or not claims:
            out.append(line)
            continue
        contradicted = _contradiction(claims, session.view) if session.provenance == "resolved" else None
        if contradicted is not None:
            (r, c), now = contradicted
            out.append(line + CONTRADICTED.format(row=r, col=c, state=now, episode=stamp[0]))
        else:
            out.append(line + ASSERTED.format(episode=stamp[0]))
    return "\n".join(out)


def step_labels(session: Session, files: Mapping[str, str]) -> list[str]:
    """What the step prompt adds (module docstring): nothing under ``none``."""
    if session.provenance == "none":
        return []
    labels = [VERIFIED]
    if session.provenance == "resolved":
        shown: set[tuple[Cell, str]] = set()
        for path, text in files.items():
            for i, line in enumerate(text.split("\n"), start=1):
                claims = read_line(line, session.height, session.width).claims
                found = _contradiction(claims, session.view)
                stamp = session.ledger.stamp(path, i)
                if found is None or (found, claims[0][1]) in shown:
                    continue
                shown.add((found, claims[0][1]))
                (r, c), now = found
                claim = next(cl for cell, cl in claims if cell == (r, c))
                labels.append(CONTRADICTED_NOTE.format(row=r, col=c, state=now, claim=claim,
                                                       episode=stamp[0] if stamp else 0))  # fmt: skip
    return labels


def runtime_memory(inner: Tool, session: Session) -> Tool:
    """``inner`` (the bounded memory tool) with the ledger kept, a read-only
    author's writes refused and counted, and views annotated (module docstring)."""
    tdef = ToolDef(inner)

    async def execute(**kwargs: Any) -> Any:
        command, path = kwargs.get("command"), canonical(kwargs.get("path"))
        entry = {"episode": session.episode, "author": session.author, "phase": session.phase,
                 "command": command, "path": path}  # fmt: skip
        if command not in READS and not session.writable:
            session.ledger.refused.append(entry)
            raise ToolError(READ_ONLY)
        before = dict(store_as(MemoryStore).files)
        result = await inner(**kwargs)
        files = dict(store_as(MemoryStore).files)
        if command not in READS:
            if files != before:
                session.ledger.reblame(files, session.episode, session.author)
            session.ledger.writes.append(entry)
            return result
        if path in files and isinstance(result, str):
            session.ledger.views.append(entry | {"read": claims_read(files[path], path, session)})
            return annotate_view(result, path, session) if session.provenance != "none" else result
        return result

    return ToolDef(
        execute, name=tdef.name, description=tdef.description, parameters=tdef.parameters, parallel=tdef.parallel,
        viewer=tdef.viewer, model_input=tdef.model_input, options=tdef.options,
    ).as_tool()  # fmt: skip
