"""Measured cost of the suite: harness overhead, tokens, memory, log size, scaling.

    python benchmarks/perf.py [--quick] [--json perf.json] [--keep-logs DIR] [--only overhead,logs]

Everything is measured in one run, side by side, so a noisy machine affects
both sides of each comparison alike. Scripted agents (``spatialstale/<policy>``)
stand in for a model; they count tokens as ceil(characters / 4) over every
message and tool definition sent, plus 255 per image, and likewise over the
reply (``spatialstale_evals/harness/provider.py``). The sections:

- **Harness overhead**: wall time of ``navigate`` (L2, ``no_filter``, one epoch,
  a fixed set of instances) with an instant agent (``perfbench/replay``, which
  replays the moves the scripted ``observer`` made in a warm-up run, so it
  plays the observer's episodes without spending time reading the prompt),
  divided by the wall time of a bare Inspect loop defined here: one sample per
  navigate sample, each making exactly as many ``generate`` calls as that
  navigate sample made (counted from its log's model events), with a system
  and a user message of the navigate prompts' mean sizes (plus a distinct PNG
  per call in image mode), the same ``move`` tool offered, against a trivial
  provider (``perfbench/fixed``) that returns a fixed ``move`` call and counts
  tokens like the scripted provider. Repeated, alternating the two; the
  median of the paired ratios is reported. The image cache of
  ``observe.png_data_uri`` is cleared before every navigate run, so each run
  renders its images. A cProfile of one run of each side gives the time by
  code area.
- **Tokens**: per navigation decision and per episode by strategy (prompt
  and completion, navigator and auditor, from each model event's usage), per
  detection instance at B = 1, 10, 20, 64, and a least-squares fit
  tokens = a * steps + b over episodes at ``history=0`` (agents observer,
  memory and random, so episode lengths vary from 1 to 50 steps).
- **Memory**: peak RSS (the child's own VmHWM; ``os.wait4``'s ru_maxrss where
  /proc is missing, which also counts pages inherited at spawn) of a subprocess running the
  full 50-seed text ``navigate`` (task defaults: ``omcd``, 5 epochs; 1 epoch
  with ``--quick``), beside a subprocess that runs a single episode.
- **Logs**: ``.eval`` bytes per episode in text and image mode for
  ``observer`` (about 14 steps) and for ``perfbench/wander`` (defined here: a
  random walk over safe cells that never enters a hole or the goal, so every
  episode lasts the full 50 steps and shows up to 50 distinct images: the
  worst case for image logs), and the time ``read_eval_log`` takes on full
  50-seed image-mode logs.
- **Scaling**: dataset generation, ``render_png`` and prompt tokens at 8x8,
  16x16 and 32x32, on small datasets written to a temporary folder.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import hashlib
import json
import os
import platform
import pstats
import random
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    Content,
    ContentImage,
    ContentText,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    get_model,
    modelapi,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ToolChoice, ToolInfo

import spatialstale_evals
from spatialstale_evals.detect import detect
from spatialstale_evals.harness import observe
from spatialstale_evals.harness import provider as scripted_provider
from spatialstale_evals.harness.navigation import MOVE_TOOL, STRATEGIES, Episode, step_message
from spatialstale_evals.harness.provider import (
    count_input_tokens,
    episode_salt,
    last_prompt,
    move_output,
    text_output,
)
from spatialstale_evals.harness.scripted import Prompt
from spatialstale_evals.navigate import navigate
from spatialstale_evals.world import dataset as world_dataset
from spatialstale_evals.world.env import DynamicFrozenLakeEnv
from spatialstale_evals.world.grid import ACTIONS, HOLE, apply_move
from spatialstale_evals.world.render import render_png

PAPER_DETECT = {1: (64, 18.7), 10: (7, 3.1), 20: (4, 2.2)}  # calls, k tokens per instance (GPT-4o, SPEC section 7)
TARGET_RATIO = 1.5
TARGET_TEXT_KB = 50
TARGET_IMAGE_KB = 500
KB = 1000

# --------------------------------------------------------------------------- providers defined here


class BenchAPI(ModelAPI):
    """``perfbench/fixed``: always one ``move(DOWN)`` call (audits: ``[]``).
    ``perfbench/wander``: a random walk over safe cells that never enters a
    hole or the goal, so a navigation episode always uses its whole budget.
    ``perfbench/replay``: the instant agent of the overhead measurement: it
    answers the k-th decision of an episode with the move ``observer`` made
    there in a warm-up run (``REPLAY``), so it plays the same episodes without
    reading the prompt.
    All count tokens exactly as the scripted provider does."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig | None = None,
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())
        if model_name not in ("fixed", "wander", "replay"):
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


_VISITS: dict[Any, dict[tuple[int, int], int]] = defaultdict(lambda: defaultdict(int))

#: (sample id, epoch) -> the moves ``observer`` made, in order; and how many of
#: them the current replay has used.
REPLAY: dict[tuple[Any, ...], list[str]] = {}
_REPLAYED: dict[tuple[Any, ...], int] = defaultdict(int)


def recorded_moves(log: EvalLog) -> dict[tuple[Any, ...], list[str]]:
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
    salt = episode_salt()
    if salt is None or salt not in REPLAY:
        raise RuntimeError(f"perfbench/replay: no recorded episode for {salt}")
    k = _REPLAYED[salt]
    _REPLAYED[salt] += 1
    return REPLAY[salt][k]


def wander_move(prompt: Prompt) -> str:
    """Step to the least-visited safe neighbour (never a hole, never the goal;
    ties broken by a hash of the sample and prompt), so an episode lasts its
    whole budget and shows as many distinct observations as the lake allows."""
    grid = prompt.grid()
    agent, goal = prompt.position()
    salt = episode_salt()
    visits = _VISITS[salt]
    visits[agent] += 1
    rng = random.Random(int.from_bytes(hashlib.sha256(repr((salt, prompt.text)).encode()).digest()[:8], "big"))
    safe = []
    for action in ACTIONS:
        cell = apply_move(grid, agent, action)
        if cell != agent and cell != goal and grid[cell[0]][cell[1]] != HOLE:
            safe.append((visits[cell], rng.random(), action))
    if safe:
        return min(safe)[2]
    bump = [a for a in ACTIONS if apply_move(grid, agent, a) == agent]
    return bump[0] if bump else ACTIONS[0]


