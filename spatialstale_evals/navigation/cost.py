"""The navigate task's cost without a model call: a per-step prompt size
(``step_message`` and the ``move`` tool, with the view the policy leaves and
every earlier turn ``history`` keeps) times a number of steps only a run can
tell, given as two bounds; its audits are the ones the strategy's policy says
it makes (``judges`` at ``start``, at each ``view`` under partial observability
and after each ``event``; ``audit_batch_size``), so the estimate cannot drift
from what the loop does."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Any

from inspect_ai.model import ChatMessageSystem
from inspect_ai.tool import memory

from spatialstale_evals.harness.cost import Cost, StandIn, audit_cost
from spatialstale_evals.harness.memory_text import system_prompt, written
from spatialstale_evals.harness.memory_tool import TOOL_NAME, tool_answer, tool_info
from spatialstale_evals.harness.memory_view import Decision, Note
from spatialstale_evals.harness.observe import Observation, settings_from
from spatialstale_evals.harness.tokens import count_input_tokens, count_text_tokens
from spatialstale_evals.navigation.episode import Episode, due_entries
from spatialstale_evals.navigation.loop import MOVE_TOOL, NavigationSettings, step_message
from spatialstale_evals.navigation.memory_access import LAKE_FILE, lake_file
from spatialstale_evals.navigation.strategies import MOMENTS, STRATEGIES, JudgeRequest, MemoryPolicy, Moment, Verdict
from spatialstale_evals.world.env import DynamicFrozenLakeEnv
from spatialstale_evals.world.grid import Cell, goal_of, shortest_path, start_of
from spatialstale_evals.world.instance import Instance
from spatialstale_evals.world.memory import claim_of
from spatialstale_evals.world.observation import covers_grid, visible_grid

#: Output of one ``move`` call as the scripted provider counts it (the longest direction).
MOVE_OUTPUT_TOKENS = count_text_tokens("move" + json.dumps({"direction": "RIGHT"}))


def start_verdict(inst: Instance, policy: MemoryPolicy, radius: int | None, output: str, threshold: float) -> Verdict:
    """The verdict the policy leaves before the first step: its own, when it
    calls no model (asked through ``judge``); a perfect audit's of the entries
    in view when it does (with the right corrections, when its audits in
    format ``output`` propose them)."""
    if not policy.judges("start", inst, 0):
        return Verdict()
    grid, agent = inst.grid, (0, 0)
    due = due_entries(inst.memory, agent, radius, set(), 0)
    if not policy.calls_model:
        ledger = {e.cell: (grid[e.row][e.col], 0) for e in due if not e.is_note}
        request = JudgeRequest(
            instance=inst,
            grid=grid,
            seen=visible_grid(grid, agent, radius),
            agent=agent,
            auditor=None,  # type: ignore[arg-type]  # a policy that calls no model never asks it
            modality="text",
            batch_size=1,
            structured=False,
            output=output,
            threshold=threshold,
            reason="start",
            step=0,
            epoch=0,
            due=due,
            ledger=ledger,
        )
        return asyncio.run(policy.judge(request)) or Verdict()
    labels = inst.labels_at(0)
    stale = [e for e in due if labels[e.id]]
    corrections = {e.id: claim_of(grid[e.row][e.col]) for e in stale} if policy.corrects(output) else {}
    decisions: dict[str, Decision] = {e.id: "contradicted" if labels[e.id] else "keep" for e in due}
    return Verdict(decisions, dict.fromkeys((e.id for e in stale), 0), corrections)


def start_view(inst: Instance, settings: NavigationSettings, radius: int | None = None) -> list[Note]:
    """The memory view the policy leaves before the first step of ``inst``."""
    s, policy = settings, STRATEGIES[settings.strategy]
    start = start_verdict(inst, policy, radius, s.output, s.threshold)
    return policy.view(inst.memory, start.decisions, s.filter_mode, start.steps, start.corrections)


def step_prompt_tokens(inst: Instance, settings: NavigationSettings, radius: int | None = None) -> int:
    """Input tokens of one navigation step of ``inst`` (its store as written):
    system prompt, the memory view the policy leaves at the start (or, with the
    memory tool, the line saying where it is), observation, position, tools."""
    s, policy = settings, STRATEGIES[settings.strategy]
    env = DynamicFrozenLakeEnv(inst)
    env.reset()
    episode = Episode(env=env, view=start_view(inst, s, radius), view_radius=radius)
    messages = [
        ChatMessageSystem(content=system_prompt(s.memory_framing)),
        step_message(episode, s.observation, policy, s.memory_position, s.memory_access),
    ]
    tools = [MOVE_TOOL, tool_info(memory(readonly=True))] if s.memory_access == "tool" else [MOVE_TOOL]
    return count_input_tokens(messages, tools)


#: The memory call that reads the lake file, as a reply holds it.
READ_CALL = {"command": "view", "path": LAKE_FILE}
READ_CALL_TOKENS = count_text_tokens(TOOL_NAME + json.dumps(READ_CALL))


def read_tokens(inst: Instance, settings: NavigationSettings, radius: int | None = None) -> int:
    """Tokens one read of the lake file adds to a step's next request: the call
    and the memory tool's own answer, for the file of the view at the start."""
    text = lake_file(start_view(inst, settings, radius))
    answer = asyncio.run(tool_answer(memory(readonly=True), {LAKE_FILE: text}, **READ_CALL))
    return READ_CALL_TOKENS + count_text_tokens(answer)


