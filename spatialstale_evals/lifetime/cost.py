"""What a lifetime costs, estimated without any model call: model calls and
input/output tokens, low and high, counted as the scripted provider counts
(``harness/tokens.py``: a token per 4 characters of every message and tool
definition sent).

Each episode's step prompt is rendered as the loop renders it and measured.
``low``, the reference figure: the agent walks each episode as the reference
walk does (``walk.py``: it sees only its window, keeps every cell it saw as
a note, plans through its notes, and so takes the detours a partial view and
stale notes cost) and uses memory as ``diligent`` does (one view as the
episode starts, again whenever ``history`` dropped the last one; one
``create`` of every known cell in the write-back, one line per cell);
``high``: it uses the whole step budget and ``max_memory_calls`` memory calls
a step, each answered with notes of the whole lake. With ``history=None``
each request holds the whole episode so far, so input tokens grow with the
square of the steps; with K it holds at most K earlier turns. An agent that
dies early, or walks straighter, costs less than ``low``; one that wanders
more costs more (docs/performance.md measures the scripted agents against it).

Under ``memory=transcript`` (``transcript_cost``) every request holds the
whole lifetime so far, so input tokens grow with the square of the lifetime's
steps, not an episode's; with ``compaction`` other than ``none`` a request is
held to ``compaction_threshold`` tokens (a compaction brings it under, and it
grows back to it), so past the threshold the cost grows linearly. The walk
is the same (``transcript`` plays as ``diligent`` does), with no memory calls.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from inspect_ai.tool import ToolDef, ToolInfo, memory

from spatialstale_evals.harness import prompts as shared
from spatialstale_evals.harness.move import MOVE_TOOL
from spatialstale_evals.harness.observe import observation, observation_parts
from spatialstale_evals.harness.tokens import count_text_tokens
from spatialstale_evals.lifetime import prompts
from spatialstale_evals.lifetime.provenance import ASSERTED, VERIFIED
from spatialstale_evals.lifetime.walk import reference_walks
from spatialstale_evals.world.grid import Grid, goal_of
from spatialstale_evals.world.lifetimes import Lifetime
from spatialstale_evals.world.observation import visible_grid

#: A notes line in the recommended format (``SAFE at (r,c)``) and a ``cat -n`` prefix.
NOTE_LINE_CHARS = 14 + 7
#: The memory tool's first line of a view's answer.
VIEW_HEADER = "Here's the result of running `cat -n` on /memories/lake.md:\n"
#: The memory tool's answers to a view of a missing file and to a create (short sentences).
MISSING_TOKENS = count_text_tokens("The path /memories/lake.md does not exist. Please provide a valid path.")
CREATED_TOKENS = count_text_tokens("File created successfully at: /memories/lake.md")
#: The step prompt's label under ``provenance=stamped`` (``resolved`` adds a line per contradicted note: not counted).
VERIFIED_TOKENS = count_text_tokens("\n" + VERIFIED)
#: The replies that end a write-back, after a write and without one.
DONE_REPLY, NOTHING_REPLY = "Notes saved.", "Nothing to update."


def _tool_tokens(tools: list[ToolInfo]) -> int:
    return sum(count_text_tokens(t.model_dump_json(exclude_none=True)) for t in tools)


def memory_info() -> ToolInfo:
    """The memory tool's definition, as sent to the model."""
    tdef = ToolDef(memory())
    return ToolInfo(name=tdef.name, description=tdef.description, parameters=tdef.parameters)


def _requests(n: int, fixed: int, per_turn: int, history: int | None) -> int:
    """Input tokens of n requests, the i-th holding min(i, history) earlier turns."""
    return sum(fixed + per_turn * (i if history is None else min(i, history)) for i in range(n))