@modelapi(name="perfbench")
def perfbench():  # noqa: ANN201 - Inspect's provider factory protocol
    return BenchAPI


# --------------------------------------------------------------------------- helpers


#: CPU seconds (all threads of this process) of the latest ``run_eval``.
LAST_RUN_CPU_S = [0.0]


def run_eval(task: Task, model: str, log_dir: Path, collect: bool = True, **kwargs: Any) -> tuple[EvalLog, float]:
    """One in-process Inspect run; the wall time of the ``eval`` call only."""
    log_dir.mkdir(parents=True, exist_ok=True)
    if collect:
        gc.collect()  # start each timed run with a clean heap, so one run does not pay for earlier runs' garbage
    start, cpu_start = time.perf_counter(), time.process_time()
    (log,) = inspect_eval(task, model=model, log_dir=str(log_dir), display="none", **kwargs)
    elapsed = time.perf_counter() - start
    LAST_RUN_CPU_S[0] = time.process_time() - cpu_start
    if log.status != "success":
        raise RuntimeError(f"{task.name} on {model} ended {log.status}: {log.error}")
    return log, elapsed


def model_events(sample: Any) -> list[Any]:
    return [e for e in sample.events if e.event == "model"]


def usage_of(event: Any) -> tuple[int, int]:
    u = event.output.usage
    return (u.input_tokens, u.output_tokens) if u else (0, 0)


def text_chars(message: ChatMessage) -> int:
    if isinstance(message.content, str):
        return len(message.content)
    return sum(len(p.text) for p in message.content if isinstance(p, ContentText))


def image_count(message: ChatMessage) -> int:
    if isinstance(message.content, str):
        return 0
    return sum(isinstance(p, ContentImage) for p in message.content)


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else float("nan")


def linear_fit(xs: list[float], ys: list[float]) -> dict[str, float]:
    x, y = np.asarray(xs, float), np.asarray(ys, float)
    a, b = np.polyfit(x, y, 1)
    ss_res = float(((y - (a * x + b)) ** 2).sum())
    ss_tot = float(((y - y.mean()) ** 2).sum())
    return {"a": float(a), "b": float(b), "r2": 1 - ss_res / ss_tot if ss_tot else 1.0}


