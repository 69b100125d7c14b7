"""What a task function does before its ``Task``, written once.

A task function reads as inspect_evals' do: its checks, one call each; its
settings, built once from its checked arguments; then ``return Task(dataset=...,
solver=..., scorer=..., metrics=..., epochs=..., name=..., version=...,
metadata=...)``, each argument one call (``lifelong`` hands its checked
arguments to the body it shares with ``lifelong_with_agent``, which ends so).
What every task shares is here, so no task restates it: :class:`TaskBody`,
constructed first thing in every task (``TaskBody(task, locals())``), rejects a
parameter the signature does not name and ``inspect eval --epochs 0``
(``cli_epochs.py``), names the task after its family as every run of it logs
(``name``, ``metadata.task_name``) and opens its metadata with ``task_family``
(``metadata``). :class:`GridTaskBody` adds what the tasks over the benchmark's
instances (``detect``, ``navigate``, ``probe``) share: the memory and image
factors taken from the arguments, the size and (for a task that has it)
``structured_output`` checked, the instances loaded and the rendering style
checked against them, and the samples and metadata of the task's settings
(``dataset``, ``metadata``), which name only the parameters the task has: a
task without ``structured_output`` or the ``image_*`` parameters records none.
The task passes the version (``metadata.task_version()``) and its epochs,
reduced by ``counts_mean`` (``score_counts.counted_epochs``).

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

from inspect_ai.dataset import MemoryDataset

from spatialstale_evals.harness.cli_epochs import check_cli_epochs
from spatialstale_evals.harness.observe import IMAGE_PARAMS, Observed, check_render
from spatialstale_evals.harness.params import changed, check_bool, check_choice, parameters, pick, reject_unknown
from spatialstale_evals.harness.samples import InstanceSet, SampleText
from spatialstale_evals.metadata import task_name
from spatialstale_evals.world.dataset import DIGEST_KEY, SIZES
from spatialstale_evals.world.render import RenderStyle

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


class TaskBody:
    """What every task function does first, and what every task is called.

    Construct it first thing in the task (``TaskBody(task, locals())``): a
    parameter the signature does not name (the task's ``**unknown``) and
    ``inspect eval --epochs 0`` are refused, before any other check.

    Attributes:
        task: The ``@task`` function.
        family: The task family (the function's name).
    """

    def __init__(self, task: Callable[..., Any], args: Mapping[str, Any]) -> None:
        reject_unknown(task, args.get("unknown", {}))
        check_cli_epochs()
        self.task = task
        self.family: str = task.__name__

    @property
    def name(self) -> str:
        """The ``Task``'s name: the family's, as every run of it logs (``metadata.task_name``)."""
        return task_name(self.family)

    def metadata(self, *parts: Mapping[str, Any]) -> dict[str, Any]:
        """The ``Task``'s metadata: ``task_family``, then each of ``parts`` in order."""
        merged: dict[str, Any] = {"task_family": self.family}
        for part in parts:
            merged |= part
        return merged


class GridTaskBody(TaskBody):
    """A task over the benchmark's instances, in the order it runs: construct
    it first thing in the task (``GridTaskBody(task, locals(), factor_names)``:
    the misspelled parameters and ``--epochs 0`` rejected, the factors taken),
    then the task's own checks, then ``check_options`` (the size and, for a task
    that has it, ``structured_output``), ``load`` (the instances, the rendering
    style checked against them: ``size`` and ``style`` for the task's settings);
    then the ``Task``'s ``dataset`` and ``metadata`` from the task's settings.

    Attributes:
        factors: The memory factors of ``factor_names`` and the ``image_*``
            parameters, as passed, in the order named.
        options: The size and ``structured_output`` (if the task has it), checked.
    """

    def __init__(self, task: Callable[..., Any], args: Mapping[str, Any], factor_names: Iterable[str] = ()) -> None:
        super().__init__(task, args)
        self.factors: dict[str, Any] = pick(args, (*factor_names, *IMAGE_PARAMS))
        self.options: dict[str, Any] = {}
        self.render: RenderStyle | None = None
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

    def load(self, dataset: str | None, regime: str, modality: str) -> InstanceSet:
        """The instances of ``regime`` at the checked size (a folder of one's
        own at the default: its own size, which the options then name), the
        ``image_*`` factors checked against their grid."""
        if "size" not in self.options:
            raise RuntimeError(f"{self.family}: check_options() before load()")
        instances = InstanceSet.load(dataset, regime, self.options["size"])
        self.options["size"] = instances.size
        self.render = check_render(modality, self.factors, instances.first.height, instances.first.width)
        self._loaded = (regime, instances)
        return instances

    @property
    def size(self) -> str:
        """The instances' size, once loaded (the task's ``size``, or a folder's own)."""
        self._instances()
        return str(self.options["size"])

    @property
    def style(self) -> RenderStyle:
        """The rendering style of the ``image_*`` arguments, checked against the instances at ``load``."""
        if self.render is None:
            raise RuntimeError(f"{self.family}: load() the instances first")
        return self.render

    def _instances(self) -> tuple[str, InstanceSet]:
        if self._loaded is None:
            raise RuntimeError(f"{self.family}: load() the instances first")
        return self._loaded

    def parameters(self, settings: Observed) -> dict[str, Any]:
        """The parameters ``settings`` name (the task's settings dataclass:
        ``Observed.parameters``, in their order) that the task has: a task
        without the ``image_*`` parameters records no rendering style."""
        named = parameters(self.task)
        return {k: v for k, v in settings.parameters().items() if k in named}

    def dataset(
        self, settings: Observed, sample_text: SampleText, shown: Mapping[str, Any] | None = None
    ) -> MemoryDataset:
        """One sample per instance: its metadata holds the task's parameters
        (``parameters``); its input and target are ``sample_text`` of the
        instance (the family's ``explain.sample_text``), the input closed by
        the parameters that are not factors or options, then the factors and
        options that are not the task's defaults (``shown``: parameters the
        input names in another form, after the rest)."""
        _, instances = self._instances()
        shown = shown or {}
        every = self.parameters(settings)
        moved = {**self.factors, **self.options}.keys()  # listed only when not the task's defaults
        listed = {k: v for k, v in every.items() if k not in moved and k not in shown} | changed(
            self.task, {k: v for k, v in every.items() if k in moved}
        )
        return instances.samples(self.family, every, listed | shown, sample_text)

    def metadata(self, settings: Observed, *parts: Mapping[str, Any]) -> dict[str, Any]:  # type: ignore[override]
        """The ``Task``'s metadata: ``task_family``, ``regime``, each of
        ``parts`` in order (the family's prompt version), the task's parameters
        (``parameters``), then the SHA-256 of the instance file read
        (``DIGEST_KEY``: the report groups runs by it)."""
        regime, instances = self._instances()
        return super().metadata({"regime": regime}, *parts, self.parameters(settings), {DIGEST_KEY: instances.sha256})
