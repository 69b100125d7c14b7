"""The task-body builder (``harness/task_body.py``): the ``image_*`` parameters
described once for every grid task, and the sequence's guards."""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

import pytest
from _readme import docstring_args
from inspect_ai import Task

import spatialstale_evals
from spatialstale_evals.detect import detect
from spatialstale_evals.harness.observe import Observed
from spatialstale_evals.harness.task_body import GridTaskBody, image_args
from spatialstale_evals.world.render import RenderStyle

IMAGE = ("image_labels", "image_palette", "image_cell_px", "image_marker")


def _grid_tasks() -> dict[str, Any]:
    return {
        name: fn
        for name, fn in spatialstale_evals.task_functions().items()
        if set(IMAGE) <= set(inspect.signature(fn).parameters)
    }


def test_every_grid_task_describes_the_image_parameters_in_the_same_words() -> None:
    tasks = _grid_tasks()
    assert {"detect", "navigate", "probe"} <= set(tasks)
    described = {name: {p: docstring_args(fn)[p] for p in IMAGE} for name, fn in tasks.items()}
    first = next(iter(described.values()))
    assert all(d == first for d in described.values()), described
    assert "grayscale" in first["image_palette"] and "48" in first["image_cell_px"]


def test_image_args_replaces_its_line_in_place_and_checks_its_function() -> None:
    def mine(before: int = 0, image_labels: bool = True, image_palette: str = "paper",
             image_cell_px: int = 48, image_marker: str = "triangle", after: int = 0) -> None:  # fmt: skip
        """One line.

        Args:
            before: The first.
            image_*: replaced.
            after: The last.
        """

    args = docstring_args(image_args(mine))
    assert list(args) == ["before", *IMAGE, "after"]
    assert args["before"] == "The first." and args["after"] == "The last."
    assert all(len(line) <= 120 for line in (mine.__doc__ or "").splitlines())

    def no_line(image_labels: bool = True, image_palette: str = "paper", image_cell_px: int = 48,
                image_marker: str = "triangle") -> None:  # fmt: skip
        """Args:
        x: y.
        """

    with pytest.raises(ValueError, match="image_"):
        image_args(no_line)

    def no_params(x: int = 0) -> None:
        """Args:
        image_*: replaced.
        """

    with pytest.raises(ValueError, match="takes no image_cell_px"):
        image_args(no_params)


def test_the_body_runs_its_steps_in_order() -> None:
    body = GridTaskBody(detect, {"unknown": {}, "image_palette": "grayscale", "regime": "L1"})
    assert body.factors == {"image_palette": "grayscale"}
    assert body.name == "spatialstale_evals/detect"
    with pytest.raises(RuntimeError, match="check_options"):
        body.load(None, "L1", "image")
    for step in (lambda: body.dataset(None, None), lambda: body.metadata(None), lambda: body.size):  # type: ignore[arg-type]
        with pytest.raises(RuntimeError, match="load"):
            step()
    with pytest.raises(ValueError, match="unknown task parameter"):
        GridTaskBody(detect, {"unknown": {"image_palete": "grayscale"}})


def test_an_option_a_task_does_not_have_is_not_asked_for() -> None:
    """A task without ``structured_output`` passes none to ``check_options``:
    its options, and so its samples' input, name only the size."""
    body = GridTaskBody(detect, {"unknown": {}})
    assert body.check_options("8x8") == {"size": "8x8"}
    assert body.check_options("16x16", False) == {"structured_output": False, "size": "16x16"}
    with pytest.raises(ValueError, match="structured_output must be true or false"):
        body.check_options("8x8", "yes")


def test_the_body_of_a_task_over_other_data_names_it_and_opens_its_metadata_with_its_family() -> None:
    """``TaskBody`` (stale's, lifelong's): the misspelled parameter refused, the
    name the registry's, the metadata's parts kept in the order given."""
    from spatialstale_evals.harness.task_body import TaskBody
    from spatialstale_evals.stale import stale

    body = TaskBody(stale, {"unknown": {}})
    assert body.name == "spatialstale_evals/stale"
    assert list(body.metadata({"b": 1, "a": 2}, {"c": 3})) == ["task_family", "b", "a", "c"]
    with pytest.raises(ValueError, match="unknown task parameter"):
        TaskBody(stale, {"unknown": {"pth": "x"}})


def test_a_grid_task_names_its_non_default_factors_and_opens_its_metadata_with_its_family() -> None:
    task = detect(modality="image", image_palette="grayscale", distractors=1)
    assert list(task.metadata or {})[:2] == ["task_family", "regime"] and task.metadata["task_family"] == "detect"
    sample = next(iter(task.dataset))
    assert "image_palette=grayscale" in str(sample.input) and "distractors=1" in str(sample.input)
    assert "image_labels" not in str(sample.input) and "memory_style" not in str(sample.input)
    assert sample.metadata and sample.metadata["image_labels"] is True and sample.metadata["size"] == "8x8"


@dataclass(frozen=True)
class _PlainSettings(Observed):
    """A trivial grid task's settings: no factor, no image or structured-output option."""

    modality: str
    render: RenderStyle
    size: str


def plain_grid(regime: str = "L1", modality: str = "text", size: str = "8x8", **unknown: Any) -> Task:
    """A trivial grid task (not registered): the checks, the settings, the ``Task``."""
    body = GridTaskBody(plain_grid, locals())
    body.check_options(size)
    instances = body.load(None, regime, modality)
    settings = _PlainSettings(modality=modality, render=body.style, size=body.size)
    return Task(
        dataset=body.dataset(settings, lambda inst, params: (inst.id, "")),
        solver=[],
        name=body.name,
        metadata=body.metadata(settings, {"instances": len(instances.by_id)}),
    )


def test_a_grid_task_without_image_or_structured_output_options_records_none() -> None:
    task = plain_grid(size="16x16")
    sample = next(iter(task.dataset))
    assert str(sample.input) == f"{sample.id}\n\nOptions: modality=text, size=16x16"  # an option not at its default
    assert sample.metadata is not None
    named = set(sample.metadata) & {*IMAGE, "structured_output", "size", "modality"}
    assert named == {"modality", "size"} and sample.metadata["size"] == "16x16"
    assert list(task.metadata or {}) == ["task_family", "regime", "instances", "modality", "size", "dataset_sha256"]
    assert task.name == "spatialstale_evals/plain_grid"
