"""Scripted reference agents for the ``lifelong`` task, served by the scripted
provider as ``spatialstale/diligent``, ``spatialstale/write_once``,
``spatialstale/amnesiac`` and ``spatialstale/credulous``.

They are deterministic and stateless: every reply is a function of the
request alone, i.e. of what a model is sent (the prompts, its own earlier
calls and the tools' answers in this episode's conversation). Each plans the
cheapest route on the lake it believes in: what it saw in this conversation
(latest sighting first), then its notes, unknown cells passable at
``world.grid.UNKNOWN_COST`` steps each, holes never; when its notes leave no way to
the goal, on what it saw alone (``route``).

- ``diligent`` views ``/memories/lake.md`` at the start of every episode,
  plans through its notes outside the window, and in each write-back rewrites
  the file with every cell it knows, each as last seen, in the recommended
  format (so every contradiction it saw is corrected);
- ``write_once`` plays as ``diligent`` but writes only when it found no notes
  (episode 1 of an empty store) and never updates them;
- ``amnesiac`` never touches memory;
- ``credulous`` plays as ``diligent`` but trusts its notes over its eyes: it
  plans through every cell its notes call SAFE, even one its view shows to
  be a hole (the Trust Gap's failure, which the task must count), unless the
  runtime labelled that note contradicted (``provenance=resolved``): it
  heeds the label, and the state it gives.

Every agent reads a viewed file without the runtime's stamps (``provenance=stamped``).

Offered no memory tool (``memory=none``) every one of them plays as
``amnesiac`` does: on what it sees.

The built-in policies (``spatialstale/observer`` and the rest,
``harness/belief.py``) play a lifetime too (``builtin_reply``): their moves
on their route (those that use memory view the notes file first, as in
``navigate -T memory_access=tool``), and they end each write-back turn without
a note.

In one conversation across the lifetime
(``memory=transcript``) what it sees is every sighting the request still
holds, from any episode, latest first (so without compaction each acts on its
latest sighting of every cell, as ``diligent`` does through its notes), and
when no way is left, on this episode's sightings alone. Asked for a summary
(Inspect's summary compaction: a request with no tools that ends with its
summary prompt) every agent answers with every cell it knows, as last seen,
in the recommended note format, and reads such a summary as notes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.tool import ToolInfo

from spatialstale_evals.harness.prompts import MOVE_DEATH, template_pattern
from spatialstale_evals.harness.scripted_turn import NO_NOTES, ScriptedTurn, move
from spatialstale_evals.harness.tokens import count_input_tokens, count_text_tokens
from spatialstale_evals.lifetime.notes import format_notes, parse_notes
from spatialstale_evals.lifetime.prompts import EPISODE_START, PAPER_MEMORY_PATH, WRITE_BACK
from spatialstale_evals.lifetime.provenance import CONTRADICTION, STAMP
from spatialstale_evals.world.grid import DELTAS, FROZEN, HOLE, UNSEEN, Cell, cheapest_path, first_move
from spatialstale_evals.world.observation import parse_text_observation

NOTES_PATH = PAPER_MEMORY_PATH
#: A death's answer, from the cell on (``template_pattern`` reads numbers; the direction is a word).
_DEATH = template_pattern(MOVE_DEATH.split("{direction}", 1)[1])
_NUMBERED = re.compile(r"^\s*\d+\t", re.MULTILINE)
#: The write-back turn's invitation (the fixed words of ``prompts.WRITE_BACK`` after the outcome).
_WRITE_BACK = WRITE_BACK.split("{next_episode}", 1)[1].split("{", 1)[0]
#: An episode's first prompt (``EPISODE_START``, which ``TRANSCRIPT_EPISODE_START`` begins with too).
_EPISODE = template_pattern(EPISODE_START)
#: The first words of Inspect's summary prompt and of the summary it keeps (``CompactionSummary``).
SUMMARY_REQUEST = "tasked with summarizing conversations"
SUMMARY_HEADER = "[CONTEXT COMPACTION SUMMARY]"


def _text(message: ChatMessage) -> str:
    error = getattr(message, "error", None)
    return message.text + (f"\n{error.message}" if error is not None else "")


def memory_commands(messages: Sequence[ChatMessage]) -> list[str]:
    """The ``command`` of every memory call the agent made in this conversation."""
    return [
        str((c.arguments or {}).get("command"))
        for m in messages
        if isinstance(m, ChatMessageAssistant)
        for c in m.tool_calls or []
        if c.function == "memory"
    ]


def viewed_notes(messages: Sequence[ChatMessage]) -> str | None:
    """The notes file as the latest memory answer showed it (its ``cat -n``
    lines unnumbered); empty when it did not exist; None before any answer."""
    for m in reversed(messages):
        if isinstance(m, ChatMessageTool) and m.function == "memory":
            text = _text(m)
            if "`cat -n`" not in text:
                return ""
            return STAMP.sub("", _NUMBERED.sub("", text.split("\n", 1)[1] if "\n" in text else ""))
    return None


def contradicted(messages: Sequence[ChatMessage]) -> dict[Cell, str]:
    """The cells the runtime said the view contradicts the notes on
    (``provenance=resolved``), each with the type it said the cell has now, latest last."""
    found: dict[Cell, str] = {}
    for m in messages:
        if isinstance(m, (ChatMessageUser, ChatMessageTool)) and "CONTRADICTED" in m.text:
            for hit in CONTRADICTION.finditer(m.text):
                found[(int(hit["row"]), int(hit["col"]))] = HOLE if hit["state"] == "HOLE" else FROZEN
    return found


@lru_cache(maxsize=8192)
def _observed(text: str) -> tuple[tuple[str, ...], Cell, Cell] | None:
    """The observation in one message's text (memoised: every request repeats
    the episode's earlier messages, and reading each again was most of an
    agent's cost); None when it holds none."""
    try:
        return parse_text_observation(text)
    except ValueError:
        return None


