"""The paper's run matrix as one resumable command on Inspect's ``eval_set``.

    from spatialstale_evals.runs.matrix import MatrixSpec, plan, run_matrix
    spec = MatrixSpec(models=["openai/gpt-4o"], seeds=10, epochs=2)
    plan(spec)                                       # tasks and their cost, no model call
    run_matrix(spec, "logs/matrix", max_connections=20)   # run; the same call again resumes

Every family runs over the regimes crossed with the axes its registry entry
declares (``TaskFamily.axes``, read in ``runs/axes.py``): detection over
modalities, navigation over strategies x navigation modalities (text unless
asked); every task for every model.
``eval_set`` pairs each task with its log in ``log_dir``: a finished task is
not run again, an interrupted or failed one is retried reusing its finished
samples. Every task argument is passed explicitly (epochs included), so the
same command always names the same tasks. The log folder may hold other logs
too (``log_dir_allow_dirty``), so a matrix can be extended piecewise (another
model, more regimes) into one folder; the report counts each (instance,
epoch) of a configuration once.

The spec's vocabularies and defaults are the tasks' and the families' own
(``harness.params`` reads them off the signatures, ``runs/axes.py`` off the
registry); by default it runs what the paper ran (the regimes with a Table-1
row, the strategies marked ``paper``). ``factors``
crosses any other task parameter (``view_radius``, ``filter_mode``, ...) with
the matrix, for the families that have it; a combination a task calls not
applicable (``filter_mode=history`` for ``no_filter``) is left out. Every
task is built, so validated, when the matrix is planned: bad input fails
before any model call. Anything else ``eval_set`` takes passes through
``run_matrix``'s keyword arguments unchanged.
"""

from __future__ import annotations

import gc
import itertools
import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from inspect_ai import Task, eval_set

from spatialstale_evals.harness.cost import Cost
from spatialstale_evals.harness.family import TaskFamily, families
from spatialstale_evals.harness.params import NotApplicable, parameters
from spatialstale_evals.harness.samples import load_instances
from spatialstale_evals.runs.axes import (
    axis_choices,
    axis_default,
    axis_known,
    default_families,
    literal_choices,
    matrix_axes,
    matrix_families,
    own_args,
    paper_regimes,
    shared_default,
    task_of,
)
from spatialstale_evals.runs.cost import estimate_cost
from spatialstale_evals.runs.guard import check_logs_readable, matrix_lock
from spatialstale_evals.world.instance import Instance
from spatialstale_evals.world.regimes import REGIMES

__all__ = [
    "MatrixSpec",
    "PlannedTask",
    "Plan",
    "axis_choices",
    "default_families",
    "format_plan",
    "matrix_families",
    "plan",
    "run_matrix",
    "task_of",
]