class PolicyTimer:
    """Wall time spent inside the scripted agents' policy (reading the grid,
    planning, writing the audit), which is the stand-in model's own work, not
    harness overhead."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def wrap(self, fn: Any) -> Any:
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start

        return timed


POLICY = PolicyTimer()
replay_move = POLICY.wrap(replay_move)
scripted_provider.move_choice = POLICY.wrap(scripted_provider.move_choice)
scripted_provider.audit_reply = POLICY.wrap(scripted_provider.audit_reply)


# --------------------------------------------------------------------------- overhead


@solver
def bare_generate_loop(system_chars: int, user_chars: int, images: tuple[str, ...] | None) -> Solver:
    """The baseline: ``metadata['calls']`` generate calls and nothing else.

    Like any real loop (and like navigate), it sends one system message per
    sample and a new user message per call whose text differs from the last:
    a constant prompt object would let Inspect pool it across the whole
    sample and log it once, which no evaluation can do."""
    config = GenerateConfig(parallel_tool_calls=False)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = get_model()
        offset = state.metadata["offset"]
        system = ChatMessageSystem(content=numbered(state.metadata["offset"], system_chars))
        for i in range(state.metadata["calls"]):
            call = offset + i
            if images:
                half = user_chars // 2
                parts: list[Content] = [
                    ContentText(text=numbered(call, half)),
                    ContentImage(image=images[call % len(images)]),
                    ContentText(text=filler(user_chars - half)),
                ]
                user = ChatMessageUser(content=parts)
            else:
                user = ChatMessageUser(content=numbered(call, user_chars))
            await model.generate([system, user], tools=[MOVE_TOOL], tool_choice="auto", config=config)
        return state

    return solve


def filler(n: int) -> str:
    line = "x" * 63 + "\n"
    return (line * (n // len(line) + 1))[:n]


def numbered(i: int, n: int) -> str:
    """``n`` characters of filler that differ for every ``i``."""
    tag = f"{i:08d}\n"
    return (tag + filler(n))[:n]


def bare_task(calls: list[int], system_chars: int, user_chars: int, images: list[str] | None) -> Task:
    offsets = np.cumsum([0, *calls[:-1]]).tolist()
    samples = [
        Sample(id=f"bare-{i:03d}", input="bare", metadata={"calls": n, "offset": int(o)})
        for i, (n, o) in enumerate(zip(calls, offsets))
    ]
    return Task(
        dataset=MemoryDataset(samples, name="bare"),
        # A tuple, which Inspect logs as "tuple": a list of data URIs would be
        # written into the log header, a cost navigate does not pay.
        solver=bare_generate_loop(system_chars, user_chars, tuple(images) if images else None),
        name="bare_loop",
    )


def image_pool(n: int) -> list[str]:
    """Distinct rendered observations (one per agent cell), as the navigate
    prompts carry them; rendered here, outside any timed region."""
    inst = world_dataset.load(None, "L2")[0]
    cells = [(r, c) for r in range(inst.height) for c in range(inst.width)]
    import base64

    return [
        "data:image/png;base64," + base64.b64encode(render_png(inst.grid, cell)).decode("ascii")
        for cell in cells[: max(1, min(n, len(cells)))]
    ]


def area_of(filename: str) -> str:
    path = filename.replace("\\", "/")
    if "/spatialstale_evals/" in path:
        rest = path.split("/spatialstale_evals/", 1)[1]
        return "spatialstale_evals/" + rest.removesuffix(".py")
    if "/inspect_ai/" in path:
        parts = path.split("/inspect_ai/", 1)[1].split("/")
        return "inspect_ai/" + "/".join(p.removesuffix(".py") for p in parts[:2])
    if path.startswith("~") or path.startswith("<"):
        return "builtins"
    for marker in ("/site-packages/", "/dist-packages/"):
        if marker in path:
            return path.split(marker, 1)[1].split("/")[0].removesuffix(".py")
    if "/lib/python" in path:
        return "stdlib/" + path.split("/lib/python", 1)[1].split("/")[1].removesuffix(".py")
    return path


def profile_areas(prof: cProfile.Profile) -> tuple[dict[str, float], list[tuple[str, float, float]]]:
    stats = pstats.Stats(prof)
    areas: dict[str, float] = defaultdict(float)
    funcs = []
    for (filename, line, name), (_, _, tt, ct, _) in stats.stats.items():  # type: ignore[attr-defined]
        area = area_of(filename)
        if area == "builtins":
            area = "builtins: " + name.split(" of ")[0].strip("<>{}").replace("built-in method ", "")[:40]
        areas[area] += tt
        funcs.append((f"{area_of(filename)}:{line}({name})", tt, ct))
    return dict(areas), sorted(funcs, key=lambda f: -f[1])


def measure_overhead(modality: str, limit: int, repeats: int, tmp: Path) -> dict[str, Any]:
    def nav_task() -> Task:
        return navigate(regime="L2", strategy="no_filter", modality=modality, epochs=1)

    observe.png_data_uri.cache_clear()
    POLICY.seconds = 0.0
    log, _ = run_eval(nav_task(), "spatialstale/observer", tmp / f"overhead-{modality}-warm", limit=limit)
    observer_policy_s = POLICY.seconds
    moves = recorded_moves(log)
    resolved = read_eval_log(log.location, resolve_attachments=True)
    samples = resolved.samples or []
    calls = [len(model_events(s)) for s in samples]
    events = [e for s in samples for e in model_events(s)]
    system_chars = round(mean([text_chars(e.input[0]) for e in events]))
    user_chars = round(mean([text_chars(e.input[-1]) for e in events]))
    images_per_call = mean([image_count(e.input[-1]) for e in events])
    prompt_tokens = mean([usage_of(e)[0] for e in events])
    images = image_pool(max(calls)) if images_per_call else None
    bare = bare_task(calls, system_chars, user_chars, images)
    run_eval(bare, "perfbench/fixed", tmp / f"overhead-{modality}-bare-warm")

    nav_times, bare_times, policy_times, bare_calls, bare_tokens = [], [], [], 0, 0.0
    nav_events = bare_events = 0
    nav_cpu: list[float] = []
    bare_cpu: list[float] = []
    for r in range(repeats):
        observe.png_data_uri.cache_clear()
        use_replay(moves)
        POLICY.seconds = 0.0
        log, t_nav = run_eval(nav_task(), "perfbench/replay", tmp / f"overhead-{modality}-{r}", limit=limit)
        nav_cpu.append(LAST_RUN_CPU_S[0])
        if recorded_moves(log) != moves:
            raise RuntimeError("the replayed episodes differ from the observer's")
        n_nav = sum(len(model_events(s)) for s in log.samples or [])
        if n_nav != sum(calls):
            raise RuntimeError(f"navigate made {n_nav} calls, expected {sum(calls)}")
        policy_times.append(POLICY.seconds)
        log_b, t_bare = run_eval(
            bare_task(calls, system_chars, user_chars, images), "perfbench/fixed", tmp / f"bare-{modality}-{r}"
        )
        bare_cpu.append(LAST_RUN_CPU_S[0])
        bare_calls = sum(len(model_events(s)) for s in log_b.samples or [])
        nav_events = sum(len(s.events) for s in log.samples or [])
        bare_events = sum(len(s.events) for s in log_b.samples or [])
        bare_tokens = mean([usage_of(e)[0] for s in log_b.samples or [] for e in model_events(s)])
        nav_times.append(t_nav)
        bare_times.append(t_bare)
    if bare_calls != sum(calls):
        raise RuntimeError(f"bare loop made {bare_calls} calls, expected {sum(calls)}")
    ratios = [n / b for n, b in zip(nav_times, bare_times)]
    ratios_ex = [(n - p) / b for n, p, b in zip(nav_times, policy_times, bare_times)]
    n = sum(calls)
    return {
        "modality": modality,
        "episodes": len(calls),
        "generate_calls": n,
        "prompt_system_chars": system_chars,
        "prompt_user_chars": user_chars,
        "images_per_call": images_per_call,
        "prompt_tokens_navigate": prompt_tokens,
        "prompt_tokens_bare": bare_tokens,
        "navigate_s": nav_times,
        "bare_s": bare_times,
        "policy_s": policy_times,
        "ratio": median(ratios),
        "ratios": ratios,
        "ratio_excluding_policy": median(ratios_ex),
        "navigate_cpu_s": nav_cpu,
        "bare_cpu_s": bare_cpu,
        "cpu_ratio": median([n / b for n, b in zip(nav_cpu, bare_cpu)]),
        "cpu_ratios": [n / b for n, b in zip(nav_cpu, bare_cpu)],
        "navigate_ms_per_call": median(nav_times) / n * 1000,
        "bare_ms_per_call": median(bare_times) / n * 1000,
        "policy_ms_per_call": median(policy_times) / n * 1000,
        "events_per_call_navigate": nav_events / n,
        "events_per_call_bare": bare_events / n,
        "observer_policy_ms_per_call": observer_policy_s / n * 1000,
        "_calls": calls,
        "_moves": moves,
        "_sizes": (system_chars, user_chars, images),
    }


#: (path suffix, function name) -> label: where a navigate decision's time goes.
KEY_CALLS = {
    ("spatialstale_evals/harness/navigation.py", "solve"): "navigation loop (everything in the solver)",
    ("inspect_ai/model/_model.py", "generate"): "Inspect Model.generate (incl. provider)",
    ("spatialstale_evals/harness/provider.py", "generate"): "scripted provider generate",
    ("benchmarks/perf.py", "generate"): "perfbench provider generate",
    ("inspect_ai/model/_call_tools.py", "execute_tools"): "Inspect execute_tools (move tool)",
    ("spatialstale_evals/harness/navigation.py", "step_message"): "prompt building (step_message)",
    ("spatialstale_evals/world/render.py", "render_png"): "render_png",
    ("spatialstale_evals/harness/navigation.py", "step"): "world step (Episode.step)",
    ("spatialstale_evals/harness/parsing.py", "parse_move"): "move parsing",
    ("inspect_ai/_eval/task/log.py", "log_sample_event"): "Inspect per-event sample buffer",
    ("inspect_ai/_eval/task/run.py", "log_sample"): "Inspect sample logging",
}


def key_calls(prof: cProfile.Profile) -> dict[str, float]:
    stats = pstats.Stats(prof)
    out: dict[str, float] = defaultdict(float)
    for (filename, _, name), (_, _, _, ct, _) in stats.stats.items():  # type: ignore[attr-defined]
        path = filename.replace("\\", "/")
        for (suffix, func), label in KEY_CALLS.items():
            if name == func and path.endswith(suffix):
                out[label] = max(out[label], ct)  # nested same-name helpers: keep the outermost
    return dict(out)


def profile_overhead(result: dict[str, Any], limit: int, tmp: Path, top: int = 12) -> dict[str, Any]:
    modality = result["modality"]
    system_chars, user_chars, images = result["_sizes"]
    observe.png_data_uri.cache_clear()
    use_replay(result["_moves"])
    task = navigate(regime="L2", strategy="no_filter", modality=modality, epochs=1)
    gc.collect()
    prof_nav = cProfile.Profile()
    prof_nav.enable()
    run_eval(task, "perfbench/replay", tmp / f"profile-{modality}-nav", collect=False, limit=limit)
    prof_nav.disable()
    task = bare_task(result["_calls"], system_chars, user_chars, images)
    gc.collect()
    prof_bare = cProfile.Profile()
    prof_bare.enable()
    run_eval(task, "perfbench/fixed", tmp / f"profile-{modality}-bare", collect=False)
    prof_bare.disable()
    nav_keys, bare_keys = key_calls(prof_nav), key_calls(prof_bare)
    nav_areas, nav_funcs = profile_areas(prof_nav)
    bare_areas, _ = profile_areas(prof_bare)
    rows = []
    for area in set(nav_areas) | set(bare_areas):
        rows.append((area, nav_areas.get(area, 0.0), bare_areas.get(area, 0.0)))
    rows.sort(key=lambda r: -(r[1] - r[2]))
    return {
        "modality": modality,
        "navigate_total_s": sum(nav_areas.values()),
        "bare_total_s": sum(bare_areas.values()),
        "key_calls": [
            {"call": label, "navigate_s": nav_keys.get(label, 0.0), "bare_s": bare_keys.get(label, 0.0)}
            for label in KEY_CALLS.values()
            if label in nav_keys or label in bare_keys
        ],
        "areas": [{"area": a, "navigate_s": n, "bare_s": b, "extra_s": n - b} for a, n, b in rows[:top]],
        "functions": [{"function": f, "tottime_s": tt, "cumtime_s": ct} for f, tt, ct in nav_funcs[:top]],
        "own_functions": [
            {"function": f, "tottime_s": tt, "cumtime_s": ct}
            for f, tt, ct in nav_funcs
            if f.startswith("spatialstale_evals/")
        ][:top],
    }


# --------------------------------------------------------------------------- tokens


def episode_tokens(log: EvalLog) -> list[dict[str, Any]]:
    rows = []
    for s in log.samples or []:
        events = model_events(s)
        nav = [usage_of(e) for e in events if e.tools]
        aud = [usage_of(e) for e in events if not e.tools]
        value = s.scores["navigation_scorer"].value
        rows.append(
            {
                "steps": value["steps"],
                "nav_calls": len(nav),
                "nav_in": sum(u[0] for u in nav),
                "nav_out": sum(u[1] for u in nav),
                "audit_calls": len(aud),
                "audit_in": sum(u[0] for u in aud),
                "audit_out": sum(u[1] for u in aud),
                "score_tokens": value["tokens"],
                "decision_in_min": min((u[0] for u in nav), default=0),
                "decision_in_max": max((u[0] for u in nav), default=0),
            }
        )
    for r in rows:
        r["total"] = r["nav_in"] + r["nav_out"] + r["audit_in"] + r["audit_out"]
        if r["total"] != r["score_tokens"]:
            raise RuntimeError(f"model-event usage {r['total']} != score tokens {r['score_tokens']}")
    return rows


def strategy_summary(rows: list[dict[str, Any]]) -> dict[str, float]:
    decisions = sum(r["nav_calls"] for r in rows)
    return {
        "episodes": len(rows),
        "steps": mean([r["steps"] for r in rows]),
        "decision_in": sum(r["nav_in"] for r in rows) / decisions,
        "decision_out": sum(r["nav_out"] for r in rows) / decisions,
        "nav_in": mean([r["nav_in"] for r in rows]),
        "nav_out": mean([r["nav_out"] for r in rows]),
        "audit_calls": mean([r["audit_calls"] for r in rows]),
        "audit_in": mean([r["audit_in"] for r in rows]),
        "audit_out": mean([r["audit_out"] for r in rows]),
        "total": mean([r["total"] for r in rows]),
    }


def measure_tokens(limit: int, modalities: list[str], tmp: Path) -> dict[str, Any]:
    strategies = ["no_memory", "no_filter", "self_verify", "omcd", "oracle"]
    by_strategy = []
    fit_rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for modality in modalities:
        for strategy in strategies:
            task = navigate(regime="L2", strategy=strategy, modality=modality, epochs=1)
            log, _ = run_eval(task, "spatialstale/observer", tmp / f"tokens-{strategy}-{modality}", limit=limit)
            rows = episode_tokens(log)
            by_strategy.append({"strategy": strategy, "modality": modality, **strategy_summary(rows)})
            if modality == "text":
                fit_rows[strategy] += rows
    for agent in ("memory", "random"):
        for strategy in ("no_memory", "no_filter", "omcd"):
            task = navigate(regime="L2", strategy=strategy, modality="text", epochs=1)
            log, _ = run_eval(task, f"spatialstale/{agent}", tmp / f"linear-{agent}-{strategy}", limit=limit)
            fit_rows[strategy] += episode_tokens(log)
    linear = []
    for strategy in ("no_memory", "no_filter", "omcd"):
        rows = fit_rows[strategy]
        fit = linear_fit([r["steps"] for r in rows], [r["total"] for r in rows])
        per_step = [r["nav_in"] / r["nav_calls"] for r in rows if r["nav_calls"]]
        spread = [r["decision_in_max"] - r["decision_in_min"] for r in rows if r["nav_calls"]]
        spread_pct = [
            (r["decision_in_max"] - r["decision_in_min"]) / (r["nav_in"] / r["nav_calls"]) * 100
            for r in rows
            if r["nav_calls"]
        ]
        linear.append(
            {
                "strategy": strategy,
                "episodes": len(rows),
                "steps_min": min(r["steps"] for r in rows),
                "steps_max": max(r["steps"] for r in rows),
                **fit,
                "prompt_per_step_min": min(per_step),
                "prompt_per_step_max": max(per_step),
                "within_episode_spread_max": max(spread),
                "within_episode_spread_pct_max": max(spread_pct),
            }
        )
    return {"by_strategy": by_strategy, "linear": linear}


def measure_detect(limit: int, tmp: Path) -> list[dict[str, Any]]:
    rows = []
    for b in (1, 10, 20, 64):
        log, elapsed = run_eval(
            detect(regime="L1", modality="text", batch_size=b),
            "spatialstale/observer",
            tmp / f"detect-{b}",
            limit=limit,
        )
        samples = log.samples or []
        inputs = [sum(u.input_tokens for u in s.model_usage.values()) for s in samples]
        outputs = [sum(u.output_tokens for u in s.model_usage.values()) for s in samples]
        calls = [s.scores["detection_scorer"].value["calls"] for s in samples]
        paper_calls, paper_k = PAPER_DETECT.get(b, (None, None))
        rows.append(
            {
                "batch_size": b,
                "instances": len(samples),
                "calls": mean(calls),
                "input": mean(inputs),
                "output": mean(outputs),
                "total": mean(inputs) + mean(outputs),
                "f1": log.results.scores[0].metrics["f1"].value if log.results else float("nan"),
                "paper_calls": paper_calls,
                "paper_tokens": paper_k * 1000 if paper_k else None,
                "seconds": elapsed,
            }
        )
    return rows


# --------------------------------------------------------------------------- memory

CHILD = r"""
import json, sys, time
from inspect_ai import eval as inspect_eval
from spatialstale_evals.navigate import navigate
epochs, limit, log_dir = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
start = time.perf_counter()
(log,) = inspect_eval(
    navigate(regime="L2", strategy="omcd", modality="text", epochs=epochs),
    model="spatialstale/observer", log_dir=log_dir, display="none", limit=limit or None,
)
assert log.status == "success", log.error
hwm = None
try:  # this process's own high-water mark (ru_maxrss would also count the parent's pages at spawn)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            hwm = int(line.split()[1]) * 1024 / 1e6
except OSError:
    pass