def fetch_walk(per_step: int, read: int, reads: Sequence[int], history: int) -> Cost:
    """A walk of ``len(reads)`` steps with ``reads[k]`` reads of the lake file at
    step k, each read another request that holds the step's earlier reads;
    each kept earlier turn (``history``) counted as a step with the most reads
    (an upper estimate of a turn's size)."""
    turn, total = per_step + max(reads, default=0) * read, Cost()
    for k, r in enumerate(reads):
        kept = min(history, k) * turn
        inputs = (r + 1) * (kept + per_step) + read * r * (r + 1) // 2
        total += Cost(r + 1, inputs, r * READ_CALL_TOKENS + MOVE_OUTPUT_TOKENS)
    return total


def episode_audits(
    model: StandIn,
    inst: Instance,
    policy: MemoryPolicy,
    modality: str | Observation,
    batch_size: int,
    horizon: int,
    structured: bool = False,
    output: str = "binary",
) -> Cost:
    """The model audits of one episode that lasts ``horizon`` steps: before the
    first step, and after every scheduled event that fires before the end."""
    size = policy.audit_batch_size(len(inst.memory), batch_size)
    if size is None:
        return Cost()
    total = Cost()
    if policy.judges("start", inst, 0):
        total += audit_cost(model, inst.grid, inst.memory, modality, size, output=output, structured=structured)
    for event in inst.events:
        if event.step < horizon and policy.judges("event", inst, event.step):
            grid = inst.grid_at(event.step)
            total += audit_cost(model, grid, inst.memory, modality, size, output=output, structured=structured)
    return total


def walk_audits(
    model: StandIn,
    inst: Instance,
    policy: MemoryPolicy,
    modality: str | Observation,
    batch_size: int,
    path: Sequence[Cell],
    radius: int,
    structured: bool = False,
    output: str = "binary",
) -> Cost:
    """The model audits of an episode that walks ``path`` seeing ``radius``
    around it: at each moment the policy judges, the entries in view not yet
    judged since the world last changed, as the navigation loop does."""
    size = policy.audit_batch_size(len(inst.memory), batch_size)
    if size is None or not path:
        return Cost()
    events, judged, epoch, total = {e.step for e in inst.events}, set[tuple[str, int]](), 0, Cost()

    def audit(moment: Moment, step: int, pos: Cell) -> Cost:
        if not policy.judges(moment, inst, epoch):
            return Cost()
        due = due_entries(inst.memory, pos, radius, judged, epoch)
        judged.update((e.id, epoch) for e in due)
        seen = visible_grid(inst.grid_at(step), pos, radius)
        return audit_cost(model, seen, due, modality, size, pos, output, structured) if due else Cost()

    total += audit("start", 0, path[0])
    for k in range(len(path) - 1):
        total += audit("view", k, path[k])
        if k + 1 in events and k + 2 < len(path):  # the episode goes on after the event
            epoch = k + 1
            total += audit("event", k + 1, path[k + 1])
    return total


