"""The paper's run matrix as one resumable command on Inspect's ``eval_set``.

    from spatialstale_evals.runs.matrix import MatrixSpec, plan, run_matrix
    spec = MatrixSpec(models=["openai/gpt-4o"], seeds=10, epochs=2)
    plan(spec)                                       # tasks and their cost, no model call
    run_matrix(spec, "logs/matrix", max_connections=20)   # run; the same call again resumes

Detection runs over regimes x modalities, navigation over regimes x strategies
x navigation modalities (text unless asked), every task for every model.
``eval_set`` pairs each task with its log in ``log_dir``: a finished task is
not run again, an interrupted or failed one is retried reusing its finished
samples. Every task argument is passed explicitly (epochs included), so the
same command always names the same tasks. The log folder may hold other logs
too (``log_dir_allow_dirty``), so a matrix can be extended piecewise (another
model, more regimes) into one folder; the report counts each (instance,
epoch) of a configuration once.

The spec's vocabularies and defaults are the tasks' own (``harness.params``
reads them off the signatures); anything else ``eval_set`` takes passes
through ``run_matrix``'s keyword arguments unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from inspect_ai import Task, eval_set

from spatialstale_evals import task_functions
from spatialstale_evals.harness.observe import OBSERVATIONS
from spatialstale_evals.harness.params import choices, defaults
from spatialstale_evals.harness.samples import load_instances
from spatialstale_evals.harness.strategies import STRATEGIES
from spatialstale_evals.runs.cost import Cost, estimate_detect, estimate_navigate
from spatialstale_evals.world.instance import Instance
from spatialstale_evals.world.regimes import REGIMES

#: The task families the matrix builds, by name.
FAMILIES = task_functions()
NAVIGATE_DEFAULTS = defaults(FAMILIES["navigate"])


@dataclass
class MatrixSpec:
    """What to run. ``seeds`` limits every task to its first N instances (the
    same seeds in every regime, strategy and modality); ``epochs`` is the
    number of navigation episodes per seed (detection runs once per seed).
    The defaults are the tasks' vocabularies and defaults."""

    models: list[str]
    regimes: Sequence[str] = field(default_factory=lambda: choices(FAMILIES["navigate"], "regime"))
    modalities: Sequence[str] = field(default_factory=lambda: choices(FAMILIES["detect"], "modality"))  # detect
    strategies: Sequence[str] = field(default_factory=lambda: choices(FAMILIES["navigate"], "strategy"))
    nav_modalities: Sequence[str] = ("text",)
    families: Sequence[str] = tuple(FAMILIES)
    seeds: int | None = None
    epochs: int = NAVIGATE_DEFAULTS["epochs"]
    batch_size: int = NAVIGATE_DEFAULTS["batch_size"]
    dataset: str | None = None

    def validate(self) -> None:
        if not self.models:
            raise ValueError("at least one --model is needed")
        for name, values, known in (
            ("regime", self.regimes, REGIMES),
            ("modality", self.modalities, OBSERVATIONS),
            ("navigation modality", self.nav_modalities, OBSERVATIONS),
            ("strategy", self.strategies, STRATEGIES),
            ("task", self.families, FAMILIES),
        ):
            bad = [v for v in values if v not in known]
            if bad:
                raise ValueError(f"unknown {name} {', '.join(bad)}; expected one of {', '.join(known)}")
        for name, value in (("seeds", self.seeds), ("epochs", self.epochs), ("batch_size", self.batch_size)):
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                raise ValueError(f"{name} must be a positive integer; got {value!r}")


@dataclass
class PlannedTask:
    """One task of the matrix (per model) and what it will cost.

    ``cost`` is exact for detection. For navigation it is an upper bound (every
    episode uses its whole step budget, and a re-auditing strategy audits after
    every L3 event); ``cost_min`` is the cost of an agent that walks a shortest
    path of the true grid (what the ``observer`` agent does; exact for it on
    L1/L2, an estimate on L3, where events can lengthen the path). An agent
    that dies early costs less.
    """

    family: str
    regime: str
    modality: str
    strategy: str | None
    samples: int
    epochs: int
    task_args: dict[str, Any] = field(default_factory=dict)
    cost: Cost = field(default_factory=Cost)
    cost_min: Cost = field(default_factory=Cost)

    @property
    def name(self) -> str:
        return f"{self.family} {self.regime} {self.strategy + ' ' if self.strategy else ''}{self.modality}"

    def build(self) -> Task:
        return FAMILIES[self.family](**self.task_args)