def estimate_lifetime_cost(life: Lifetime, args: Mapping[str, Any]) -> dict[str, dict[str, int]]:
    """``{"low": {...}, "high": {...}}`` with ``calls``, ``input_tokens`` and
    ``output_tokens`` for one lifetime under the task arguments ``args``
    (``episodes``, ``view_radius``, ``history``, ``max_memory_calls``,
    ``max_steps``; absent ones at the task's defaults)."""
    if args.get("memory") == "transcript" and not args.get("memory_tool"):
        return transcript_cost(life, args)
    episodes = int(args.get("episodes", 5))
    radius = args.get("view_radius", 1)
    history = args.get("history")
    cap = int(args.get("max_memory_calls", 5))
    budget = int(args.get("max_steps") or life.max_steps)
    shared_arm = args.get("memory") == "shared"  # the same loop, its own system prompt (lifetime/shared.py)
    system = (prompts.LIFELONG_SYSTEM_SHARED if shared_arm else prompts.LIFELONG_SYSTEM).format(
        episodes=episodes, max_memory_calls=cap
    )
    stamped = args.get("provenance", "none") != "none"  # every viewed line stamped, every step prompt labelled
    fixed = count_text_tokens(system) + _tool_tokens([MOVE_TOOL, memory_info()])
    write_back = count_text_tokens(system) + _tool_tokens([memory_info()]) + count_text_tokens(prompts.WRITE_BACK)
    reply = count_text_tokens("move" + json.dumps({"direction": "RIGHT"}))
    answer = count_text_tokens(shared.MOVE_CONTINUE.format(where=shared.MOVE_MOVED, steps_left=budget))
    view_call = count_text_tokens("memory" + json.dumps({"command": "view", "path": prompts.PAPER_MEMORY_PATH}))
    out: dict[str, dict[str, int]] = {k: {"calls": 0, "input_tokens": 0, "output_tokens": 0} for k in ("low", "high")}
    walks = reference_walks(life, episodes, radius, budget, history)
    for k, (world, walk) in enumerate(zip(life.episodes[:episodes], walks), start=1):
        prompt = _step_prompt_tokens(world.grid, radius, budget) + (VERIFIED_TOKENS if stamped else 0)
        # the episode's header opens its first prompt, which every request of the episode holds
        header = count_text_tokens(prompts.EPISODE_START.format(episode=k, episodes=episodes))
        for level in ("low", "high"):
            if level == "low":
                steps, noted, noted_after, views_per_step = walk.steps, walk.noted, walk.noted_after, 0
            else:
                steps, noted = budget, life.height * life.width
                noted_after, views_per_step = noted, cap
            notes = _view_answer_tokens(noted, stamped)
            create = _create_call_tokens(noted_after)
            if level == "low":  # views as the reference agent makes them: again whenever history dropped the last
                turn = prompt + reply + answer
                # move requests: the i-th holds min(i, history) earlier turns and the notes as last viewed
                inputs = _requests(steps, fixed + prompt, turn, history) + steps * (view_call + notes)
                kept_at_view = 0 if history is None else history
                inputs += fixed + prompt + (walk.views - 1) * (fixed + prompt + kept_at_view * turn)
                calls, outputs = steps + walk.views, steps * reply + walk.views * view_call
            else:  # the cap of memory calls at every step, each answered with the whole notes and kept
                turn = prompt + reply + answer + views_per_step * (view_call + notes)
                # every request of a step holds the kept turns, and the memory calls made before it in the step
                inputs = (1 + views_per_step) * _requests(steps, fixed + prompt, turn, history)
                inputs += steps * views_per_step * (views_per_step + 1) // 2 * (view_call + notes)
                calls = steps * (1 + views_per_step)
                outputs = steps * (reply + views_per_step * view_call)
            # the write-back: one create of every known cell, and the reply after it (the cap: as many creates)
            kept = steps if history is None else min(steps, history)
            wb_calls = (2 if walk.writes else 1) if level == "low" else 1 + cap
            context = write_back + kept * turn + view_call + notes
            inputs += sum(context + i * (create + CREATED_TOKENS) for i in range(wb_calls))
            outputs += (wb_calls - 1) * create + count_text_tokens(DONE_REPLY if wb_calls > 1 else NOTHING_REPLY)
            out[level]["calls"] += calls + wb_calls
            out[level]["input_tokens"] += inputs + header * (calls + wb_calls)
            out[level]["output_tokens"] += outputs
    return out


def _step_prompt_tokens(grid: Grid, radius: int | None, budget: int) -> int:
    """A step prompt as the loop renders it (without the episode's header)."""
    start = (0, 0)
    parts = observation_parts(visible_grid(grid, start, radius), start, "text", "navigate")
    text = "\n".join(p.text for p in parts)  # type: ignore[union-attr]
    if radius is not None:
        text += shared.NAVIGATE_PARTIAL.format(radius=radius, unseen=observation("text").unseen)
    goal = goal_of(grid)
    text += shared.NAVIGATE_STEP.format(row=0, col=0, goal_row=goal[0], goal_col=goal[1], steps_left=budget)
    return count_text_tokens(text)


def _view_answer_tokens(noted: int, stamped: bool = False) -> int:
    """The memory tool's answer to a view of notes of ``noted`` lines (none: the
    missing file's error); ``stamped``: each line with its provenance stamp."""
    line = NOTE_LINE_CHARS + (len(ASSERTED.format(episode=1)) if stamped else 0)
    return count_text_tokens(VIEW_HEADER + "x" * line * noted) if noted else MISSING_TOKENS


def _create_call_tokens(noted: int) -> int:
    """The write-back's create call of notes of ``noted`` lines, as the provider counts a tool call."""
    text = "SAFE at (0,0)\n" * noted
    return count_text_tokens(
        "memory" + json.dumps({"command": "create", "path": prompts.PAPER_MEMORY_PATH, "file_text": text})
    )


def transcript_cost(life: Lifetime, args: Mapping[str, Any]) -> dict[str, dict[str, int]]:
    """``estimate_lifetime_cost`` under ``memory=transcript`` (module docstring):
    ``low`` walks as the reference walk, ``high`` uses every step budget; each
    request holds every earlier turn of the lifetime, at most
    ``compaction_threshold`` tokens when compacting."""
    episodes = int(args.get("episodes", 5))
    radius = args.get("view_radius", 1)
    budget = int(args.get("max_steps") or life.max_steps)
    compacting = args.get("compaction", "none") != "none"
    cap = int(args.get("compaction_threshold") or 8000) if compacting else None
    system = prompts.LIFELONG_SYSTEM_TRANSCRIPT.format(episodes=episodes, max_memory_calls=0)
    fixed = count_text_tokens(system) + _tool_tokens([MOVE_TOOL])
    reply = count_text_tokens("move" + json.dumps({"direction": "RIGHT"}))
    answer = count_text_tokens(shared.MOVE_CONTINUE.format(where=shared.MOVE_MOVED, steps_left=budget))
    header = count_text_tokens(prompts.TRANSCRIPT_EPISODE_START.format(episode=2, episodes=episodes))
    walks = reference_walks(life, episodes, radius, budget)
    out: dict[str, dict[str, int]] = {}
    for level in ("low", "high"):
        calls = inputs = held = 0
        for world, walk in zip(life.episodes[:episodes], walks):
            turn = _step_prompt_tokens(world.grid, radius, budget) + reply + answer
            for step in range(walk.steps if level == "low" else budget):
                request = fixed + held + turn - reply - answer + (header if step == 0 else 0)
                inputs += request if cap is None else min(request, cap)
                held += turn + (header if step == 0 else 0)
                calls += 1
        out[level] = {"calls": calls, "input_tokens": inputs, "output_tokens": calls * reply}
    return out
