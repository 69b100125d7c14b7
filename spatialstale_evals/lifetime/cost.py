"""What a lifetime costs, estimated without any model call: model calls and
input/output tokens, low and high, counted as the scripted provider counts
(``harness/tokens.py``: a token per 4 characters of every message and tool
definition sent).

Each episode's step prompt is rendered as the loop renders it and measured.
``low``: the agent walks the shortest path of each episode's lake and uses
memory as ``diligent`` does (one view as it starts, one write in the
write-back, the notes one line per cell seen); ``high``: it uses the whole
step budget and ``max_memory_calls`` memory calls a step, each answered with
the whole notes. With ``history=None`` each request holds the whole episode
so far, so input tokens grow with the square of the steps; with K it holds
at most K earlier turns.
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
from spatialstale_evals.world.grid import goal_of, shortest_path
from spatialstale_evals.world.lifetimes import Lifetime
from spatialstale_evals.world.observation import visible_grid

#: A notes line in the recommended format (``SAFE at (r,c)``) and a ``cat -n`` prefix.
NOTE_LINE_CHARS = 14 + 7


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
    episodes = int(args.get("episodes", 5))
    radius = args.get("view_radius", 1)
    history = args.get("history")
    cap = int(args.get("max_memory_calls", 5))
    budget = int(args.get("max_steps") or life.max_steps)
    system = prompts.LIFELONG_SYSTEM.format(episodes=episodes, max_memory_calls=cap)
    fixed = count_text_tokens(system) + _tool_tokens([MOVE_TOOL, memory_info()])
    reply = count_text_tokens("move" + json.dumps({"direction": "RIGHT"}))
    answer = count_text_tokens(shared.MOVE_CONTINUE.format(where=shared.MOVE_MOVED, steps_left=budget))
    view_call = count_text_tokens("memory" + json.dumps({"command": "view", "path": prompts.PAPER_MEMORY_PATH}))
    full_notes = count_text_tokens("x" * NOTE_LINE_CHARS * life.height * life.width)
    out: dict[str, dict[str, int]] = {k: {"calls": 0, "input_tokens": 0, "output_tokens": 0} for k in ("low", "high")}
    window = (2 * radius + 1) if radius is not None else max(life.height, life.width)
    noted = 0  # cells the low estimate's notes hold: a window's width along each path walked
    for world in life.episodes[:episodes]:
        grid, start = world.grid, (0, 0)
        seen = visible_grid(grid, start, radius)
        parts = observation_parts(seen, start, "text", "navigate")
        text = "\n".join(p.text for p in parts)  # type: ignore[union-attr]
        if radius is not None:
            text += shared.NAVIGATE_PARTIAL.format(radius=radius, unseen=observation("text").unseen)
        goal = goal_of(grid)
        text += shared.NAVIGATE_STEP.format(row=0, col=0, goal_row=goal[0], goal_col=goal[1], steps_left=budget)
        prompt = count_text_tokens(text)
        path = shortest_path(grid, start, goal)
        for level, steps, memory_per_step in (("low", len(path or [0, 0]) - 1, 0), ("high", budget, cap)):
            notes = full_notes if level == "high" else count_text_tokens("x" * NOTE_LINE_CHARS * noted)
            turn = prompt + reply + answer + memory_per_step * (view_call + notes)
            calls = steps * (1 + memory_per_step)
            inputs = _requests(steps, fixed + prompt, turn, history) + memory_per_step * steps * (fixed + prompt)
            outputs = steps * (reply + memory_per_step * view_call)
            if level == "low":  # diligent: one view as the episode starts, one write in the write-back
                calls += 1
                inputs += fixed + prompt + steps * (view_call + notes)
                outputs += view_call
                noted = min(life.height * life.width, noted + window * (steps + 1))
                notes = count_text_tokens("x" * NOTE_LINE_CHARS * noted)
            wb_calls = 2 if level == "low" else 1 + cap
            kept = steps if history is None else min(steps, history)
            inputs += wb_calls * (fixed + kept * turn + count_text_tokens(prompts.WRITE_BACK))
            outputs += (wb_calls - 1) * notes
            out[level]["calls"] += calls + wb_calls
            out[level]["input_tokens"] += inputs
            out[level]["output_tokens"] += outputs
    return out
