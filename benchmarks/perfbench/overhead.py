"""Harness overhead: ``navigate`` against a bare Inspect loop making the same calls.

The navigate side is the wall time of ``navigate`` (L2, ``no_filter``, one
epoch, a fixed set of instances) with an instant agent (``perfbench/replay``,
which replays the moves the scripted ``observer`` made in a warm-up run, so it
plays the observer's episodes without spending time reading the prompt).

The bare side is a loop defined here: one sample per navigate sample, each
making exactly as many ``generate`` calls as that navigate sample made
(counted from its log's model events), with a system and a user message of
the navigate prompts' mean sizes (plus a distinct PNG per call in image
mode), the same ``move`` tool offered, against a trivial provider
(``perfbench/fixed``) that returns a fixed ``move`` call and counts tokens
like the scripted provider. A second bare side (``keep_messages``) also keeps
its conversation in ``state.messages``, as navigate does for the viewer's
Messages tab, so that the cost of keeping it shows apart (``ratio_vs_kept``).

The sides are repeated alternately and the median of the paired ratios is
reported, so a noisy machine slows both sides of a pair alike. The renderer's
caches (``observe.png_data_uri``, ``render.CELLS``) are cleared before every
navigate run, so each run renders its images. The agents' own time (the replay's lookup; the
observer's planning in the warm-up) is measured by ``PolicyTimer`` and
reported apart, with a ratio that leaves it out; so is Inspect's lookup of
the task's installed distribution (``DISTRIBUTION_LOOKUP``), slow only in a
checkout that is not the installed package. CPU time (``time.process_time``,
every thread of this process) is recorded beside the wall time, with its own
paired ratios: a shared machine's load moves wall time more than CPU time.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from inspect_ai import Task
from inspect_ai._eval.task import log as inspect_task_log
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.model import (
    ChatMessageSystem,
    ChatMessageUser,
    Content,
    ContentImage,
    ContentText,
    GenerateConfig,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver

from spatialstale_evals.harness import observe
from spatialstale_evals.navigate import navigate
from spatialstale_evals.navigation.loop import MOVE_TOOL
from spatialstale_evals.scripted import api as scripted_provider
from spatialstale_evals.world import dataset as world_dataset
from spatialstale_evals.world.render import CELLS, render_png

from . import providers
from .runner import PolicyTimer, image_count, mean, median, model_events, run_eval, text_chars, usage_of

#: The stand-in agents' own work, timed (only) during this measurement: the
#: scripted provider's policy calls and the replay provider's lookup.
AGENT_WORK: tuple[tuple[object, str], ...] = (
    (scripted_provider, "family_reply"),
    (providers, "replay_move"),
)
#: Inspect's lookup, at each eval's start, of the installed distribution that
#: provides the task (the bare task, defined here, has none). It is quick when
#: the running package is the installed one; when it is not (a checkout run
#: through ``PYTHONPATH`` beside an editable install elsewhere, as in a git
#: worktree) it scans every installed distribution: about 0.3 s per run,
#: reported apart so such a checkout measures what an installed one would.
DISTRIBUTION_LOOKUP: tuple[tuple[object, str], ...] = ((inspect_task_log, "resolve_task_distribution"),)


def clear_render_caches() -> None:
    """Empty the renderer's caches (data URIs, grids drawn without the agent),
    so each navigate run draws every image it sends, as a first run would."""
    observe.png_data_uri.cache_clear()
    CELLS.clear()


def nav_task(modality: str) -> Task:
    """The navigate side: L2, ``no_filter``, one epoch."""
    return navigate(regime="L2", strategy="no_filter", modality=modality, epochs=1)


# --------------------------------------------------------------------------- the bare loop


@solver
def bare_generate_loop(
    system_chars: int, user_chars: int, images: tuple[str, ...] | None, keep_messages: bool = False
) -> Solver:
    """The baseline: ``metadata['calls']`` generate calls and nothing else.

    Like any real loop (and like navigate), it sends one system message per
    sample and a new user message per call whose text differs from the last:
    a constant prompt object would let Inspect pool it across the whole
    sample and log it once, which no evaluation can do. With
    ``keep_messages`` it also keeps the conversation in ``state.messages``
    (each prompt and reply), as an Inspect agent does and navigate does for
    the viewer's Messages tab; without, the sample logs only its model events."""
    config = GenerateConfig(parallel_tool_calls=False)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = get_model()
        offset = state.metadata["offset"]
        system = ChatMessageSystem(content=numbered(offset, system_chars))
        if keep_messages:
            state.messages = [system]
        for i in range(state.metadata["calls"]):
            user = bare_user_message(offset + i, user_chars, images)
            output = await model.generate([system, user], tools=[MOVE_TOOL], tool_choice="auto", config=config)
            if keep_messages:
                state.messages.extend([user, output.message])
        return state

    return solve