@dataclass
class MatrixSpec:
    """What to run. ``seeds`` limits every task to its first N instances (the
    same seeds in every regime and on every axis); ``epochs`` is the number of
    navigation episodes per seed (detection runs once per seed). ``axes`` maps
    the families' crossed axes (``TaskFamily.axes``: ``strategies``,
    ``nav_modalities``, ``modalities``, ...) to their values; an axis not given
    takes its default (filled in on construction). The defaults are the
    paper's matrix with the tasks' defaults; ``size`` is the grid size of every
    task (one per matrix: a second size is a second command into the same log
    folder); ``factors`` maps other task parameters to the values to cross."""

    models: list[str]
    regimes: Sequence[str] = field(default_factory=paper_regimes)
    axes: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    families: Sequence[str] = field(default_factory=lambda: default_families())
    seeds: int | None = None
    epochs: int = field(default_factory=lambda: shared_default("epochs"))
    batch_size: int = field(default_factory=lambda: shared_default("batch_size"))
    dataset: str | None = None
    size: str = field(default_factory=lambda: shared_default("size"))
    factors: Mapping[str, Sequence[Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.axes = {name: axis_default(name) for name in matrix_axes()} | dict(self.axes)

    def validate(self) -> None:
        if not self.models:
            raise ValueError("at least one --model is needed")
        axes = matrix_axes()
        unknown_axes = [name for name in self.axes if name not in axes]
        if unknown_axes:
            raise ValueError(f"unknown matrix axis {', '.join(unknown_axes)}; expected one of {', '.join(axes)}")
        for name, values, known in (
            ("regime", self.regimes, REGIMES),
            *((axes[n].called, self.axes[n], axis_known(n)) for n in axes),
            ("task", self.families, matrix_families()),
            ("size", [self.size], literal_choices("size")),
        ):
            bad = [v for v in values if v not in known]
            if bad:
                raise ValueError(f"unknown {name} {', '.join(bad)}; expected one of {', '.join(known)}")
        for name, value in (("seeds", self.seeds), ("epochs", self.epochs), ("batch_size", self.batch_size)):
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                raise ValueError(f"{name} must be a positive integer; got {value!r}")
        own = own_args()
        for name, values in self.factors.items():
            if name in own:
                raise ValueError(f"factor {name!r} is one of the matrix's own axes; use its option")
            if not any(name in parameters(task_of(f)) for f in self.families):
                known = sorted({p for f in self.families for p in parameters(task_of(f))} - own)
                raise ValueError(
                    f"factor {name!r} is no parameter of {', '.join(self.families)}; known: {', '.join(known)}"
                )
            if not values:
                raise ValueError(f"factor {name!r} has no values")

    @property
    def size_arg(self) -> dict[str, str]:
        """``size`` as a task argument: only when it is not the default, so a
        default matrix names the same tasks (and report configurations) whether
        or not it names the default size, and its log folders resume."""
        return {} if self.size == shared_default("size") else {"size": self.size}

    def crossed_axes(self, family: TaskFamily) -> Iterator[dict[str, Any]]:
        """Every combination of the values of ``family``'s axes, as task
        arguments, in the order it declares them (one empty one without axes)."""
        for values in itertools.product(*(self.axes[axis.name] for axis in family.axes)):
            yield {axis.parameter: value for axis, value in zip(family.axes, values)}

    def crossed(self, family: str) -> Iterator[dict[str, Any]]:
        """Every combination of the factors that ``family`` has (one empty one without factors)."""
        names = [n for n in self.factors if n in parameters(task_of(family))]
        for values in itertools.product(*(self.factors[n] for n in names)):
            yield dict(zip(names, values))


@dataclass
class PlannedTask:
    """One task of the matrix (per model), built, and what it will cost.

    ``cost`` is exact for detection. For navigation it is an upper bound (every
    episode uses its whole step budget, and a re-auditing strategy audits after
    every L3 event); ``cost_min`` is the cost of an agent that walks a shortest
    path of the true grid (what the ``observer`` agent does; exact for it on
    L1/L2 under full observability, an estimate otherwise). An agent that dies
    early costs less.
    """

    family: str
    regime: str
    samples: int
    epochs: int
    task: Task
    task_args: dict[str, Any] = field(default_factory=dict)
    factors: dict[str, Any] = field(default_factory=dict)
    axes: dict[str, Any] = field(default_factory=dict)
    cost: Cost = field(default_factory=Cost)
    cost_min: Cost = field(default_factory=Cost)

    @property
    def name(self) -> str:
        """The family, the regime, the value of each of the family's axes (in
        its order: ``navigate L1 omcd text``) and the factors (``view_radius=1``)."""
        extra = "".join(f" {k}={v}" for k, v in self.factors.items())
        parts = [self.family, self.regime, *(str(v) for v in self.axes.values())]
        return " ".join(p for p in parts if p) + extra


@lru_cache(maxsize=16)
def _instances(dataset: str | None, size: str, regime: str) -> tuple[Instance, ...]:
    return tuple(load_instances(dataset, regime, size))


class Plan(list):  # type: ignore[type-arg]
    """The planned tasks, and the combinations left out as not applicable (why, per task name)."""

    def __init__(self) -> None:
        super().__init__()
        self.skipped: list[str] = []


def _planned(
    family: str,
    args: dict[str, Any],
    axes: dict[str, Any],
    factors: dict[str, Any],
    samples: int,
    epochs: int,
    skipped: list[str],
) -> PlannedTask | None:
    """The task built from ``args`` (validated), or None when not applicable (why: in ``skipped``)."""
    try:
        task = task_of(family)(**args, **factors)
    except NotApplicable as exc:
        skipped.append(str(exc))
        return None
    return PlannedTask(family, args["regime"], samples, epochs, task, args, factors, axes)


def family_tasks(
    family: TaskFamily,
    spec: MatrixSpec,
    regime: str,
    instances: Sequence[Instance],
    with_cost: bool,
    skipped: list[str],
) -> list[PlannedTask]:
    """The tasks of one family for one regime: each of its matrix arguments
    (``TaskFamily.matrix``) crossed with its axes (``TaskFamily.axes``) and
    the factors it has, with its cost."""
    takes = parameters(task_of(family.name))
    planned = []
    for own, epochs in family.matrix(spec) if family.matrix else ():
        for axes in spec.crossed_axes(family):
            for factors in spec.crossed(family.name):
                args = {"regime": regime, **axes, **own}
                args |= {"dataset": spec.dataset} if "dataset" in takes else {}
                args |= spec.size_arg if "size" in takes else {}
                args |= {"epochs": epochs} if "epochs" in takes else {}
                task = _planned(family.name, args, axes, factors, len(instances), epochs, skipped)
                if task is not None:
                    if with_cost:
                        task.cost_min, task.cost = estimate_cost(family.name, instances, **args, **factors)
                    planned.append(task)
    return planned


def plan(spec: MatrixSpec, estimate: bool = True) -> Plan:
    """The tasks one model runs, built, with their cost (``estimate=False`` skips
    it). Two factor values a task runs alike (a radius covering the grid and
    None) plan one task: the first."""
    spec.validate()
    planned, seen, skipped = Plan(), set(), []
    for regime in spec.regimes:
        instances = _instances(spec.dataset, spec.size, regime)[: spec.seeds]
        for family in spec.families:
            for task in family_tasks(families()[family], spec, regime, instances, estimate, skipped):
                key = json.dumps(task.task.metadata, sort_keys=True, default=str)
                if key not in seen:
                    seen.add(key)
                    planned.append(task)
    planned.skipped = list(dict.fromkeys(skipped))
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
    "any model call; a provider's tokenizer will differ somewhat. Detection and probe figures are exact "
    "(probe: for replies as long as the observer's). Navigation "
    "is a range: low = every episode walks a shortest path of the true grid (what a perfect agent costs; "
    "an agent that dies early costs less); high = an upper bound: every episode uses its full step "
    "budget (max_steps) and a re-auditing strategy audits after every scheduled L3 event. Under partial "
    "observability (view_radius) low counts the audits of the shortest-path walk (the entries that come into "
    "view), high every entry audited alone once per window. Lifelong: low = each episode walked as a "
    "window-limited agent that keeps notes walks it (detours included) with its memory traffic, within a few "
    "percent of the scripted diligent agent; high = the whole step budget with max_memory_calls memory calls "
    "a step. With memory_access=tool (navigate) the low walk reads the memory file once an episode and the high "
    "one max_memory_calls times every step. Output tokens assume terse replies (one move "
    "call; audit JSON with a one-line reason); a model that writes more costs more."
)


def format_plan(spec: MatrixSpec, planned: Sequence[PlannedTask]) -> str:
    n_models = len(spec.models)
    lines = [
        f"Run matrix: {len(planned)} task(s) x {n_models} model(s) = {len(planned) * n_models} eval(s)",
        f"models: {', '.join(spec.models)}",
        f"seeds: {spec.seeds or 'all'}; navigation epochs: {spec.epochs}; audit batch size: {spec.batch_size}; "
        f"grid size: {spec.size}",
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
    skipped = getattr(planned, "skipped", [])
    left_out = [f"Left out as not applicable: {reason}." for reason in skipped]
    return "\n".join([*lines, "", *left_out, *([""] if left_out else []), PLAN_NOTE])


#: ``eval_set`` settings the matrix uses unless told otherwise (README, Performance).
#: ``log_realtime=False``: no realtime sample buffer, the per-event SQLite copy
#: of every event that lets ``inspect view`` follow a sample step by step while
#: it runs. The finished logs hold the same samples and events; during the run
#: a task's samples appear as they are written to its log. It was a quarter of
#: the matrix's CPU time. ``--log-realtime`` turns it back on.
MATRIX_DEFAULTS: dict[str, Any] = {"log_realtime": False}

#: Python's cyclic garbage collector during a matrix run: a young-generation
#: pass every 50,000 net allocations instead of 700, and a full pass a tenth as
#: often, after the objects already alive (modules, datasets, planned tasks)
#: are frozen out of every pass. Inspect allocates many short-lived objects
#: per model call, and with the default thresholds collection was about 15 %
#: of the run's CPU time; the run holds no long-lived cyclic garbage, so memory
#: grows little (the peak RSS is in the README).
GC_THRESHOLDS = (50_000, 20, 100)


@contextmanager
def collector_tuned(thresholds: tuple[int, int, int] = GC_THRESHOLDS) -> Iterator[None]:
    """``thresholds`` and a frozen heap within the block; as before after it."""
    before = gc.get_threshold()
    gc.collect()
    gc.freeze()
    gc.set_threshold(*thresholds)
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


def run_matrix(spec: MatrixSpec, log_dir: str | Path, **eval_set_args: Any) -> tuple[bool, list[Any]]:
    """Run the matrix with ``eval_set``; returns its ``(all finished, logs)``.

    ``eval_set_args`` go to ``inspect_ai.eval_set`` unchanged: ``model_args``,
    ``model_roles``, ``max_connections``, ``max_tasks``, ``retry_attempts``,
    ``display``, generation settings, and anything else it accepts; an
    argument given overrides ``MATRIX_DEFAULTS``. The run's garbage collector
    is tuned (``collector_tuned``). A second run on the same local folder, or
    a log in it that cannot be read, is a ``guard.LogFolderError`` before any
    model call (``runs/guard.py``).
    """
    planned = plan(spec, estimate=False)
    with matrix_lock(log_dir), collector_tuned():
        check_logs_readable(log_dir)
        return eval_set(
            [t.task for t in planned],
            log_dir=str(log_dir),
            model=list(spec.models),
            limit=spec.seeds,
            log_dir_allow_dirty=True,
            **{**MATRIX_DEFAULTS, **eval_set_args},
        )
