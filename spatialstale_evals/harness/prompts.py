"""Every prompt and tool-result string the suite sends, in one place, versioned.

Prompts explain the task and the reply format and give nothing away: no
labels, no count of stale entries, no hint of which cells changed. Changing
any text here changes what models see, so bump PROMPT_VERSION (it is recorded
in every sample's metadata) and the task version.

The exact public formats that are not prompts (docs/specification.md#public-formats-and-versions)
live beside the code that writes and reads them: the memory entry text in
``world/memory.py``, the text observation in ``world/observation.py``. Image captions name the colours the
renderer uses (``world/render.py``, each palette's ``names``), filled in by
``harness/observe.py``. Readers of these strings (the scripted agents) parse
them with patterns made from the templates themselves (``template_pattern``).

1.1 added the strings of ``view_radius`` and ``filter_mode`` (and the
resolver's label). 2.0 moved the navigator's "memory notes may be out of date"
line out of its default system message into ``memory_framing=warn`` (the
paper's protocol has no such line) and added the strings of the other
factors (memory styles and framings, the marked note, the image captions'
label sentence); with ``memory_framing="warn"`` and the other factors at
their defaults every 1.1 prompt is sent unchanged (``tests/test_determinism.py``).
2.1 added the strings of ``output="edit"`` (the edit request and the label of a
corrected entry, ``filter_mode="correct"``); no earlier text changed, so every
2.0 prompt is sent unchanged.
2.2 (and the probes' 1.1) changed no string here: a user message that holds an
image now sends each run of adjacent text parts as one part, joined by a newline
(``observe.user_message``), where it sent them as parts that providers, chat
templates and ``inspect view`` joined with nothing between them (the last
memory note ran into the image caption: "...safe to walkCurrent observation:").
Every text-only message, so every text-mode prompt, is sent byte for byte as
before (``tests/test_determinism.py``).
2.4 (and STALE's 1.2) added the strings of ``memory_access=tool`` (navigate's
``NAVIGATE_MEMORY_TOOL`` here, the memory calls' refusal in
``navigation/memory_access.py``; STALE's system message and refusal in
``stale_corpus/memory_access.py``); no earlier text changed.

The probe and stale tasks keep their prompts in their own packages
(``probing/prompts.py``, ``stale_corpus/prompts.py``), each at its own version.
"""

from __future__ import annotations

import re

PROMPT_VERSION = "2.4"

#: What each cell type is, in the colour key of an image caption (``?`` only
#: in an image with cells out of view).
CELL_MEANINGS = {
    "F": "frozen ice (F, safe)",
    "H": "hole (H, deadly)",
    "S": "start (S)",
    "G": "goal (G)",
    "?": "out of view (?)",
}

AUDIT_SYSTEM = """\
You audit an agent's stored memory of a grid world against what the world looks like now.

The world is a grid of cells addressed as (row, col), row 0 at the top. Cell types:
S = start (safe), F = frozen ice (safe), H = hole (deadly), G = goal (safe).
Each memory entry was written in the past and claims a cell is SAFE or DANGER (a hole).
Since then some cells may have changed between ice and hole. An entry is STALE when its
claim no longer matches the current cell: SAFE where the cell is now a hole, or DANGER
where the cell is now safe. Otherwise it is VALID. Judge every entry only against the
current observation."""

#: Heads the text observation (the exact row lines follow).
TEXT_OBSERVATION = "Current observation:\n{observation}"

#: The caption of the image in an audit: the colour key, then the agent/goal line.
AUDIT_OBSERVATION_IMAGE = (
    "Current observation: the image shows the grid. Colours: {colours}; the {marker} marks "
    "the agent. {labels}\n{position}"
)

AUDIT_BINARY = """\
Memory entries to audit ({count}):
{entries}

Reply with a JSON list holding exactly one object per entry above, in any order:
[{{"memory_id": "mem_000", "is_stale": true, "confidence": 0.9, "reasoning": "short reason"}}]
"is_stale" is true or false; "confidence" is a number from 0.0 to 1.0. Reply with the JSON only."""