def bare_user_message(call: int, user_chars: int, images: tuple[str, ...] | None) -> ChatMessageUser:
    """The ``call``-th user message: text of ``user_chars`` characters, split
    around an image in image mode (as navigate's caption and step line are)."""
    if not images:
        return ChatMessageUser(content=numbered(call, user_chars))
    half = user_chars // 2
    parts: list[Content] = [
        ContentText(text=numbered(call, half)),
        ContentImage(image=images[call % len(images)]),
        ContentText(text=filler(user_chars - half)),
    ]
    return ChatMessageUser(content=parts)


def filler(n: int) -> str:
    line = "x" * 63 + "\n"
    return (line * (n // len(line) + 1))[:n]


def numbered(i: int, n: int) -> str:
    """``n`` characters of filler that differ for every ``i``."""
    tag = f"{i:08d}\n"
    return (tag + filler(n))[:n]


def bare_task(
    calls: list[int], system_chars: int, user_chars: int, images: list[str] | None, keep_messages: bool = False
) -> Task:
    """One sample per entry of ``calls``, each making that many calls; every
    call's number (``offset`` + i) is unique across the task."""
    offsets = np.cumsum([0, *calls[:-1]]).tolist()
    samples = [
        Sample(id=f"bare-{i:03d}", input="bare", metadata={"calls": n, "offset": int(o)})
        for i, (n, o) in enumerate(zip(calls, offsets))
    ]
    return Task(
        dataset=MemoryDataset(samples, name="bare"),
        # A tuple, which Inspect logs as "tuple": a list of data URIs would be
        # written into the log header, a cost navigate does not pay.
        solver=bare_generate_loop(system_chars, user_chars, tuple(images) if images else None, keep_messages),
        name="bare_loop_kept" if keep_messages else "bare_loop",
    )


def image_pool(n: int) -> list[str]:
    """Distinct rendered observations (one per agent cell), as the navigate
    prompts carry them; rendered here, outside any timed region."""
    inst = world_dataset.load(None, "L2")[0]
    cells = [(r, c) for r in range(inst.height) for c in range(inst.width)]
    return [
        "data:image/png;base64," + base64.b64encode(render_png(inst.grid, cell)).decode("ascii")
        for cell in cells[: max(1, min(n, len(cells)))]
    ]


# --------------------------------------------------------------------------- calibration and timed pairs


@dataclass(frozen=True)
class Calibration:
    """What the observer's warm-up run fixes for the timed runs: the moves to
    replay, the calls per sample, and the prompts' mean sizes."""

    moves: dict[tuple[Any, ...], list[str]]
    calls: list[int]
    system_chars: int
    user_chars: int
    images_per_call: float
    prompt_tokens: float
    images: list[str] | None
    observer_policy_s: float
    #: Inspect eval options both sides run with (e.g. ``log_realtime=False``).
    options: dict[str, Any]

    def bare(self, keep_messages: bool = False) -> Task:
        return bare_task(self.calls, self.system_chars, self.user_chars, self.images, keep_messages)


def calibrate(modality: str, limit: int, tmp: Path, timer: PolicyTimer, options: dict[str, Any]) -> Calibration:
    """Run the observer once (timing its policy), read its prompts' sizes from
    the log, and warm up the bare loop once."""
    clear_render_caches()
    timer.seconds = 0.0
    warm = tmp / f"overhead-{modality}-warm"
    log = run_eval(nav_task(modality), "spatialstale/observer", warm, limit=limit, **options).log
    observer_policy_s = timer.seconds
    samples = read_eval_log(log.location, resolve_attachments=True).samples or []
    calls = [len(model_events(s)) for s in samples]
    events = [e for s in samples for e in model_events(s)]
    images_per_call = mean([image_count(e.input[-1]) for e in events])
    cal = Calibration(
        moves=providers.recorded_moves(log),
        calls=calls,
        system_chars=round(mean([text_chars(e.input[0]) for e in events])),
        user_chars=round(mean([text_chars(e.input[-1]) for e in events])),
        images_per_call=images_per_call,
        prompt_tokens=mean([usage_of(e)[0] for e in events]),
        images=image_pool(max(calls)) if images_per_call else None,
        observer_policy_s=observer_policy_s,
        options=options,
    )
    run_eval(cal.bare(), "perfbench/fixed", tmp / f"overhead-{modality}-bare-warm", **options)
    return cal


def check_calls(log: EvalLog, expected: int, side: str) -> None:
    made = sum(len(model_events(s)) for s in log.samples or [])
    if made != expected:
        raise RuntimeError(f"{side} made {made} calls, expected {expected}")


def timed_pair(
    cal: Calibration, modality: str, limit: int, r: int, tmp: Path, timer: PolicyTimer, lookup: PolicyTimer
) -> dict[str, Any]:
    """One navigate run (replaying the observer), then one bare run, then one
    of the bare loop keeping its conversation in ``state.messages``."""
    clear_render_caches()
    providers.use_replay(cal.moves)
    timer.seconds = lookup.seconds = 0.0
    nav = run_eval(nav_task(modality), "perfbench/replay", tmp / f"overhead-{modality}-{r}", limit=limit, **cal.options)
    if providers.recorded_moves(nav.log) != cal.moves:
        raise RuntimeError("the replayed episodes differ from the observer's")
    check_calls(nav.log, sum(cal.calls), "navigate")
    policy_s, lookup_s = timer.seconds, lookup.seconds
    bare = run_eval(cal.bare(), "perfbench/fixed", tmp / f"bare-{modality}-{r}", **cal.options)
    check_calls(bare.log, sum(cal.calls), "bare loop")
    kept = run_eval(cal.bare(keep_messages=True), "perfbench/fixed", tmp / f"kept-{modality}-{r}", **cal.options)
    check_calls(kept.log, sum(cal.calls), "bare loop keeping messages")
    return {
        "navigate_s": nav.wall_s,
        "bare_s": bare.wall_s,
        "kept_s": kept.wall_s,
        "policy_s": policy_s,
        "lookup_s": lookup_s,
        "navigate_cpu_s": nav.cpu_s,
        "bare_cpu_s": bare.cpu_s,
        "navigate_events": sum(len(s.events) for s in nav.log.samples or []),
        "bare_events": sum(len(s.events) for s in bare.log.samples or []),
        "bare_tokens": mean([usage_of(e)[0] for s in bare.log.samples or [] for e in model_events(s)]),
    }


# --------------------------------------------------------------------------- the measurement


def measure_overhead(
    modality: str, limit: int, repeats: int, tmp: Path, options: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Calibrate, then ``repeats`` alternating pairs, both sides with the eval
    ``options``; the agents' functions are timed only while this runs
    (``PolicyTimer.timing``)."""
    timer, lookup = PolicyTimer(), PolicyTimer()
    with timer.timing(AGENT_WORK), lookup.timing(DISTRIBUTION_LOOKUP):
        cal = calibrate(modality, limit, tmp, timer, dict(options or {}))
        pairs = [timed_pair(cal, modality, limit, r, tmp, timer, lookup) for r in range(repeats)]
    return summarise(modality, cal, pairs)


def summarise(modality: str, cal: Calibration, pairs: list[dict[str, Any]]) -> dict[str, Any]:
    """The section's JSON: per-run times, their paired ratios, per-call figures
    (events and tokens of the last pair: they are the same in every pair)."""
    column = {key: [p[key] for p in pairs] for key in pairs[0]}
    nav_s, bare_s, policy_s, lookup_s = column["navigate_s"], column["bare_s"], column["policy_s"], column["lookup_s"]
    nav_cpu, bare_cpu = column["navigate_cpu_s"], column["bare_cpu_s"]
    ratios = [n / b for n, b in zip(nav_s, bare_s)]
    kept_ratios = [n / k for n, k in zip(nav_s, column["kept_s"])]
    cpu_ratios = [n / b for n, b in zip(nav_cpu, bare_cpu)]
    n = sum(cal.calls)
    return {
        "modality": modality,
        "eval_options": cal.options,
        "episodes": len(cal.calls),
        "generate_calls": n,
        "prompt_system_chars": cal.system_chars,
        "prompt_user_chars": cal.user_chars,
        "images_per_call": cal.images_per_call,
        "prompt_tokens_navigate": cal.prompt_tokens,
        "prompt_tokens_bare": pairs[-1]["bare_tokens"],
        "navigate_s": nav_s,
        "bare_s": bare_s,
        "policy_s": policy_s,
        "ratio": median(ratios),
        "ratios": ratios,
        "kept_s": column["kept_s"],
        "ratio_vs_kept": median(kept_ratios),
        "ratios_vs_kept": kept_ratios,
        "ratio_excluding_policy": median([(t - p) / b for t, p, b in zip(nav_s, policy_s, bare_s)]),
        "lookup_s": lookup_s,
        "ratio_excluding_lookup": median([(t - k) / b for t, k, b in zip(nav_s, lookup_s, bare_s)]),
        "ratio_excluding_policy_and_lookup": median(
            [(t - p - k) / b for t, p, k, b in zip(nav_s, policy_s, lookup_s, bare_s)]
        ),
        "navigate_cpu_s": nav_cpu,
        "bare_cpu_s": bare_cpu,
        "cpu_ratio": median(cpu_ratios),
        "cpu_ratios": cpu_ratios,
        "navigate_ms_per_call": median(nav_s) / n * 1000,
        "bare_ms_per_call": median(bare_s) / n * 1000,
        "policy_ms_per_call": median(policy_s) / n * 1000,
        "events_per_call_navigate": pairs[-1]["navigate_events"] / n,
        "events_per_call_bare": pairs[-1]["bare_events"] / n,
        "observer_policy_ms_per_call": cal.observer_policy_s / n * 1000,
        "_calls": cal.calls,
        "_moves": cal.moves,
        "_sizes": (cal.system_chars, cal.user_chars, cal.images),
    }
