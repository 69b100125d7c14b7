"""The quickstart's tasks and what each costs the local model, in tokens and in
seconds at the server's measured speed: the time estimate printed beside each
task.

An estimate is the task's tokens (new prompt tokens, i.e. not read from the
server's prompt cache, and reply tokens, per seed or episode, plus per
navigate step) divided by the server's speed measured when it starts, times
the task's *factor*: its measured seconds per sample over that token time on
the machine it was calibrated on. Tokens alone leave out what a request costs
besides reading and writing tokens (the server's per-request work, Inspect's
own, the harness's), which is why the uncalibrated figures ran 20-75 % low.

Tokens and factors live in ``quickstart_calibration.json`` beside this module,
with what they were measured on; ``python benchmarks/quickstart_time.py
--limit 3 --write`` measures both on the machine it runs on and rewrites the
file.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spatialstale_evals import local_model

#: The calibration file the estimates read (and the benchmark writes).
CALIBRATION_FILE = Path(__file__).with_name("quickstart_calibration.json")
#: The token keys: one per task, and ``step`` for a navigate step after the first.
TASK_KEYS = ("detect", "omcd", "no_filter")


def load_calibration(path: Path = CALIBRATION_FILE) -> dict[str, Any]:
    """The calibration file's content, its tokens as (prompt, output) pairs."""
    data = json.loads(path.read_text(encoding="utf-8"))
    data["tokens"] = {key: (int(p), int(o)) for key, (p, o) in data["tokens"].items()}
    data["factors"] = {key: float(f) for key, f in data["factors"].items()}
    missing = [k for k in (*TASK_KEYS, "step") if k not in data["tokens"]] + [
        k for k in TASK_KEYS if k not in data["factors"]
    ]
    if missing:
        raise ValueError(f"{path}: no tokens or factor for {missing}")
    return data


def write_calibration(
    tokens: dict[str, tuple[int, int]],
    factors: dict[str, float],
    measured: dict[str, Any],
    path: Path = CALIBRATION_FILE,
) -> None:
    """Replace the calibration file with newly measured tokens and factors and
    what they were measured on (``measured``: free-form provenance)."""
    about = load_calibration(path)["about"] if path.exists() else ""
    data = {
        "about": about,
        "tokens": {k: list(v) for k, v in tokens.items()},
        "factors": {k: round(v, 3) for k, v in factors.items()},
        "measured": measured,
    }
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


_CALIBRATION = load_calibration()
#: SmolLM2's mean tokens per seed or episode (new prompt tokens, reply tokens),
#: and per navigate step after the first (``step``). An episode's part holds
#: its audits and its first step's prompt (all 64 notes).
QUICK_TOKENS: dict[str, tuple[int, int]] = _CALIBRATION["tokens"]
#: Each task's measured seconds per sample over its tokens at the measured speed.
QUICK_FACTORS: dict[str, float] = _CALIBRATION["factors"]


def token_seconds(
    key: str,
    speed: local_model.Speed,
    max_steps: int,
    steps: bool,
    tokens: dict[str, tuple[int, int]] | None = None,
) -> float:
    """One seed's or episode's tokens (``tokens``, default :data:`QUICK_TOKENS`)
    at ``speed``: the estimate before calibration."""
    tokens = QUICK_TOKENS if tokens is None else tokens
    (prompt, output), (step_prompt, step_output) = tokens[key], tokens["step"]
    n = max_steps if steps else 0
    return (prompt + step_prompt * n) / speed.prompt + (output + step_output * n) / speed.generation


#: The quickstart's navigate regime, and its step budget over the longest shortest
#: path of the instances it runs (enough to reach the goal with room for detours).
NAVIGATE_REGIME = "L2"
STEP_MARGIN = 1.5


def step_budget(limit: int, regime: str = NAVIGATE_REGIME) -> int:
    """The navigate step budget for the first ``limit`` instances of ``regime``
    (the ones ``--limit`` runs): the longest start-to-goal shortest path among
    them on the lake they are played on, times :data:`STEP_MARGIN`, rounded
    up. A constant would be a guess: on 8x8 every path is at least 14 steps."""
    from spatialstale_evals.world import dataset
    from spatialstale_evals.world.grid import goal_of, shortest_path, start_of

    longest = 0
    for inst in dataset.load(None, regime)[:limit]:
        path = shortest_path(inst.grid, start_of(inst.grid), goal_of(inst.grid))
        longest = max(longest, len(path) - 1 if path else inst.max_steps)
    return math.ceil(longest * STEP_MARGIN)


@dataclass(frozen=True)
class QuickTask:
    """One quickstart task, what it does in words, and the key of its tokens
    and factor in the calibration (:data:`QUICK_TOKENS`, :data:`QUICK_FACTORS`)."""

    label: str
    what: str
    build: Callable[[], Any]
    tokens: str  # its key in QUICK_TOKENS and QUICK_FACTORS
    steps: bool  # a navigate task: each step adds QUICK_TOKENS["step"]

    def estimate(self, speed: local_model.Speed, limit: int, max_steps: int) -> float:
        """Seconds for ``limit`` seeds or episodes at the server's ``speed``."""
        return limit * QUICK_FACTORS[self.tokens] * token_seconds(self.tokens, speed, max_steps, self.steps)


def quickstart_tasks(limit: int = 1, max_steps: int | None = None) -> list[QuickTask]:
    """detect (L1, text) and navigate (L2, omcd and no_filter), one episode per
    instance, of at most ``max_steps`` steps (default :func:`step_budget`)."""
    from spatialstale_evals.detect import detect
    from spatialstale_evals.navigate import navigate

    max_steps = step_budget(limit) if max_steps is None else max_steps

    def nav(strategy: str) -> Callable[[], Any]:
        return lambda: navigate(regime=NAVIGATE_REGIME, strategy=strategy, max_steps=max_steps, epochs=1)

    count = "1 seed" if limit == 1 else f"{limit} seeds"
    episodes = ("1 episode" if limit == 1 else f"{limit} episodes") + f" of at most {max_steps} steps"
    return [
        QuickTask(
            "detect L1 text",
            f"{count}: is each of 64 memory notes stale? 10 notes per call",
            lambda: detect(regime="L1", modality="text"),
            tokens="detect",
            steps=False,
        ),
        QuickTask(
            "navigate omcd L2 text",
            f"{episodes}, auditing memory as cells come into view",
            nav("omcd"),
            tokens="omcd",
            steps=True,
        ),
        QuickTask(
            "navigate no_filter L2 text",
            f"{episodes}, memory shown unaudited",
            nav("no_filter"),
            tokens="no_filter",
            steps=True,
        ),
    ]
