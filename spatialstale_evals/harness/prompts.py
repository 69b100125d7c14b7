"""Every prompt the suite sends, in one place, versioned.

Prompts explain the task and the reply format and give nothing away: no
labels, no count of stale entries, no hint of which cells changed. Changing
any text here changes what models see, so bump PROMPT_VERSION (it is recorded
in every sample's metadata).
"""

from __future__ import annotations

PROMPT_VERSION = "1.0"

AUDIT_SYSTEM = """\
You audit an agent's stored memory of a grid world against what the world looks like now.

The world is a grid of cells addressed as (row, col), row 0 at the top. Cell types:
S = start (safe), F = frozen ice (safe), H = hole (deadly), G = goal (safe).
Each memory entry was written in the past and claims a cell is SAFE or DANGER (a hole).
Since then some cells may have changed between ice and hole. An entry is STALE when its
claim no longer matches the current cell: SAFE where the cell is now a hole, or DANGER
where the cell is now safe. Otherwise it is VALID. Judge every entry only against the
current observation."""

AUDIT_OBSERVATION_IMAGE = (
    "Current observation: the image shows the grid. Colours: light blue = frozen ice (F, safe), "
    "near-black = hole (H, deadly), green = start (S), gold = goal (G); the red triangle marks "
    "the agent. Each cell is labelled with its (row,col) in its top-left corner.\n{position}"
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

NAVIGATE_SYSTEM = """\
You control an agent on a frozen lake, a grid of cells addressed as (row, col), row 0 at the top.
Cell types: S = start, F = frozen ice (safe), H = hole (stepping in ends the episode: you lose),
G = goal (reach it to win). UP decreases the row, DOWN increases it, LEFT decreases the column,
RIGHT increases it; a move off the grid leaves you in place and still costs a step.
The lake can change over time, and memory notes written in the past may be out of date.
Each turn, choose exactly one move by calling the tool `move` once with direction UP, DOWN,
LEFT or RIGHT."""

NAVIGATE_STEP = """\
Your position: ({row},{col}). Goal: ({goal_row},{goal_col}). Steps left: {steps_left}.
Call `move` with your next direction."""

NAVIGATE_OBSERVATION_IMAGE = (
    "Current observation: the image shows the lake. Colours: light blue = frozen ice (F, safe), "
    "near-black = hole (H, deadly), green = start (S), gold = goal (G); the red triangle is you. "
    "Each cell is labelled with its (row,col) in its top-left corner."
)

NAVIGATE_MEMORY = "Memory notes ({count}):\n{entries}"
NAVIGATE_MEMORY_EMPTY = "Memory notes: none remain."

MOVE_TOOL_DESCRIPTION = "Move the agent one cell. Call exactly once per turn."
MOVE_DIRECTION_DESCRIPTION = "One of UP, DOWN, LEFT, RIGHT."