@lru_cache(maxsize=16)
def _instances(dataset: str | None, regime: str) -> tuple[Instance, ...]:
    return tuple(load_instances(dataset, regime))


def _detect_tasks(spec: MatrixSpec, regime: str, instances: Sequence[Instance], estimate: bool) -> list[PlannedTask]:
    planned = []
    for modality in spec.modalities:
        args = {"regime": regime, "modality": modality, "batch_size": spec.batch_size, "dataset": spec.dataset}
        task = PlannedTask("detect", regime, modality, None, len(instances), 1, task_args=args)
        if estimate:
            task.cost = task.cost_min = estimate_detect(instances, modality, spec.batch_size)
        planned.append(task)
    return planned


def _navigate_tasks(spec: MatrixSpec, regime: str, instances: Sequence[Instance], estimate: bool) -> list[PlannedTask]:
    planned = []
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
            task = PlannedTask("navigate", regime, modality, strategy, len(instances), spec.epochs, task_args=args)
            if estimate:
                task.cost_min, task.cost = estimate_navigate(
                    instances, strategy, modality, spec.batch_size, spec.epochs
                )
            planned.append(task)
    return planned


def plan(spec: MatrixSpec, estimate: bool = True) -> list[PlannedTask]:
    """The tasks one model runs, with their cost (``estimate=False`` skips it)."""
    spec.validate()
    planned = []
    for regime in spec.regimes:
        instances = _instances(spec.dataset, regime)[: spec.seeds]
        if "detect" in spec.families:
            planned += _detect_tasks(spec, regime, instances, estimate)
        if "navigate" in spec.families:
            planned += _navigate_tasks(spec, regime, instances, estimate)
    return planned


def _k(n: int) -> str:
    return f"{n / 1e6:.2f}M" if n >= 1e6 else f"{n / 1e3:.1f}k" if n >= 1e3 else str(n)


def _range(lo: int, hi: int, fmt: Any = _k) -> str:
    return fmt(hi) if lo == hi else f"{fmt(lo)} - {fmt(hi)}"


def _cost_cells(low: Cost, high: Cost) -> str:
    return (
        f"{_range(low.calls, high.calls, str)} | {_range(low.input_tokens, high.input_tokens)} "
        f"| {_range(low.output_tokens, high.output_tokens)}"
    )


PLAN_NOTE = (
    "Tokens are ceil(characters / 4) of the prompts the tasks build (255 per image), counted here without "
    "any model call; a provider's tokenizer will differ somewhat. Detection figures are exact. Navigation "
    "is a range: low = every episode walks a shortest path of the true grid (what a perfect agent costs; "
    "an agent that dies early costs less); high = an upper bound: every episode uses its full step "
    "budget (max_steps) and a re-auditing strategy audits after every scheduled L3 event. Output tokens "
    "assume terse replies (one move call; audit JSON with a one-line reason); a model that writes more "
    "costs more."
)


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
        lines.append(f"| {t.name} | {t.samples} | {t.samples * t.epochs} | {_cost_cells(t.cost_min, t.cost)} |")
    low = sum((t.cost_min for t in planned), Cost())
    high = sum((t.cost for t in planned), Cost())
    samples, episodes = sum(t.samples for t in planned), sum(t.samples * t.epochs for t in planned)
    for label, k in (("per model", 1), ("all models", n_models)):
        lines.append(f"| **{label}** | {k * samples} | {k * episodes} | {_cost_cells(low * k, high * k)} |")
    return "\n".join([*lines, "", PLAN_NOTE])


def run_matrix(spec: MatrixSpec, log_dir: str | Path, **eval_set_args: Any) -> tuple[bool, list[Any]]:
    """Run the matrix with ``eval_set``; returns its ``(all finished, logs)``.

    ``eval_set_args`` go to ``inspect_ai.eval_set`` unchanged: ``model_args``,
    ``model_roles``, ``max_connections``, ``max_tasks``, ``retry_attempts``,
    ``display``, generation settings, and anything else it accepts.
    """
    planned = plan(spec, estimate=False)
    return eval_set(
        [t.build() for t in planned],
        log_dir=str(log_dir),
        model=list(spec.models),
        limit=spec.seeds,
        log_dir_allow_dirty=True,
        **eval_set_args,
    )