def judged_windows(inst: Instance, policy: MemoryPolicy, horizon: int) -> list[int]:
    """The steps of the detection windows the policy judges in (at any moment) before ``horizon``."""
    steps = [0, *(e.step for e in inst.events if e.step < horizon)]
    return [s for s in steps if any(policy.judges(m, inst, s) for m in MOMENTS)]


def prompt_tokens(per_step: int, steps: int, history: int) -> int:
    """Input tokens of ``steps`` decisions, each prompt carrying up to
    ``history`` earlier turns (each counted as a full step prompt: an upper
    estimate of a turn's size)."""
    return per_step * sum(1 + min(history, k) for k in range(steps))


def settings_of(args: Mapping[str, Any]) -> NavigationSettings:
    """The settings of the navigate task of ``args`` (every argument, defaults
    included; ``max_steps`` None: each instance's budget), unchecked."""
    return settings_from(NavigationSettings, args)


def estimate(instances: Sequence[Instance], args: dict[str, Any], model: StandIn) -> tuple[Cost, Cost]:
    """(low, high) for ``epochs`` episodes per instance of the navigate task of
    ``args`` (every argument, defaults included; ``max_steps`` None: each instance's budget):
    low = every episode walks a shortest path of the true grid (what a perfect
    agent costs); high = every episode uses its whole budget. Under partial
    observability the audits of the low bound are those of that walk; the
    high bound audits every entry alone once per window it judges. With the
    memory tool the low walk reads the lake file once, at its first step; the
    high walk ``max_memory_calls`` times at every step (``fetch_walk``)."""
    s, epochs = settings_of(args), args["epochs"]
    policy, obs, batch_size = STRATEGIES[s.strategy], s.observation, s.batch_size
    low = high = Cost()
    for canonical in instances:
        inst = written(canonical, s.memory_style, s.distractors)
        radius = None if covers_grid(inst.height, inst.width, s.view_radius) else s.view_radius
        per_step = step_prompt_tokens(inst, s, radius)
        path = shortest_path(inst.grid, start_of(inst.grid), goal_of(inst.grid)) or []
        budget = s.max_steps or inst.max_steps
        shortest = min(max(len(path) - 1, 1), budget)
        if radius is None:
            audits_low = episode_audits(model, inst, policy, obs, batch_size, shortest, s.structured_output, s.output)
            audits_high = episode_audits(model, inst, policy, obs, batch_size, budget, s.structured_output, s.output)
        else:
            audits_low = walk_audits(model, inst, policy, obs, batch_size, path, radius, s.structured_output, s.output)
            each = (
                audit_cost(model, inst.grid, inst.memory, obs, 1, output=s.output, structured=s.structured_output)
                if policy.calls_model
                else Cost()
            )
            audits_high = each * len(judged_windows(inst, policy, budget))
        read = read_tokens(inst, s, radius) if s.memory_access == "tool" else 0
        for steps, audits, bound in ((shortest, audits_low, "low"), (budget, audits_high, "high")):
            walk = Cost(steps, prompt_tokens(per_step, steps, s.history), steps * MOVE_OUTPUT_TOKENS)
            if read:
                reads = [1] + [0] * (steps - 1) if bound == "low" else [s.max_memory_calls] * steps
                walk = fetch_walk(per_step, read, reads, s.history)
            cost = (walk + audits) * epochs
            low, high = (low + cost, high) if bound == "low" else (low, high + cost)
    return low, high