print(json.dumps({"seconds": time.perf_counter() - start, "episodes": len(log.samples), "vm_hwm_mb": hwm}))
"""


def run_child(epochs: int, limit: int, log_dir: Path) -> dict[str, Any]:
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(epochs), str(limit), str(log_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out, err = proc.stdout.read(), proc.stderr.read()  # type: ignore[union-attr]
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"child run failed ({proc.returncode}): {err[-2000:]}")
    result = json.loads(out.strip().splitlines()[-1])
    # ru_maxrss of a child on Linux includes the RSS it inherited from this
    # (large) process at spawn, so the child's own VmHWM is used where there is one.
    result["ru_maxrss_mb"] = usage.ru_maxrss * 1024 / 1e6  # Linux: KiB
    result["peak_rss_mb"] = result["vm_hwm_mb"] or result["ru_maxrss_mb"]
    return result


def measure_memory(epochs: int, tmp: Path) -> dict[str, Any]:
    one = run_child(1, 1, tmp / "rss-one")
    full = run_child(epochs, 0, tmp / "rss-full")
    return {"single_episode": one, "full": {**full, "epochs": epochs, "seeds": 50}}


# --------------------------------------------------------------------------- logs


def log_stats(log: EvalLog) -> dict[str, Any]:
    path = Path(log.location)
    with zipfile.ZipFile(path) as z:
        entries = [i for i in z.infolist() if i.filename.startswith("samples/")]
        sample_bytes = [i.compress_size for i in entries]
    resolved_images, distinct_shown = [], []
    for s in log.samples or []:
        rec = s.scores["navigation_scorer"].metadata
        steps = s.scores["navigation_scorer"].value["steps"]
        distinct_shown.append(len({tuple(c) for c in rec["trajectory"][:steps]}))
        resolved_images.append(sum(1 for v in (s.attachments or {}).values() if v.startswith("data:image")))
    steps = [s.scores["navigation_scorer"].value["steps"] for s in log.samples or []]
    size = path.stat().st_size
    n = len(steps)
    return {
        "episodes": n,
        "steps": mean(steps),
        "file_bytes": size,
        "bytes_per_episode": size / n,
        "sample_entry_bytes": mean(sample_bytes),
        "bytes_per_step": sum(sample_bytes) / sum(steps),
        "image_attachments": mean(resolved_images),
        "distinct_observations": mean(distinct_shown),
        "_path": str(path),
    }


def time_read(path: str, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        read_eval_log(path)
        times.append(time.perf_counter() - start)
    return median(times)


def measure_logs(quick: bool, tmp: Path) -> dict[str, Any]:
    runs = []
    for agent, seeds in (("spatialstale/observer", 50), ("perfbench/wander", 10 if quick else 50)):
        for modality in ("text", "image"):
            task = navigate(regime="L2", strategy="no_filter", modality=modality, epochs=1)
            _VISITS.clear()
            log, elapsed = run_eval(task, agent, tmp / f"logs-{agent.replace('/', '-')}-{modality}", limit=seeds)
            stats = log_stats(log)
            stats.update(agent=agent, modality=modality, run_s=elapsed)
            if seeds == 50 and modality == "image":
                stats["read_eval_log_s"] = time_read(stats["_path"])
            runs.append(stats)
    return {"runs": runs}


# --------------------------------------------------------------------------- scaling


def measure_scaling(tmp: Path, renders: int) -> list[dict[str, Any]]:
    rows = []
    for side in (8, 16, 32):
        folder = tmp / f"scale-{side}"
        start = time.perf_counter()
        world_dataset.write(folder, count=3, height=side, width=side)
        gen_s = time.perf_counter() - start
        inst = world_dataset.load(folder, "L2")[0]
        cells = [(r, c) for r in range(side) for c in range(side)]
        png_sizes, render_times = [], []
        for i in range(renders):
            cell = cells[(i * 7) % len(cells)]
            start = time.perf_counter()
            png = render_png(inst.grid, cell)
            render_times.append(time.perf_counter() - start)
            png_sizes.append(len(png))
        row: dict[str, Any] = {
            "size": f"{side}x{side}",
            "entries": len(inst.memory),
            "max_steps": inst.max_steps,
            "generate_ms_per_instance": gen_s / 9 * 1000,  # 3 seeds x 3 regimes
            "render_ms": median(render_times) * 1000,
            "png_kb": mean(png_sizes) / KB,
        }
        for modality in ("text", "image"):
            # Prompt tokens of a step, from a real one-decision run; the time to
            # build a step's prompt (observation, memory view, image), directly.
            task = navigate(
                regime="L2", strategy="no_filter", modality=modality, epochs=1, dataset=str(folder), max_steps=1
            )
            log, _ = run_eval(task, "spatialstale/observer", tmp / f"scale-nav-{side}-{modality}", limit=1)
            events = [e for s in log.samples or [] for e in model_events(s)]
            row[f"nav_prompt_{modality}"] = usage_of(events[0])[0]
            env = DynamicFrozenLakeEnv(inst, max_steps=inst.max_steps)
            env.reset()
            episode = Episode(env=env, view=list(inst.memory))
            times = []
            for _ in range(renders):
                observe.png_data_uri.cache_clear()
                start = time.perf_counter()
                step_message(episode, modality, STRATEGIES["no_filter"])
                times.append(time.perf_counter() - start)
            row[f"prompt_build_ms_{modality}"] = median(times) * 1000
        log, elapsed = run_eval(
            detect(regime="L1", modality="text", batch_size=10, dataset=str(folder)),
            "spatialstale/observer",
            tmp / f"scale-detect-{side}",
            limit=1,
        )
        events = [e for s in log.samples or [] for e in model_events(s)]
        row["audit_prompt_b10"] = usage_of(events[0])[0]
        row["audit_calls"] = len(events)
        row["detect_tokens_per_instance"] = sum(sum(usage_of(e)) for e in events)
        rows.append(row)
    return rows


# --------------------------------------------------------------------------- report


def machine() -> dict[str, Any]:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import inspect_ai

    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "inspect_ai": inspect_ai.__version__,
        "spatialstale_evals": getattr(spatialstale_evals, "__version__", "0.1.0"),
        "load_before": os.getloadavg(),
    }


def k(x: float) -> str:
    return f"{x / 1000:.1f}k" if x >= 1000 else f"{x:.0f}"


def yes(ok: bool) -> str:
    return "yes" if ok else "**no**"


def render_report(res: dict[str, Any]) -> str:
    out: list[str] = []
    m = res["machine"]
    out.append(f"## SpatialSTALE performance ({'quick' if res['quick'] else 'full'} run)\n")
    out.append(
        f"Machine: {m['cpu'] or 'unknown CPU'}, {m['cores']} cores, {m['platform']}, Python {m['python']}, "
        f"inspect-ai {m['inspect_ai']}; load average before {m['load_before'][0]:.2f}, "
        f"after {m['load_after'][0]:.2f}; total {res['wall_s'] / 60:.1f} min.\n"
    )
    ov = {o["modality"]: o for o in res["overhead"]}
    logs = {(r["agent"], r["modality"]): r for r in res["logs"]["runs"]}
    wt, wi = logs[("perfbench/wander", "text")], logs[("perfbench/wander", "image")]
    oi = logs[("spatialstale/observer", "image")]
    mem = res["memory"]["full"]
    lin = {r["strategy"]: r for r in res["tokens"]["linear"]}
    out.append("### Summary\n")
    out.append("| figure | value | target | met |")
    out.append("|---|---|---|---|")
    t = ov["text"]
    out.append(
        f"| harness overhead ratio, text (navigate / bare Inspect loop, {t['generate_calls']} calls) "
        f"| {t['ratio']:.2f} ({t['navigate_ms_per_call']:.1f} vs {t['bare_ms_per_call']:.1f} ms/call) "
        f"| <= {TARGET_RATIO} | {yes(t['ratio'] <= TARGET_RATIO)}"
        f"{' (quick run: too short to judge; run without --quick)' if res['quick'] else ''} |"
    )
    if "image" in ov:
        i = ov["image"]
        out.append(
            f"| harness overhead ratio, image ({i['generate_calls']} calls) | {i['ratio']:.2f} "
            f"({i['navigate_ms_per_call']:.1f} vs {i['bare_ms_per_call']:.1f} ms/call) | report | - |"
        )
    nf = next(r for r in res["tokens"]["by_strategy"] if r["strategy"] == "no_filter" and r["modality"] == "text")
    out.append(
        f"| tokens per navigation decision (L2 text, no_filter) | {nf['decision_in']:.0f} prompt + "
        f"{nf['decision_out']:.0f} completion | - | - |"
    )
    det = {r["batch_size"]: r for r in res["detect"]}
    out.append(
        "| tokens per detection instance, B = 1 / 10 / 20 (paper 18.7k / 3.1k / 2.2k) | "
        + " / ".join(k(det[b]["total"]) for b in (1, 10, 20))
        + " | - | - |"
    )
    out.append(
        "| tokens per episode linear in steps (history=0): fit R^2 no_memory / no_filter / omcd; "
        "largest change of a decision's prompt within an episode | "
        + " / ".join(f"{lin[s]['r2']:.4f}" for s in ("no_memory", "no_filter", "omcd"))
        + f"; {max(r['within_episode_spread_pct_max'] for r in lin.values()):.1f} % | linear | "
        + yes(all(r["within_episode_spread_pct_max"] <= 1.0 for r in lin.values()))
        + " |"
    )
    out.append(
        f"| peak RSS, 50-seed text navigate ({mem['epochs']} epoch{'s' if mem['epochs'] > 1 else ''}, "
        f"{mem['episodes']} episodes) | {mem['peak_rss_mb']:.0f} MB "
        f"(one episode: {res['memory']['single_episode']['peak_rss_mb']:.0f} MB) | - | - |"
    )
    out.append(
        f"| .eval bytes per 50-step episode, text | {wt['bytes_per_episode'] / KB:.1f} KB "
        f"| <= {TARGET_TEXT_KB} KB | {yes(wt['bytes_per_episode'] / KB <= TARGET_TEXT_KB)} |"
    )
    out.append(
        f"| .eval bytes per 50-step episode, image | {wi['bytes_per_episode'] / KB:.1f} KB "
        f"| <= {TARGET_IMAGE_KB} KB | {yes(wi['bytes_per_episode'] / KB <= TARGET_IMAGE_KB)} |"
    )
    out.append(
        f"| read_eval_log, 50-seed image log (observer, {oi['file_bytes'] / 1e6:.1f} MB) "
        f"| {oi['read_eval_log_s']:.2f} s | - | - |"
    )
    if "read_eval_log_s" in wi:
        out.append(
            f"| read_eval_log, 50-seed image log (50-step episodes, {wi['file_bytes'] / 1e6:.1f} MB) "
            f"| {wi['read_eval_log_s']:.2f} s | - | - |"
        )
    out.append("")

    out.append("### Harness overhead\n")
    out.append(
        "| modality | episodes | generate calls | prompt tokens / call (navigate, bare) | navigate s | bare s "
        "| ratio (median; all) | agent ms / call (replay; observer) | ratio without agent time | log events / call "
        "(navigate, bare) |"
    )
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    for o in res["overhead"]:
        out.append(
            f"| {o['modality']} | {o['episodes']} | {o['generate_calls']} "
            f"| {o['prompt_tokens_navigate']:.0f}, {o['prompt_tokens_bare']:.0f} "
            f"| {median(o['navigate_s']):.2f} | {median(o['bare_s']):.2f} "
            f"| {o['ratio']:.2f} ({', '.join(f'{r:.2f}' for r in o['ratios'])}) "
            f"| {o['policy_ms_per_call']:.3f}; {o['observer_policy_ms_per_call']:.2f} "
            f"| {o['ratio_excluding_policy']:.2f} "
            f"| {o['events_per_call_navigate']:.1f}, {o['events_per_call_bare']:.1f} |"
        )
    out.append("")
    for p in res["profile"]:
        out.append(
            f"cProfile, {p['modality']} (profiled totals: navigate {p['navigate_total_s']:.2f} s, "
            f"bare {p['bare_total_s']:.2f} s): cumulative time of the main calls (they nest), then own time "
            "by code area, largest excess over the bare loop first:\n"
        )
        n = next(o["generate_calls"] for o in res["overhead"] if o["modality"] == p["modality"])
        out.append("| call (cumulative, outermost) | navigate s | bare s | navigate ms / decision |")
        out.append("|---|---|---|---|")
        for c in p["key_calls"]:
            out.append(
                f"| {c['call']} | {c['navigate_s']:.3f} | {c['bare_s']:.3f} | {c['navigate_s'] / n * 1000:.2f} |"
            )
        out.append("")
        out.append("| area | navigate s | bare s | extra s |")
        out.append("|---|---|---|---|")
        for a in p["areas"]:
            out.append(f"| {a['area']} | {a['navigate_s']:.3f} | {a['bare_s']:.3f} | {a['extra_s']:+.3f} |")
        out.append("")
        out.append("Top functions of this package in the navigate run (own time, cumulative):\n")
        out.append("| function | tottime s | cumtime s |")
        out.append("|---|---|---|")
        for f in p["own_functions"][:8]:
            out.append(f"| {f['function']} | {f['tottime_s']:.3f} | {f['cumtime_s']:.3f} |")
        out.append("")

    out.append("### Tokens per navigation decision and per episode (L2, observer)\n")
    out.append(
        "| strategy | modality | episodes | steps | prompt / decision | completion / decision "
        "| navigator prompt / episode | navigator completion / episode | audit calls | audit prompt / episode "
        "| audit completion / episode | total / episode |"
    )
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in res["tokens"]["by_strategy"]:
        out.append(
            f"| {r['strategy']} | {r['modality']} | {r['episodes']} | {r['steps']:.1f} | {r['decision_in']:.0f} "
            f"| {r['decision_out']:.0f} | {k(r['nav_in'])} | {r['nav_out']:.0f} | {r['audit_calls']:.1f} "
            f"| {k(r['audit_in'])} | {k(r['audit_out'])} | {k(r['total'])} |"
        )
    out.append("")
    out.append("Tokens per episode = a * steps + b at history=0 (episodes of observer, memory and random, L2 text):\n")
    out.append(
        "| strategy | episodes | steps range | a (tokens/step) | b | R^2 | prompt tokens / decision, episode means "
        "(min-max) | largest spread within one episode |"
    )
    out.append("|---|---|---|---|---|---|---|---|")
    for r in res["tokens"]["linear"]:
        out.append(
            f"| {r['strategy']} | {r['episodes']} | {r['steps_min']}-{r['steps_max']} | {r['a']:.1f} | {r['b']:.0f} "
            f"| {r['r2']:.5f} | {r['prompt_per_step_min']:.0f}-{r['prompt_per_step_max']:.0f} "
            f"| {r['within_episode_spread_max']} tokens ({r['within_episode_spread_pct_max']:.1f} %) |"
        )
    out.append("")
    out.append(
        "A decision's prompt is constant within an episode (last column: only the step counter's digits change), "
        "so an episode's tokens are exactly linear in its steps. The pooled omcd fit is looser because each "
        "episode keeps the view its own audit left (random's coin-flip audit removes about half the entries), "
        "so slopes differ between episodes; its intercept is the audit's tokens.\n"
    )
    out.append("### Tokens per detection instance (L1, text, observer)\n")
    out.append(
        "| B | instances | calls / instance | prompt / instance | completion / instance | total / instance | F1 "
        "| paper calls | paper tokens |"
    )
    out.append("|---|---|---|---|---|---|---|---|---|")
    for r in res["detect"]:
        out.append(
            f"| {r['batch_size']} | {r['instances']} | {r['calls']:.1f} | {k(r['input'])} | {k(r['output'])} "
            f"| {k(r['total'])} | {r['f1']:.3f} | {r['paper_calls'] or '-'} "
            f"| {k(r['paper_tokens']) if r['paper_tokens'] else '-'} |"
        )
    out.append("")
    out.append("### Memory\n")
    one = res["memory"]["single_episode"]
    out.append("| run | episodes | wall s | peak RSS |")
    out.append("|---|---|---|---|")
    out.append(
        f"| one episode (import + Inspect + 1 sample) | {one['episodes']} | {one['seconds']:.1f} "
        f"| {one['peak_rss_mb']:.0f} MB |"
    )
    out.append(
        f"| 50 seeds x {mem['epochs']} epochs, L2 text omcd, observer | {mem['episodes']} "
        f"| {mem['seconds']:.1f} | {mem['peak_rss_mb']:.0f} MB |"
    )
    out.append("")
    out.append("### Logs (L2, no_filter)\n")
    out.append(
        "| agent | modality | episodes | steps | .eval bytes / episode | sample entry (compressed) "
        "| bytes / step | images stored / episode | distinct observations / episode | read_eval_log |"
    )
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    for r in res["logs"]["runs"]:
        read = f"{r['read_eval_log_s']:.2f} s" if "read_eval_log_s" in r else "-"
        imgs = f"{r['image_attachments']:.1f}" if r["modality"] == "image" else "-"
        out.append(
            f"| {r['agent']} | {r['modality']} | {r['episodes']} | {r['steps']:.1f} "
            f"| {r['bytes_per_episode'] / KB:.1f} KB | {r['sample_entry_bytes'] / KB:.1f} KB "
            f"| {r['bytes_per_step']:.0f} | {imgs} | {r['distinct_observations']:.1f} | {read} |"
        )
    out.append("")
    out.append("### Scaling (L2 navigate no_filter and L1 detect B=10, observer, first seed)\n")
    out.append(
        "| grid | entries | budget | generate ms / instance | render_png ms | PNG KB | nav prompt tokens, text "
        "| nav prompt tokens, image | step prompt build ms, text | step prompt build ms, image "
        "| audit call prompt (B=10) | audit calls | detect tokens / instance |"
    )
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in res["scaling"]:
        out.append(
            f"| {r['size']} | {r['entries']} | {r['max_steps']} | {r['generate_ms_per_instance']:.1f} "
            f"| {r['render_ms']:.1f} | {r['png_kb']:.1f} | {k(r['nav_prompt_text'])} | {k(r['nav_prompt_image'])} "
            f"| {r['prompt_build_ms_text']:.2f} | {r['prompt_build_ms_image']:.1f} "
            f"| {k(r['audit_prompt_b10'])} | {r['audit_calls']} | {k(r['detect_tokens_per_instance'])} |"
        )
    out.append("")
    out.append(
        "Image tokens are the scripted provider's flat 255 per image; a provider that bills by 512 px "
        "tiles (OpenAI high detail: 85 + 170 per tile after scaling the short side to 768 px) would "
        "charge 255 at 8x8 and 765 at 16x16 and 32x32."
    )
    return "\n".join(out)


def strip_private(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: strip_private(v) for k, v in obj.items() if not k.startswith("_")}
    if isinstance(obj, list):
        return [strip_private(v) for v in obj]
    return obj


SECTIONS = ("overhead", "tokens", "memory", "logs", "scaling")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer instances and repeats (about 2-3 minutes)")
    parser.add_argument("--json", default="perf.json", help="where to write the results (default perf.json)")
    parser.add_argument("--keep-logs", default=None, help="keep the Inspect logs in this folder")
    parser.add_argument(
        "--only",
        default=",".join(SECTIONS),
        help=f"comma-separated sections to run, of {', '.join(SECTIONS)} (default: all)",
    )
    args = parser.parse_args()
    quick = args.quick
    sections = set(args.only.split(","))
    if not sections <= set(SECTIONS):
        parser.error(f"--only: unknown section(s) {sorted(sections - set(SECTIONS))}; choose from {SECTIONS}")
    started = time.perf_counter()
    res: dict[str, Any] = {"quick": quick, "machine": machine()}
    with tempfile.TemporaryDirectory(prefix="spatialstale-perf-") as tmpdir:
        tmp = Path(args.keep_logs) if args.keep_logs else Path(tmpdir)

        def step(name: str) -> None:
            print(f"[{time.perf_counter() - started:6.1f} s] {name}", file=sys.stderr, flush=True)

        # Runs of a few seconds each (all 50 instances in a full run): shorter runs
        # were dominated by scheduling noise on a shared 2-core machine.
        overhead_limit, repeats = (20, 2) if quick else (50, 7)
        if "overhead" in sections:
            res["overhead"], res["profile"] = [], []
            for modality in ("text", "image"):
                step(f"overhead, {modality}")
                res["overhead"].append(measure_overhead(modality, overhead_limit, repeats, tmp))
            for o in res["overhead"]:
                step(f"profile, {o['modality']}")
                res["profile"].append(profile_overhead(o, overhead_limit, tmp))
        if "tokens" in sections:
            step("tokens per navigation decision / episode")
            res["tokens"] = measure_tokens(10 if quick else 50, ["text"] if quick else ["text", "image"], tmp)
            step("tokens per detection instance")
            res["detect"] = measure_detect(10 if quick else 50, tmp)
        if "memory" in sections:
            step("peak RSS (subprocesses)")
            res["memory"] = measure_memory(1 if quick else 5, tmp)
        if "logs" in sections:
            step("log sizes")
            res["logs"] = measure_logs(quick, tmp)
        if "scaling" in sections:
            step("scaling")
            res["scaling"] = measure_scaling(tmp, renders=5 if quick else 20)
    res["machine"]["load_after"] = os.getloadavg()
    res["wall_s"] = time.perf_counter() - started
    # The report needs every section; a partial run prints its JSON instead.
    print(render_report(res) if sections == set(SECTIONS) else json.dumps(strip_private(res), indent=2))
    Path(args.json).write_text(json.dumps(strip_private(res), indent=2) + "\n", encoding="utf-8")
    print(f"\nJSON: {args.json}", file=sys.stderr)


if __name__ == "__main__":
    main()