AUDIT_CONTINUOUS = """\
Memory entries to audit ({count}):
{entries}

Reply with a JSON list holding exactly one object per entry above, in any order:
[{{"memory_id": "mem_000", "staleness": 0.9, "reasoning": "short reason"}}]
"staleness" is your probability from 0.0 (certainly valid) to 1.0 (certainly stale).
Reply with the JSON only."""

#: ``output="edit"`` (edit proposals): each verdict also proposes the claim that holds now.
AUDIT_EDIT = """\
Memory entries to audit ({count}):
{entries}

Reply with a JSON list holding exactly one object per entry above, in any order:
[{{"memory_id": "mem_000", "is_stale": true, "corrected": "DANGER", "confidence": 0.9, "reasoning": "short reason"}}]
"is_stale" is true or false; "confidence" is a number from 0.0 to 1.0.
"corrected" is the claim that is true of the cell now, SAFE or DANGER, when the entry is stale; null when it is valid.
Reply with the JSON only."""

#: The navigator's system message: the rules, then the framing line of
#: ``memory_framing`` (none by default: the paper gives the navigator no rule
#: about memory), then how to act.
NAVIGATE_RULES = """\
You control an agent on a frozen lake, a grid of cells addressed as (row, col), row 0 at the top.
Cell types: S = start, F = frozen ice (safe), H = hole (stepping in ends the episode: you lose),
G = goal (reach it to win). UP decreases the row, DOWN increases it, LEFT decreases the column,
RIGHT increases it; a move off the grid leaves you in place and still costs a step."""
NAVIGATE_TURN = """\
Each turn, choose exactly one move by calling the tool `move` once with direction UP, DOWN,
LEFT or RIGHT."""
#: ``memory_framing``: the line between the rules and the turn.
FRAMINGS: dict[str, str | None] = {
    "none": None,
    "warn": "The lake can change over time, and memory notes written in the past may be out of date.",
    "prefer_current": "If a memory note conflicts with what you observe now, trust the observation.",
}

NAVIGATE_STEP = """\
Your position: ({row},{col}). Goal: ({goal_row},{goal_col}). Steps left: {steps_left}.
Call `move` with your next direction."""

#: The caption of the image in a navigation step.
NAVIGATE_OBSERVATION_IMAGE = (
    "Current observation: the image shows the lake. Colours: {colours}; the {marker} is you. {labels}"
)
#: The image captions' sentence on the cell labels (``image_labels``, and a
#: palette that writes each cell's type letter).
IMAGE_LABELS = {
    "coordinates": "Each cell is labelled with its (row,col) in its top-left corner.",
    "type_letters": "Each cell is labelled with its (row,col) in its top-left corner and its type letter below it.",
    "none": "Cells are not labelled: row 0 is the top row, column 0 the leftmost column.",
}

NAVIGATE_MEMORY = "Memory notes ({count}):\n{entries}"
NAVIGATE_MEMORY_EMPTY = "Memory notes: none remain."
#: Where the memory section stands with ``memory_access=tool``: the notes are in the memory store.
NAVIGATE_MEMORY_TOOL = "Your memory notes about the lake are in your memory directory, /memories."

# -- how memory is written (``memory_style``) ----------------------------------------

#: What each style appends to an entry: (for a cell the walks stood on,
#: formatted with ``times``, ``walks``, ``total``, ``walk``, ``step``; for a
#: cell no walk reached, filled in). ``detailed``: the entry's provenance, from
#: the exploration it was written from; ``confident``: an assertion of certainty.
STYLE_SUFFIXES: dict[str, tuple[str, str]] = {
    "plain": ("", ""),
    "detailed": (
        " (explored: seen {times} times on {walks} of the {total} walks, first on walk {walk} at step {step})",
        " (explored: never visited; filled in without a visit)",
    ),
    "confident": (" (certain: confirmed by {walks} of the {total} walks)", " (certain)"),
}

