"""The paper's run matrix as one resumable command on Inspect's ``eval_set``.

    from spatialstale_evals.analysis.matrix import MatrixSpec, run_matrix
    spec = MatrixSpec(models=["openai/gpt-4o"], seeds=10, epochs=2)
    run_matrix(spec, "logs/matrix", dry_run=True)   # plan and cost, no model call
    run_matrix(spec, "logs/matrix")                 # run; the same call again resumes

Detection runs over regimes x modalities, navigation over regimes x strategies
x navigation modalities (text unless asked), every task for every model.
``eval_set`` pairs each task with its log in ``log_dir``: a finished task is
not run again, an interrupted or failed one is retried reusing its finished
samples. Every task argument is passed explicitly (epochs included), so the
same command always names the same tasks. The log folder may hold other
logs too (``log_dir_allow_dirty``), so a matrix can be extended piecewise
(another model, more regimes) into one folder; the report counts each
(instance, epoch) of a configuration once.

The dry run builds the very prompts the tasks send (``harness.audit.audit_messages``,
``harness.navigation.step_message`` and the ``move`` tool) for every planned
instance and counts them as the scripted provider does (ceil(characters / 4),
255 per image): exact for detection, and for navigation a per-step size times
a number of steps that only a run can tell, given as two bounds.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from inspect_ai import Task, eval_set
from inspect_ai.model import ChatMessageSystem

from spatialstale_evals.detect import detect
from spatialstale_evals.harness import prompts
from spatialstale_evals.harness.audit import audit_messages, batches
from spatialstale_evals.harness.navigation import MOVE_TOOL, STRATEGIES, Episode, step_message
from spatialstale_evals.harness.observe import MODALITIES
from spatialstale_evals.harness.provider import count_input_tokens, count_text_tokens, last_prompt
from spatialstale_evals.harness.samples import load_instances
from spatialstale_evals.harness.scripted import audit_reply
from spatialstale_evals.navigate import navigate
from spatialstale_evals.world.env import DynamicFrozenLakeEnv
from spatialstale_evals.world.grid import goal_of, shortest_path, start_of
from spatialstale_evals.world.instance import Instance
from spatialstale_evals.world.regimes import REGIMES
from spatialstale_evals.world.staleness import stale_labels

FAMILIES = ("detect", "navigate")
NAVIGATE_EPOCHS = 5  # the navigate task's default (the paper's 5 episodes per seed)
DEFAULT_BATCH = 10
#: Output of one ``move`` call as the scripted provider counts it (the longest direction).
MOVE_OUTPUT_TOKENS = count_text_tokens("move" + json.dumps({"direction": "RIGHT"}))


@dataclass
class MatrixSpec:
    """What to run. ``seeds`` limits every task to its first N instances (the
    same seeds in every regime, strategy and modality); ``epochs`` is the
    number of navigation episodes per seed (detection runs once per seed)."""

    models: list[str]
    regimes: Sequence[str] = REGIMES
    modalities: Sequence[str] = MODALITIES  # detect
    strategies: Sequence[str] = tuple(STRATEGIES)
    nav_modalities: Sequence[str] = ("text",)
    families: Sequence[str] = FAMILIES
    seeds: int | None = None
    epochs: int = NAVIGATE_EPOCHS
    batch_size: int = DEFAULT_BATCH
    dataset: str | None = None

    def validate(self) -> None:
        if not self.models:
            raise ValueError("at least one --model is needed")
        for name, values, choices in (
            ("regime", self.regimes, REGIMES),
            ("modality", self.modalities, MODALITIES),
            ("navigation modality", self.nav_modalities, MODALITIES),
            ("strategy", self.strategies, tuple(STRATEGIES)),
            ("task", self.families, FAMILIES),
        ):
            bad = [v for v in values if v not in choices]
            if bad:
                raise ValueError(f"unknown {name} {', '.join(bad)}; expected one of {', '.join(choices)}")
        for name, value in (("seeds", self.seeds), ("epochs", self.epochs), ("batch_size", self.batch_size)):
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                raise ValueError(f"{name} must be a positive integer; got {value!r}")


@dataclass
class PlannedTask:
    """One task of the matrix (per model) and what it will cost.

    ``calls``/``input_tokens``/``output_tokens`` are exact for detection. For
    navigation they are an upper bound (every episode uses its whole step
    budget and omcd re-audits after every L3 event); the ``*_min`` fields are
    the cost of an agent that walks a shortest path of the true grid (what the
    ``observer`` agent does; exact for it on L1/L2, an estimate on L3, where
    events can lengthen the path). An agent that dies early costs less.
    """

    family: str
    regime: str
    modality: str
    strategy: str | None
    samples: int
    epochs: int
    calls: int = 0
    calls_min: int = 0
    input_tokens: int = 0
    input_tokens_min: int = 0
    output_tokens: int = 0
    output_tokens_min: int = 0
    task_args: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.family} {self.regime} {self.strategy + ' ' if self.strategy else ''}{self.modality}"

    def build(self) -> Task:
        return (detect if self.family == "detect" else navigate)(**self.task_args)


# -- cost estimates ------------------------------------------------------------------


def _audit_call_tokens(grid: tuple[str, ...], batch: Sequence[Any], modality: str) -> tuple[int, int]:
    """(input, output) tokens of one audit call; output as the observer answers."""
    messages = audit_messages(grid, (0, 0), batch, modality, "binary")
    text_messages = messages if modality == "text" else audit_messages(grid, (0, 0), batch, "text", "binary")
    reply = audit_reply("observer", last_prompt(text_messages))
    return count_input_tokens(messages, []), count_text_tokens(reply)


def _audit_window(grid: tuple[str, ...], memory: Sequence[Any], modality: str, batch_size: int) -> tuple[int, int, int]:
    calls = tin = tout = 0
    for batch in batches(memory, batch_size):
        i, o = _audit_call_tokens(grid, batch, modality)
        calls, tin, tout = calls + 1, tin + i, tout + o
    return calls, tin, tout


def estimate_detect(instances: Sequence[Instance], modality: str, batch_size: int) -> dict[str, int]:
    calls = tin = tout = 0
    for inst in instances:
        for _, grid in inst.detection_windows():
            c, i, o = _audit_window(grid, inst.memory, modality, batch_size)
            calls, tin, tout = calls + c, tin + i, tout + o
    return {"calls": calls, "input_tokens": tin, "output_tokens": tout}


def step_prompt_tokens(inst: Instance, strategy: str, modality: str, max_steps: int) -> int:
    """Input tokens of one navigation step (system prompt, observation, position,
    the strategy's memory view at the start, the ``move`` tool)."""
    env = DynamicFrozenLakeEnv(inst, max_steps=max_steps)
    env.reset()
    s = STRATEGIES[strategy]
    if not s.shows_memory:
        view = []
    elif s.judge == "none":
        view = list(inst.memory)
    else:  # audited or oracle view at the start, as a perfect audit would leave it
        labels = stale_labels(inst.memory, inst.g0, env.grid)
        view = [e for e in inst.memory if not labels[e.id]]
    episode = Episode(env=env, view=view)
    messages = [ChatMessageSystem(content=prompts.NAVIGATE_SYSTEM), step_message(episode, modality, s)]
    return count_input_tokens(messages, [MOVE_TOOL])


def estimate_navigate(
    instances: Sequence[Instance], strategy: str, modality: str, batch_size: int, epochs: int
) -> dict[str, int]:
    s = STRATEGIES[strategy]
    out = dict.fromkeys(
        ("calls", "calls_min", "input_tokens", "input_tokens_min", "output_tokens", "output_tokens_min"), 0
    )
    for inst in instances:
        max_steps = inst.max_steps
        per_step = step_prompt_tokens(inst, strategy, modality, max_steps)
        path = shortest_path(inst.grid, start_of(inst.grid), goal_of(inst.grid)) or []
        min_steps = max(len(path) - 1, 1)
        # audits of one episode: before the first step, and (upper bound) after every L3 event
        start: tuple[int, int, int] = (0, 0, 0)
        events = {"": (0, 0, 0), "_min": (0, 0, 0)}
        if s.judge == "audit":
            size = len(inst.memory) if s.single_batch else batch_size
            windows = {step for step, _ in inst.detection_windows()}
            if s.audit_at_start or 0 in windows:
                start = _audit_window(inst.grid, inst.memory, modality, size)
            if s.refresh_on_event:
                for e in inst.events:
                    c, i, o = _audit_window(inst.grid_at(e.step), inst.memory, modality, size)
                    for suffix, horizon in (("", max_steps), ("_min", min_steps)):
                        if e.step < horizon:  # the episode is still running when the event fires
                            a = events[suffix]
                            events[suffix] = (a[0] + c, a[1] + i, a[2] + o)
        for suffix, steps in (("", max_steps), ("_min", min_steps)):
            audit = events[suffix]
            out["calls" + suffix] += epochs * (steps + start[0] + audit[0])
            out["input_tokens" + suffix] += epochs * (steps * per_step + start[1] + audit[1])
            out["output_tokens" + suffix] += epochs * (steps * MOVE_OUTPUT_TOKENS + start[2] + audit[2])
    return out


@lru_cache(maxsize=16)
def _instances(dataset: str | None, regime: str) -> tuple[Instance, ...]:
    return tuple(load_instances(dataset, regime))


def plan(spec: MatrixSpec, estimate: bool = True) -> list[PlannedTask]:
    """The tasks one model runs, with their cost (``estimate=False`` skips it)."""
    spec.validate()
    planned = []
    for regime in spec.regimes:
        instances = _instances(spec.dataset, regime)[: spec.seeds]
        if "detect" in spec.families:
            for modality in spec.modalities:
                args = {"regime": regime, "modality": modality, "batch_size": spec.batch_size, "dataset": spec.dataset}
                t = PlannedTask("detect", regime, modality, None, len(instances), 1, task_args=args)
                if estimate:
                    e = estimate_detect(instances, modality, spec.batch_size)
                    t.calls = t.calls_min = e["calls"]
                    t.input_tokens = t.input_tokens_min = e["input_tokens"]
                    t.output_tokens = t.output_tokens_min = e["output_tokens"]
                planned.append(t)
        if "navigate" in spec.families:
            for strategy in spec.strategies:
                for modality in spec.nav_modalities:
                    args = {
                        "regime": regime,
                        "strategy": strategy,
                        "modality": modality,
                        "batch_size": spec.batch_size,
                        "dataset": spec.dataset,
                        "epochs": spec.epochs,
                    }
                    t = PlannedTask("navigate", regime, modality, strategy, len(instances), spec.epochs, task_args=args)
                    if estimate:
                        for k, v in estimate_navigate(
                            instances, strategy, modality, spec.batch_size, spec.epochs
                        ).items():
                            setattr(t, k, v)
                    planned.append(t)
    return planned


def _k(n: int) -> str:
    return f"{n / 1e6:.2f}M" if n >= 1e6 else f"{n / 1e3:.1f}k" if n >= 1e3 else str(n)


def _range(lo: int, hi: int, fmt: Any = _k) -> str:
    return fmt(hi) if lo == hi else f"{fmt(lo)} - {fmt(hi)}"


def format_plan(spec: MatrixSpec, planned: Sequence[PlannedTask]) -> str:
    n_models = len(spec.models)
    lines = [
        f"Run matrix: {len(planned)} task(s) x {n_models} model(s) = {len(planned) * n_models} eval(s)",
        f"models: {', '.join(spec.models)}",
        f"seeds: {spec.seeds or 'all'}; navigation epochs: {spec.epochs}; audit batch size: {spec.batch_size}",
        "",
        "| task | seeds | samples x epochs | model calls | input tokens | output tokens |",
        "|---|---|---|---|---|---|",
    ]
    for t in planned:
        episodes = t.samples * t.epochs
        lines.append(
            f"| {t.name} | {t.samples} | {episodes} | {_range(t.calls_min, t.calls, str)} "
            f"| {_range(t.input_tokens_min, t.input_tokens)} | {_range(t.output_tokens_min, t.output_tokens)} |"
        )

    def total(attr: str) -> int:
        return sum(getattr(t, attr) for t in planned)

    samples = sum(t.samples * t.epochs for t in planned)
    for label, k in (("per model", 1), ("all models", n_models)):
        lines.append(
            f"| **{label}** | {k * sum(t.samples for t in planned)} | {k * samples} "
            f"| {_range(k * total('calls_min'), k * total('calls'), str)} "
            f"| {_range(k * total('input_tokens_min'), k * total('input_tokens'))} "
            f"| {_range(k * total('output_tokens_min'), k * total('output_tokens'))} |"
        )
    lines += [
        "",
        "Tokens are ceil(characters / 4) of the prompts the tasks build (255 per image), counted here without "
        "any model call; a provider's tokenizer will differ somewhat. Detection figures are exact. Navigation "
        "is a range: low = every episode walks a shortest path of the true grid (what a perfect agent costs; "
        "an agent that dies early costs less); high = an upper bound: every episode uses its full step "
        "budget (max_steps) and omcd re-audits after every scheduled L3 event. Output tokens assume terse "
        "replies (one move call; audit JSON with a one-line reason); a model that writes more costs more.",
    ]
    return "\n".join(lines)


def run_matrix(
    spec: MatrixSpec,
    log_dir: str | Path,
    *,
    dry_run: bool = False,
    model_args: dict[str, Any] | None = None,
    model_roles: dict[str, str] | None = None,
    max_tasks: int | None = None,
    retry_attempts: int | None = None,
    display: str | None = None,
    **eval_set_kwargs: Any,
) -> tuple[bool, list[Any]] | list[PlannedTask]:
    """Run (or with ``dry_run`` only plan) the matrix. Returns ``eval_set``'s
    ``(all finished, logs)``, or the plan for a dry run."""
    planned = plan(spec, estimate=dry_run)
    if dry_run:
        return planned
    return eval_set(
        [t.build() for t in planned],
        log_dir=str(log_dir),
        model=list(spec.models),
        model_args=model_args or {},
        model_roles=model_roles or None,
        limit=spec.seeds,
        max_tasks=max_tasks,
        retry_attempts=retry_attempts,
        display=display,  # type: ignore[arg-type]
        log_dir_allow_dirty=True,
        **eval_set_kwargs,
    )
