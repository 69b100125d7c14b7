"""The body of a task function, written once.

Every task function runs the same sequence around its own checks: reject a
parameter its signature does not name, take the memory and image factors out
of its arguments, check the size and ``structured_output``, load the
instances, check that the rendering style can draw them, build its settings
and return a ``Task`` named after its family, at the suite's version, with
metadata that opens with ``task_family``. :class:`GridTaskBody` does that for
the tasks over the benchmark's instances (``detect``, ``navigate``, ``probe``);
:func:`family_task` is its last step alone, for the tasks that read other data
(``stale``, ``lifelong``).

The task functions keep their explicit parameters (Inspect's ``-T`` options,
``inspect list`` and the registries read the signature); the descriptions of
the ``image_*`` parameters are written once, here (``IMAGE_ARGS``), and put in
each grid task's docstring by :func:`image_args`.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from inspect_ai import Task
from inspect_ai.scorer import Scorer
from inspect_ai.solver import Solver

from spatialstale_evals.harness.cli_epochs import check_cli_epochs
from spatialstale_evals.harness.observe import IMAGE_PARAMS, check_render, settings_from
from spatialstale_evals.harness.params import changed, check_bool, check_choice, pick, reject_unknown
from spatialstale_evals.harness.samples import InstanceSet, SampleText
from spatialstale_evals.harness.score_counts import counted_epochs
from spatialstale_evals.metadata import task_name, task_version
from spatialstale_evals.world.dataset import DIGEST_KEY, SIZES
from spatialstale_evals.world.instance import Instance

F = TypeVar("F", bound=Callable[..., Any])

#: What each ``image_*`` parameter does, as every grid task's docstring says it.
IMAGE_ARGS: dict[str, str] = {
    "image_labels": "Label each cell with its (row,col) (image modality).",
    "image_palette": "``paper``, ``high_contrast`` or ``grayscale`` (which writes each cell's type letter "
    "in its label, so needs labels).",
    "image_cell_px": "Cell size in pixels (48: the paper's 384 px at 8x8); the minimum the labels need is checked.",
    "image_marker": "The agent as a ``triangle`` (the paper) or a square marked ``A`` (``letter``).",
}
#: The line of a task's ``Args:`` section that :func:`image_args` replaces with ``IMAGE_ARGS``.
IMAGE_ARGS_LINE = re.compile(r"^(?P<indent>[ \t]*)image_\*: .*$", re.MULTILINE)
#: The width the docstring lines are wrapped at (the project's line length).
DOC_WIDTH = 120
#: An option the task does not have (``GridTaskBody.check_options``).
NO_OPTION: Any = object()


def image_args(fn: F) -> F:
    """``fn`` with the line ``image_*: ...`` of its docstring's ``Args:``
    replaced by one entry per ``image_*`` parameter (``IMAGE_ARGS``), at that
    line's indent; put it under ``@task``. A docstring without that line, or a
    function without the parameters, is an error at import."""
    doc = fn.__doc__ or ""
    found = IMAGE_ARGS_LINE.findall(doc)
    if len(found) != 1:
        raise ValueError(f"{fn.__name__}(): the docstring's Args: needs one 'image_*: ...' line; found {len(found)}")
    missing = set(IMAGE_ARGS) - set(fn.__code__.co_varnames[: fn.__code__.co_argcount])
    if missing:
        raise ValueError(f"{fn.__name__}() takes no {', '.join(sorted(missing))}")
    indent = found[0]

    def entries(match: re.Match[str]) -> str:
        return "\n".join(
            textwrap.fill(f"{name}: {text}", DOC_WIDTH, initial_indent=indent, subsequent_indent=indent + "    ")
            for name, text in IMAGE_ARGS.items()
        )

    fn.__doc__ = IMAGE_ARGS_LINE.sub(entries, doc)
    return fn


def family_task(
    family: str, metadata: Mapping[str, Any], task_class: type[Task] = Task, epochs: int = 1, **task_args: Any
) -> Task:
    """A task of ``family``: named as every run of it logs (``task_name``), at
    the suite's version, its metadata ``task_family`` then ``metadata``, its
    ``epochs`` reduced by ``counts_mean`` (the pooled metrics' counts averaged
    with the headline values); ``task_args`` are the rest of ``Task``'s arguments.
    ``inspect eval --epochs 0`` is refused here (``cli_epochs.py``)."""
    check_cli_epochs()
    return task_class(
        name=task_name(family),
        version=task_version(),
        metadata={"task_family": family, **metadata},
        epochs=counted_epochs(epochs),
        **task_args,
    )


class GridTaskBody:
    """The sequence of a task over the benchmark's instances, in the order it
    runs: construct it first thing in the task (``GridTaskBody(task,
    locals())``: the misspelled parameters rejected, the factors taken), then
    the task's own checks, then ``options`` (the size and
    ``structured_output``), ``load`` (the instances, the rendering style
    checked against them) and ``build`` (the settings, the samples, the
    ``Task``).

    Attributes:
        task: The ``@task`` function (its defaults decide what a sample's input names).
        family: The task family (the function's name).
        factors: The memory factors of ``factor_names`` and the ``image_*``
            parameters, as passed, in the order named.
    """

    def __init__(self, task: Callable[..., Any], args: Mapping[str, Any], factor_names: Iterable[str] = ()) -> None:
        reject_unknown(task, args.get("unknown", {}))
        self.task = task
        self.family: str = task.__name__
        self.factors: dict[str, Any] = pick(args, (*factor_names, *IMAGE_PARAMS))
        self.options: dict[str, Any] = {}
        self._loaded: tuple[str, InstanceSet] | None = None

    def check_options(self, size: str, structured_output: Any = NO_OPTION) -> dict[str, Any]:
        """``size`` and, for a task that has it, ``structured_output`` checked:
        the task's options (the size becomes the instances' own at ``load``). A
        task without structured output passes none, and its samples name none."""
        check_choice("size", size, SIZES)
        structured = (
            {}
            if structured_output is NO_OPTION
            else {"structured_output": check_bool("structured_output", structured_output)}
        )
        self.options = {**structured, "size": size}
        return self.options

    def load(self, dataset: str | None, regime: str, modality: str) -> Instance:
        """The instances of ``regime`` at the checked size (a folder of one's
        own at the default: its own size, which the options then name), the
        ``image_*`` factors checked against their grid; returns the first instance."""
        if "size" not in self.options:
            raise RuntimeError(f"{self.family}: check_options() before load()")
        instances = InstanceSet.load(dataset, regime, self.options["size"])
        self.options["size"] = instances.size
        first = next(iter(instances.by_id.values()))
        check_render(modality, self.factors, first.height, first.width)
        self._loaded = (regime, instances)
        return first

    def build(
        self,
        params: Mapping[str, Any],
        settings: type[Any],
        solver: Callable[[InstanceSet, Any], Solver],
        scorer: Scorer,
        *,
        settings_args: Mapping[str, Any] | None = None,
        shown: Mapping[str, Any] | None = None,
        metadata: Mapping[str, Any] | None = None,
        task_class: type[Task] = Task,
        sample_text: SampleText | None = None,
        **task_args: Any,
    ) -> Task:
        """The ``Task``: ``solver(instances, settings)`` with ``settings`` (a
        settings dataclass) built from ``params``, the factors and the options
        (``settings_args`` replacing some of them), and one sample per
        instance whose metadata holds them all and whose input names
        ``params`` and the factors and options that are not the task's
        defaults (``shown``: parameters the input names in another form,
        after the rest; ``sample_text``: the family's input and target of a
        sample, ``harness.samples.InstanceSet.samples``). The task's metadata: ``task_family``, ``regime``,
        ``metadata``, then every parameter. ``task_args`` are the rest of
        ``Task``'s arguments (``metrics``, ``epochs``), and the SHA-256 of the
        instance file read (``DIGEST_KEY``: the report groups runs by it)."""
        if self._loaded is None:
            raise RuntimeError(f"{self.family}: load() the instances before building the task")
        regime, instances = self._loaded
        shown = shown or {}
        every = {**params, **self.factors, **self.options}
        listed = {k: v for k, v in params.items() if k not in shown} | changed(self.task, self.factors | self.options)
        return family_task(
            self.family,
            {"regime": regime, **(metadata or {}), **every, DIGEST_KEY: instances.sha256},
            task_class,
            dataset=instances.samples(self.family, every, listed | shown, sample_text),
            solver=solver(instances, settings_from(settings, every | dict(settings_args or {}))),
            scorer=scorer,
            **task_args,
        )
