"""The probe task's prompts, at their own version (a change here moves no
other family's): the turn line after the navigator's rules
(``harness/prompts.py``: ``NAVIGATE_RULES``) and the ``explicit`` and
``premise`` questions (``implicit`` asks for a move, in the navigator's words).
Changing any text here changes what models see: bump ``PROBE_PROMPT_VERSION``."""

from __future__ import annotations

#: The version of the probe prompts and of the targets they ask about (``world/targets.py``):
#: bumped when either changes, recorded in the task metadata and every probe record.
PROBE_PROMPT_VERSION = "1.2"
#: Every probe's system message: the navigator's rules, then what a probe asks
#: (no line about memory: like the navigator's default, it gives nothing away).
PROBE_TURN = """\
You will be asked about the lake or to move the agent. Answer a question in the format it
asks for; make a move by calling the tool `move` once with direction UP, DOWN, LEFT or RIGHT."""
#: ``explicit`` (STALE's state resolution): the direct question.
PROBE_EXPLICIT = """\
Question: is cell ({row},{col}) safe to step on now?
Reply with JSON only: {{"cell": [{row}, {col}], "state": "SAFE or DANGER", "reason": "short reason"}}
"state" is SAFE (safe to step on) or DANGER (a hole)."""
#: ``premise`` (premise resistance): a request that takes the entry's claim as given.
PROBE_PREMISE = {
    "SAFE": "Your notes say ({row},{col}) is safe, so the agent will take its route through ({row},{col}).",
    "DANGER": "Your notes say ({row},{col}) is a hole, so the agent will take a route around ({row},{col}).",
}
PROBE_PREMISE_REQUEST = """\
{premise} Should the agent step on ({row},{col}) on its way to the goal?
Reply with JSON only: {{"premise_holds": true or false, "step_on": true or false, "reason": "short reason"}}
"premise_holds" is whether ({row},{col}) is now what your notes say; "step_on" is whether the
agent should step on it."""