def sightings(messages: Sequence[ChatMessage]) -> tuple[dict[Cell, str], tuple[int, int], Cell, Cell] | None:
    """What this conversation showed: each cell's latest sighting (a death's
    cell as a hole), the lake's size, and the agent's and goal's cells now."""
    seen: dict[Cell, str] = {}
    shape, agent, goal = None, None, None
    for m in messages:
        if isinstance(m, ChatMessageTool) and (died := _DEATH.search(m.text)):
            seen[(int(died["row"]), int(died["col"]))] = HOLE
        # a step prompt, or (under react) a move's answer with the next view
        if isinstance(m, ChatMessageUser) or (isinstance(m, ChatMessageTool) and m.function == "move"):
            found = _observed(m.text)
            if found is None:
                continue
            grid, agent, goal = found
            shape = (len(grid), len(grid[0]))
            seen.update({(r, c): k for r, row in enumerate(grid) for c, k in enumerate(row) if k != UNSEEN})
    if shape is None or agent is None or goal is None:
        return None
    return seen, shape, agent, goal


def noted(messages: Sequence[ChatMessage], shape: tuple[int, int]) -> dict[Cell, str]:
    """The notes last viewed, as cell types: each cell claimed one way only
    (``H`` for a hole claim, ``F`` for a SAFE one)."""
    text = viewed_notes(messages) or ""
    notes = parse_notes({NOTES_PATH: text}, *shape)
    return {cell: (HOLE if made == {"HOLE"} else FROZEN) for cell, made in notes.claims.items() if len(made) == 1}


def summarized(messages: Sequence[ChatMessage], shape: tuple[int, int]) -> dict[Cell, str]:
    """The cells a compaction summary in the conversation claims (the latest summary's), as cell types."""
    text = next((m.text for m in reversed(messages) if isinstance(m, ChatMessageUser) and SUMMARY_HEADER in m.text), "")
    notes = parse_notes({"summary": text}, *shape)
    return {cell: (HOLE if made == {"HOLE"} else FROZEN) for cell, made in notes.claims.items() if len(made) == 1}


def believed(messages: Sequence[ChatMessage], shape: tuple[int, int], seen: dict[Cell, str]) -> dict[Cell, str]:
    """The notes last viewed and a compaction summary (as cell types), overwritten by what was seen."""
    return noted(messages, shape) | summarized(messages, shape) | seen


def this_episode(messages: Sequence[ChatMessage]) -> Sequence[ChatMessage]:
    """The messages from the latest episode's first prompt on (all of them when none is found)."""
    starts = [i for i, m in enumerate(messages) if isinstance(m, ChatMessageUser) and _EPISODE.search(m.text)]
    return messages[starts[-1] :] if starts else messages


def summary_text(messages: Sequence[ChatMessage]) -> str | None:
    """The answer to a request for a summary: every cell the conversation
    shows, as last seen (a summary's and notes' claims beneath), in the note
    format, then the latest view as it was shown (where the agent is now)."""
    last = messages[-1] if messages else None
    if not isinstance(last, ChatMessageUser) or SUMMARY_REQUEST not in last.text:
        return None
    found = sightings(messages)
    if found is None:
        return "Nothing seen yet."
    seen, shape, _, _ = found
    views = (m.text for m in reversed(messages) if isinstance(m, ChatMessageUser | ChatMessageTool))
    latest = next((text for text in views if SUMMARY_REQUEST not in text and _observed(text) is not None), "")
    return format_notes(believed(messages, shape, seen)) + "\nWhere I am now:\n" + latest


def _rows(cells: dict[Cell, str], shape: tuple[int, int]) -> tuple[str, ...]:
    return tuple("".join(cells.get((r, c), UNSEEN) for c in range(shape[1])) for r in range(shape[0]))


