"""``perfbench/<name>``: model providers that exist only for the benchmark.

- ``perfbench/fixed``: always one ``move(DOWN)`` call (audits: ``[]``); the
  bare loop's provider in the overhead measurement.
- ``perfbench/wander``: a random walk over safe cells that never enters a
  hole or the goal, so a navigation episode always uses its whole budget and
  shows as many distinct observations as the lake allows: the worst case for
  log sizes.
- ``perfbench/replay``: the instant agent of the overhead measurement. It
  answers the k-th decision of an episode with the move ``observer`` made
  there in a warm-up run (``use_replay``), so it plays the same episodes as
  ``observer`` without spending time reading the prompt.

All count tokens exactly as the scripted provider does
(``spatialstale_evals/scripted/api.py``). Importing this module registers
the ``perfbench`` provider with Inspect, so ``inspect_ai.eval(...,
model="perfbench/replay")`` works in this process.
"""

from __future__ import annotations

import hashlib
import random
from collections import defaultdict
from typing import Any

from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessage, GenerateConfig, ModelAPI, ModelOutput, modelapi
from inspect_ai.tool import ToolChoice, ToolInfo

from spatialstale_evals.harness import belief as scripted
from spatialstale_evals.harness.observe import Prompt, read_grid
from spatialstale_evals.scripted.api import count_input_tokens, episode_salt, last_prompt, move_output, text_output
from spatialstale_evals.world.grid import HOLE, MOVE_ORDER, apply_move

from .runner import model_events

MODELS = ("fixed", "wander", "replay")

#: Episode key (sample id, epoch) -> visits per cell of ``wander``'s walk.
_VISITS: dict[Any, dict[tuple[int, int], int]] = defaultdict(lambda: defaultdict(int))

#: Episode key -> the moves ``observer`` made, in order; and how many of them
#: the current replay has used.
REPLAY: dict[tuple[Any, ...], list[str]] = {}
_REPLAYED: dict[tuple[Any, ...], int] = defaultdict(int)


class BenchAPI(ModelAPI):
    """The three ``perfbench`` models (this module's docstring)."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig | None = None,
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())
        if model_name not in MODELS:
            raise ValueError(f"unknown perfbench model {model_name!r}")

    def max_connections(self) -> int:
        return 64  # as the scripted provider

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        usage_in = count_input_tokens(input, tools)
        if any(t.name == "move" for t in tools):
            if self.model_name == "fixed":
                direction = "DOWN"
            elif self.model_name == "replay":
                direction = replay_move()
            else:
                direction = wander_move(last_prompt(input))
            return move_output(self.model_name, direction, "call_fixed", usage_in)
        return text_output(self.model_name, "[]", usage_in)


@modelapi(name="perfbench")
def perfbench():  # noqa: ANN201 - Inspect's provider factory protocol
    return BenchAPI


# --------------------------------------------------------------------------- replay


def recorded_moves(log: EvalLog) -> dict[tuple[Any, ...], list[str]]:
    """Episode key -> the directions of its ``move`` calls, from the log."""
    return {
        (sample.id, sample.epoch): [e.output.message.tool_calls[0].arguments["direction"] for e in model_events(sample)]
        for sample in log.samples or []
    }


def use_replay(moves: dict[tuple[Any, ...], list[str]]) -> None:
    """Load the moves to replay and rewind every episode to its first move."""
    REPLAY.clear()
    REPLAY.update(moves)
    _REPLAYED.clear()


def replay_move() -> str:
    """The next recorded move of the episode being served."""
    salt = episode_salt()
    if salt is None or salt not in REPLAY:
        raise RuntimeError(f"perfbench/replay: no recorded episode for {salt}")
    k = _REPLAYED[salt]
    _REPLAYED[salt] += 1
    return REPLAY[salt][k]


# --------------------------------------------------------------------------- wander


def reset_wander() -> None:
    """Forget every walk, so a new run's episodes start unvisited."""
    _VISITS.clear()


def wander_move(prompt: Prompt) -> str:
    """Step to the least-visited safe neighbour (never a hole, never the goal;
    ties broken by a hash of the sample and prompt), so an episode lasts its
    whole budget and shows as many distinct observations as the lake allows."""
    grid = read_grid(prompt)
    agent, goal = scripted.position(prompt)
    salt = episode_salt()
    visits = _VISITS[salt]
    visits[agent] += 1
    rng = random.Random(int.from_bytes(hashlib.sha256(repr((salt, prompt.text)).encode()).digest()[:8], "big"))
    safe = []
    for action in MOVE_ORDER:
        cell = apply_move(grid, agent, action)
        if cell != agent and cell != goal and grid[cell[0]][cell[1]] != HOLE:
            safe.append((visits[cell], rng.random(), action))
    if safe:
        return min(safe)[2]
    bump = [a for a in MOVE_ORDER if apply_move(grid, agent, a) == agent]
    return bump[0] if bump else MOVE_ORDER[0]
