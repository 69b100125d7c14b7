"""What a planned task costs, counted from the very prompts the tasks build,
without calling a model.

Detection is exact: every audit call's prompt (``harness.audit.audit_messages``)
is built and counted as the scripted provider counts tokens (ceil(characters
/ 4), 255 per image), and the reply as the ``observer`` agent would write it.
Navigation is a per-step prompt size (``harness.navigation.step_message`` and
the ``move`` tool) times a number of steps only a run can tell, given as two
bounds; its audits are the ones the strategy's policy says it makes
(``judges`` at ``start`` and after each ``event``, ``audit_batch_size``), so
the estimate cannot drift from what the loop does.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from inspect_ai.model import ChatMessageSystem

from spatialstale_evals.harness import prompts
from spatialstale_evals.harness.audit import audit_messages, batches
from spatialstale_evals.harness.episode import Episode
from spatialstale_evals.harness.navigation import MOVE_TOOL, step_message
from spatialstale_evals.harness.provider import count_input_tokens, count_text_tokens, last_prompt
from spatialstale_evals.harness.scripted import audit_reply
from spatialstale_evals.harness.strategies import STRATEGIES, MemoryPolicy
from spatialstale_evals.world.env import DynamicFrozenLakeEnv
from spatialstale_evals.world.grid import Grid, goal_of, shortest_path, start_of
from spatialstale_evals.world.instance import Instance
from spatialstale_evals.world.memory import MemoryEntry

#: Output of one ``move`` call as the scripted provider counts it (the longest direction).
MOVE_OUTPUT_TOKENS = count_text_tokens("move" + json.dumps({"direction": "RIGHT"}))


@dataclass(frozen=True)
class Cost:
    """Model calls and tokens; ``+`` adds, ``*`` scales (episodes, epochs)."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Cost) -> Cost:
        return Cost(
            self.calls + other.calls, self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens
        )

    def __mul__(self, k: int) -> Cost:
        return Cost(self.calls * k, self.input_tokens * k, self.output_tokens * k)


def audit_cost(grid: Grid, memory: Sequence[MemoryEntry], modality: str, batch_size: int) -> Cost:
    """One full audit of ``memory`` against ``grid`` in batches of ``batch_size``."""
    total = Cost()
    for batch in batches(memory, batch_size):
        messages = audit_messages(grid, (0, 0), batch, modality, "binary")
        reply = audit_reply("observer", last_prompt(messages))
        total += Cost(1, count_input_tokens(messages, []), count_text_tokens(reply))
    return total


def estimate_detect(instances: Sequence[Instance], modality: str, batch_size: int) -> Cost:
    """Exact: every window of every instance, audited in batches."""
    total = Cost()
    for inst in instances:
        for window in inst.windows:
            total += audit_cost(window.grid, inst.memory, modality, batch_size)
    return total


def step_prompt_tokens(inst: Instance, policy: MemoryPolicy, modality: str) -> int:
    """Input tokens of one navigation step (system prompt, memory view at the
    start as a perfect judge would leave it, observation, position, tool)."""
    env = DynamicFrozenLakeEnv(inst)
    env.reset()
    stale = {eid for w in inst.windows if w.step == 0 for eid in w.stale}
    view = policy.view(inst.memory, stale if policy.judges("start", inst) else set())
    messages = [ChatMessageSystem(content=prompts.NAVIGATE_SYSTEM), step_message(Episode(env, view), modality, policy)]
    return count_input_tokens(messages, [MOVE_TOOL])


def episode_audits(inst: Instance, policy: MemoryPolicy, modality: str, batch_size: int, horizon: int) -> Cost:
    """The model audits of one episode that lasts ``horizon`` steps: before the
    first step, and after every scheduled event that fires before the end."""
    size = policy.audit_batch_size(len(inst.memory), batch_size)
    if size is None:
        return Cost()
    total = Cost()
    if policy.judges("start", inst):
        total += audit_cost(inst.grid, inst.memory, modality, size)
    if policy.judges("event", inst):
        for event in inst.events:
            if event.step < horizon:
                total += audit_cost(inst.grid_at(event.step), inst.memory, modality, size)
    return total


def estimate_navigate(
    instances: Sequence[Instance], strategy: str, modality: str, batch_size: int, epochs: int
) -> tuple[Cost, Cost]:
    """(low, high): low = every episode walks a shortest path of the true grid
    (what a perfect agent costs); high = every episode uses its whole budget."""
    policy = STRATEGIES[strategy]
    low = high = Cost()
    for inst in instances:
        per_step = step_prompt_tokens(inst, policy, modality)
        path = shortest_path(inst.grid, start_of(inst.grid), goal_of(inst.grid)) or []
        for bound, steps in (("low", max(len(path) - 1, 1)), ("high", inst.max_steps)):
            cost = Cost(steps, steps * per_step, steps * MOVE_OUTPUT_TOKENS)
            cost = (cost + episode_audits(inst, policy, modality, batch_size, steps)) * epochs
            if bound == "low":
                low += cost
            else:
                high += cost
    return low, high