def route(belief: dict[Cell, str], seen: dict[Cell, str], shape: tuple[int, int], agent: Cell, goal: Cell) -> str:
    """The first move of the cheapest route on the belief; if the belief
    leaves no way to the goal (notes of holes that may have thawed), on what
    was seen alone; if there is none either, a safe stay: a move into the
    edge, else onto a neighbour not believed a hole, else UP."""
    for cells in (belief, seen):
        move = first_move(cheapest_path(_rows(cells, shape), agent, goal))
        if move is not None:
            return move
    for action, (dr, dc) in DELTAS.items():
        if not (0 <= agent[0] + dr < shape[0] and 0 <= agent[1] + dc < shape[1]):
            return action
    for action, (dr, dc) in DELTAS.items():
        if belief.get((agent[0] + dr, agent[1] + dc), UNSEEN) != HOLE:
            return action
    return "UP"


def _step(
    messages: Sequence[ChatMessage], reads_notes: bool, trusts_notes: bool = False
) -> tuple[str, dict[str, Any]] | str:
    """A step's call: view the notes first (agents that read them), then move.
    An agent that trusts its notes believes every cell they call SAFE to be
    ice, even one it sees as a hole."""
    if reads_notes and "view" not in memory_commands(messages):
        return "memory", {"command": "view", "path": NOTES_PATH}
    found = sightings(messages)
    if found is None:
        return "I cannot read the lake from this prompt."
    seen, shape, agent, goal = found
    belief = believed(messages, shape, seen) if reads_notes else summarized(messages, shape) | seen
    if trusts_notes:  # it trusts a SAFE note over its eyes, unless the runtime labelled the note contradicted
        refuted = contradicted(messages)
        belief |= {cell: FROZEN for cell, kind in noted(messages, shape).items() if kind == FROZEN}
        belief |= refuted
    here = sightings(this_episode(messages))
    return "move", {"direction": route(belief, here[0] if here else seen, shape, agent, goal)}


def _write_back(messages: Sequence[ChatMessage], only_first: bool) -> tuple[str, dict[str, Any]] | str:
    """The write-back: rewrite the notes with every known cell, once (for
    ``only_first``: only when there were no notes)."""
    start = max(i for i, m in enumerate(messages) if isinstance(m, ChatMessageUser))
    if "create" in memory_commands(messages[start:]):
        return "Notes saved."
    found = sightings(messages)
    notes = viewed_notes(messages[:start])
    if found is None or (only_first and notes):
        return "Nothing to update."
    seen, shape, _, _ = found
    text = format_notes(believed(messages, shape, seen))
    return "memory", {"command": "create", "path": NOTES_PATH, "file_text": text}


@dataclass(frozen=True)
class Policy:
    """A reference agent: whether it reads its notes (and plans through them),
    how it writes them back (``always``: every known cell after every
    episode; ``once``: only when it found none; ``never``), and whether it
    trusts a SAFE note over a hole it sees. Offered no memory tool
    (``memory=none``) it plays on what it sees, as ``amnesiac``."""

    reads_notes: bool
    writes: Literal["always", "once", "never"]
    trusts_notes: bool = False

    def reply(self, messages: Sequence[ChatMessage], moving: bool, memory: bool) -> tuple[str, dict[str, Any]] | str:
        """The call (or text) it answers a request with: a step when ``move``
        is offered, else the write-back; ``memory``: whether the memory tool is offered."""
        if moving:
            reads = self.reads_notes and memory
            return _step(messages, reads, self.trusts_notes and reads)
        if self.writes == "never" or not memory:
            return "Nothing to save."
        return _write_back(messages, self.writes == "once")


#: The agents by name (``spatialstale/<name>``).
LIFETIME_AGENTS: dict[str, Policy] = {
    "diligent": Policy(reads_notes=True, writes="always"),
    "write_once": Policy(reads_notes=True, writes="once"),
    "amnesiac": Policy(reads_notes=False, writes="never"),
    "credulous": Policy(reads_notes=True, writes="always", trusts_notes=True),
}


def lifetime_output(policy: str, model: str, messages: list[ChatMessage], tools: list[ToolInfo]) -> ModelOutput:
    """The agent's reply to one request, with tokens counted as the scripted
    provider counts every agent's (``harness/tokens.py``)."""
    offered = {t.name for t in tools}
    summary = None if offered else summary_text(messages)
    policy_reply = LIFETIME_AGENTS[policy].reply
    choice = summary if summary is not None else policy_reply(messages, "move" in offered, "memory" in offered)
    usage_in = count_input_tokens(messages, tools)
    if isinstance(choice, str):
        output, out_text = ModelOutput.from_content(model, choice), choice
    else:
        function, arguments = choice
        call_id = f"call_{len(messages)}_{function}"
        output = ModelOutput.for_tool_call(model, function, arguments, tool_call_id=call_id, content="")
        out_text = function + json.dumps(arguments)
    out = count_text_tokens(out_text)
    output.usage = ModelUsage(input_tokens=usage_in, output_tokens=out, total_tokens=usage_in + out)
    return output


def builtin_reply(turn: ScriptedTurn) -> ModelOutput | str | None:
    """A built-in policy's step (its move, or the view of the notes before it)
    or its write-back turn (``prompts.WRITE_BACK``: it keeps no notes, so it ends the turn)."""
    if turn.moving:
        return move(turn, NOTES_PATH)
    return NO_NOTES if _WRITE_BACK in turn.prompt.text else None
