"""The dynamic lake as a gymnasium environment.

gymnasium's FrozenLakeEnv precomputes its transition table from ``desc``, so a
grid that changes mid-episode would be ignored; this is a small env of our own
instead, with FrozenLake's action encoding and the same reward structure.

L3 rule (written down because the paper is silent): the world is the schedule.
An event flips exactly its listed cells at its step, whoever stands where, so
every strategy and every model meets the same grids at the same steps. A flip
of the agent's own cell takes effect under it without killing it (only
*entering* a hole kills; the next prompt shows the hole under the agent), and
an event that leaves the agent no path to the goal still applies (the agent
will time out). Both cases are reported in ``info`` (``under_agent``,
``cut_off``) and so end up in the trajectory log.

The action ids are Gymnasium FrozenLake's, so a constant from
``gymnasium.envs.toy_text.frozen_lake`` moves the same way here. The harness
speaks in move names, considers moves in ``grid.MOVE_ORDER`` (which fixes
its tie-breaks, and so its prompts and scores) and reaches the ids only
through ``ACTION_IDS``: the id encoding and the move order are independent.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from spatialstale_evals.world.grid import (
    CELL_TYPES,
    GOAL,
    HOLE,
    Cell,
    Grid,
    apply_move,
    flip_cells,
    goal_of,
    has_path,
)
from spatialstale_evals.world.instance import Instance, generate_instance
from spatialstale_evals.world.observation import text_observation
from spatialstale_evals.world.render import render_image

#: The registered id; the version counts changes to the env's interface
#: (``DynamicFrozenLakeEnv``'s Version History).
ENV_ID = "SpatialStale/DynamicFrozenLake-v1"
SUCCESS, DEATH, TIMEOUT = "success", "death", "timeout"

#: Action ids, as in Gymnasium's FrozenLake.
LEFT, DOWN, RIGHT, UP = 0, 1, 2, 3
#: The move each action id makes (index = id).
ACTION_NAMES: tuple[str, ...] = ("LEFT", "DOWN", "RIGHT", "UP")
#: The action id of each move name.
ACTION_IDS: dict[str, int] = {name: i for i, name in enumerate(ACTION_NAMES)}


def action_id(direction: str) -> int:
    """The action id of a move name; for anything else a one-line ``ValueError``
    naming the value (not a ``KeyError``: ``move(direction="NORTH")`` from Python)."""
    if isinstance(direction, str) and direction in ACTION_IDS:
        return ACTION_IDS[direction]
    shown = repr(direction)[:60] if isinstance(direction, str) else f"a {type(direction).__name__}"
    raise ValueError(f"direction must be one of {', '.join(ACTION_NAMES)}; got {shown}")


class DynamicFrozenLakeEnv(gym.Env):
    """FrozenLake whose cells flip between ice and holes.

    ## Description
    The agent crosses a lake from the start ``S`` at ``(0, 0)`` to the goal
    ``G`` at the bottom-right corner without falling into a hole ``H``,
    walking on ice ``F``. Unlike Gymnasium's FrozenLake, the lake changes:
    a benchmark instance's regime decides how. The grid at reset may already
    differ from the original one the agent's memory describes (the L1 and L2
    changes happen before the game; L0 changes nothing), and in L3 scheduled
    events flip cells between ice and holes at fixed steps during the
    episode, whatever the agent does. A flip
    under the agent does not kill it (only entering a hole does), and an event
    may cut the agent off from the goal (it then times out).

    Moves are deterministic: the lake is not slippery.

    ## Action Space
    ``Discrete(4)``, Gymnasium FrozenLake's encoding:

    - 0: Move left (``LEFT``, column - 1)
    - 1: Move down (``DOWN``, row + 1)
    - 2: Move right (``RIGHT``, column + 1)
    - 3: Move up (``UP``, row - 1)

    A move off the grid leaves the agent in place and still costs a step.
    ``ACTION_NAMES[id]`` is an id's move name, ``ACTION_IDS[name]`` a name's id.

    ## Observation Space
    A ``Dict`` with

    - ``agent``: ``Discrete(height * width)``, the agent's cell as
      ``row * width + col`` (FrozenLake's observation);
    - ``grid``: ``Box(0, 3, (height, width), int8)``, the current lake as
      cell-type codes ``S=0, F=1, H=2, G=3``, since the lake changes and the
      position alone no longer determines it.

    ## Starting State
    The agent at ``(0, 0)`` (``agent`` 0) on the instance's grid after its
    pre-game changes.

    ## Rewards
    - Reach goal: +1
    - Reach hole: -1
    - Reach ice, bump a wall or run out of steps: 0

    ## Episode End
    - Termination:
        1. The agent moves into a hole (``info["outcome"] == "death"``).
        2. The agent reaches the goal (``"success"``).
    - Truncation (by the env itself, no wrapper needed):
        1. The step budget runs out (``"timeout"``): the instance's
           ``max_steps`` (50 on 8x8, scaled with the grid's half-perimeter)
           unless ``max_steps`` overrides it.

    ## Information
    ``step()`` and ``reset()`` return a dict with ``outcome`` (one of the
    above, or None while the episode runs), ``steps``, ``position`` (row,
    col), ``instance_id`` and ``events``: the L3 events that fired on this
    step, each with its ``step``, ``cells``, ``under_agent`` (a flip under
    the agent) and ``cut_off`` (no path to the goal left).

    ## Arguments
    ```python
    import gymnasium as gym
    import spatialstale_evals.world  # registers the id
    gym.make(
        "SpatialStale/DynamicFrozenLake-v1",
        instance=None,
        regime="L1",
        height=8,
        width=8,
        max_steps=None,
        render_mode=None,
    )
    ```

    * ``instance``: a benchmark instance (``world.dataset.load``); the env
      replays its pre-game changes and L3 schedule, and takes its size from
      it. ``reset(options={"instance": ...})`` swaps the instance (of the
      same size) at reset.
    * ``regime``, ``height``, ``width``: without an instance, ``reset(seed=)``
      generates one of this regime and size from the seed.
    * ``max_steps``: overrides the instance's step budget.
    * ``render_mode``: ``"ansi"`` (the text observation the models read) or
      ``"rgb_array"`` (the image observation as an array).

    ## Version History
    * v1: Gymnasium FrozenLake's action encoding (0 LEFT, 1 DOWN, 2 RIGHT,
      3 UP); everything else as v0.
    * v0: Initial version, actions 0 UP, 1 DOWN, 2 LEFT, 3 RIGHT (no longer
      registered: ``gym.make`` of it raises ``DeprecatedEnv``).
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    def __init__(
        self,
        instance: Instance | None = None,
        *,
        regime: str = "L1",
        height: int = 8,
        width: int = 8,
        max_steps: int | None = None,
        render_mode: str | None = None,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}")
        if instance is not None:
            height, width = instance.height, instance.width
        self._fixed_instance = instance
        self._regime, self._height, self._width = regime, height, width
        self._max_steps_override = max_steps
        self.render_mode = render_mode
        self.action_space = spaces.Discrete(len(ACTION_NAMES))
        self.observation_space = spaces.Dict(
            {
                "agent": spaces.Discrete(height * width),
                "grid": spaces.Box(0, len(CELL_TYPES) - 1, shape=(height, width), dtype=np.int8),
            }
        )
        self.instance: Instance | None = instance
        self.grid: Grid = instance.grid if instance else ()
        self.agent: Cell = (0, 0)
        self.steps = 0
        self.outcome: str | None = None
        self.max_steps = max_steps or (instance.max_steps if instance else 0)

    def _obs(self) -> dict[str, Any]:
        codes = np.array([[CELL_TYPES.index(k) for k in row] for row in self.grid], dtype=np.int8)
        return {"agent": self.agent[0] * self._width + self.agent[1], "grid": codes}

    def _info(self, fired: list[dict] | None = None) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "steps": self.steps,
            "position": self.agent,
            "events": fired or [],
            "instance_id": self.instance.id if self.instance else None,
        }

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        instance = (options or {}).get("instance") or self._fixed_instance
        if instance is None:
            draw = seed if seed is not None else int(self.np_random.integers(2**31 - 1))
            instance = generate_instance(draw, self._regime, 0, self._height, self._width)
        if (instance.height, instance.width) != (self._height, self._width):
            raise ValueError("instance size differs from the env's observation space")
        self.instance = instance
        self.max_steps = self._max_steps_override or instance.max_steps
        self.grid = instance.grid
        self.agent = (0, 0)
        self.steps = 0
        self.outcome = None
        return self._obs(), self._info()

    def step(self, action):
        if self.instance is None:
            raise RuntimeError("call reset() before step()")
        if self.outcome is not None:
            raise RuntimeError(f"episode is over ({self.outcome}); call reset()")
        if not self.action_space.contains(action):
            names = ", ".join(f"{i} {name}" for i, name in enumerate(ACTION_NAMES))
            raise ValueError(f"action must be one of {names}, got {action!r}")
        self.steps += 1
        before = self.agent
        self.agent = apply_move(self.grid, self.agent, ACTION_NAMES[int(action)])
        kind = self.grid[self.agent[0]][self.agent[1]]
        reward, fired = 0.0, []
        if kind == HOLE and self.agent != before:  # only entering a hole kills
            self.outcome, reward = DEATH, -1.0
        elif kind == GOAL:
            self.outcome, reward = SUCCESS, 1.0
        else:
            fired = self._apply_events()
            if self.steps >= self.max_steps:
                self.outcome = TIMEOUT
        terminated = self.outcome in (SUCCESS, DEATH)
        truncated = self.outcome == TIMEOUT
        return self._obs(), reward, terminated, truncated, self._info(fired)

    def _apply_events(self) -> list[dict]:
        fired = []
        for event in self.instance.events:  # type: ignore[union-attr]
            if event.step != self.steps:
                continue
            self.grid = flip_cells(self.grid, event.cells)
            fired.append(
                {
                    "step": event.step,
                    "cells": [list(c) for c in event.cells],
                    "under_agent": self.agent in event.cells,
                    "cut_off": not has_path(self.grid, self.agent, goal_of(self.grid)),
                }
            )
        return fired

    def render(self):
        if self.render_mode == "ansi":
            return text_observation(self.grid, self.agent)
        if self.render_mode == "rgb_array":
            return np.asarray(render_image(self.grid, self.agent))
        return None


def register_env() -> None:
    """Register ``ENV_ID`` with gymnasium (once)."""
    if ENV_ID not in gym.registry:
        gym.register(id=ENV_ID, entry_point=DynamicFrozenLakeEnv)