# -- partial observation (``view_radius``) -----------------------------------------

#: Before the observation in every navigation step with a view radius;
#: ``{unseen}`` is the observation option's own wording (``observe.py``).
NAVIGATE_PARTIAL = (
    "You see only the cells within {radius} rows and columns of your position; "
    "cells out of view {unseen} (what they are now is unknown)."
)
#: Before the entries of an audit whose observation has cells out of view.
AUDIT_PARTIAL = "Cells shown as ? are out of view; every entry below is about a cell in view."

# -- how a judged memory entry reads (``filter_mode``) --------------------------

#: ``mark``: the claim of a contradicted entry replaced by an unknown marker.
FILTER_MARK = "[{id}] UNKNOWN at ({row},{col}): this note was found out of date; what the cell is now is unknown"
#: ``mark`` for a distractor note (it has no cell).
FILTER_MARK_NOTE = "[{id}] UNKNOWN: this note was found out of date"
#: ``history``: appended to a contradicted entry, kept as written.
FILTER_HISTORY = " [out of date: contradicted by what was seen at step {step}]"
#: ``history`` under ``oracle``: the ground truth, not an observation, found it out of date
#: (under partial observation its cell may never have been in view).
FILTER_HISTORY_TRUTH = " [out of date as of step {step}: told by the ground truth, not by an observation]"
#: ``correct``: a contradicted entry rewritten with the corrected claim (edit proposals),
#: then this label with the claim it was written with.
FILTER_CORRECTED = " [corrected at step {step}: written as {claim}, out of date]"
#: Appended to an entry the runtime resolver has not seen the cell of (``resolve``).
UNVERIFIED = " [unverified: written before this episode, its cell not seen since]"

MOVE_TOOL_DESCRIPTION = "Move the agent one cell. Call exactly once per turn."
MOVE_DIRECTION_DESCRIPTION = "One of UP, DOWN, LEFT, RIGHT."

# -- what the ``move`` tool answers (the environment's side of each turn) ---------

MOVE_DEATH = "Moved {direction} into a hole at ({row},{col}). Episode over: death."
MOVE_SUCCESS = "Moved {direction} and reached the goal at ({row},{col}). Episode over: success."
MOVE_MOVED = "Moved {direction} to ({row},{col})."
MOVE_BUMPED = "Bumped into the edge; still at ({row},{col})."
MOVE_TIMEOUT = "{where} Step budget used up. Episode over: timeout."
MOVE_CONTINUE = "{where} Steps left: {steps_left}."
#: Prefixed to the move's result when the reply had no valid ``move`` call.
MOVE_FALLBACK = "No valid move call ({problem}); fallback moved {direction}. "
#: The answer to every call after the first in one reply.
MOVE_IGNORED = "Ignored: one move per turn."
#: Why a reply yields no move (``MOVE_FALLBACK``'s ``{problem}``).
NO_TOOL_CALL = "no tool call"
UNKNOWN_TOOL = "unknown tool {function!r}"
UNPARSEABLE_ARGUMENTS = "unparseable arguments: {error}"
NO_DIRECTION = "move called without a direction"
INVALID_DIRECTION = "invalid direction {value!r}"

#: A sample's placeholder input (what ``inspect view`` lists; the solvers build
#: the real prompts).
SAMPLE_INPUT = "SpatialSTALE {task} {instance_id} ({params})"


def template_pattern(template: str) -> re.Pattern[str]:
    """A regex that matches ``template`` with each ``{field}`` as a number
    (named group; a repeated field must repeat the number), so a reader of a prompt parses the very string the writer
    formats (the scripted agents read the step line this way)."""
    parts, seen, body = re.split(r"\{(\w+)\}", template), set(), ""
    for i, part in enumerate(parts):
        if i % 2 == 0:
            body += re.escape(part)
        else:  # a field written twice must read the same number twice
            body += f"(?P={part})" if part in seen else f"(?P<{part}>-?\\d+)"
            seen.add(part)
    return re.compile(body)
