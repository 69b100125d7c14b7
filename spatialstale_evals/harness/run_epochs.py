"""A task whose logged ``epochs`` argument is the number of epochs it ran.

A task function that takes ``epochs`` (navigate: episodes per instance, the
paper's 5) passes it to ``Task(epochs=...)``, and Inspect's ``--epochs`` (or
``eval(..., epochs=)``) replaces it when the run starts. The log states epochs
in two places: the run's configuration (``eval.config.epochs``, always what
ran) and the task function's arguments (``eval.task_args``), which Inspect
records with every default filled in, so without help a run made with
``--epochs 1`` logs ``task_args.epochs: 5``. :class:`RunEpochsTask` keeps the
recorded argument equal to the epochs the run uses: Inspect sets the run's
epochs on the task object before it writes the log's header, and this class
copies that value into the argument record it reads.

Inspect keeps that record in the task object's ``__task_all_params__``
attribute (``inspect_ai/_eval/task/constants.py``, ``TASK_ALL_PARAMS_ATTR``;
not a public interface, so the name is written out here rather than imported
from a private module); ``tests/test_navigate_epochs.py`` fails if a later
Inspect stops reading it. ``eval.task_args_passed`` (the arguments as given,
which ``eval_set`` uses to pair a task with its logs) is left alone: it holds
``epochs`` only when the caller passed it.
"""

from __future__ import annotations

from inspect_ai import Task

#: The attribute in which Inspect's ``@task`` records every argument, defaults
#: included, and from which it writes ``eval.task_args``.
RECORDED_ARGS_ATTR = "__task_all_params__"


class RunEpochsTask(Task):
    """A :class:`Task` whose recorded ``epochs`` argument follows its epochs:
    when a run overrides them (``--epochs``), the log's ``task_args`` says the
    run's number, not the task function's default."""

    @property  # type: ignore[override]
    def epochs(self) -> int | None:
        return self._run_epochs

    @epochs.setter
    def epochs(self, value: int | None) -> None:
        self._run_epochs = value
        recorded = getattr(self, RECORDED_ARGS_ATTR, None)
        if value is not None and isinstance(recorded, dict) and "epochs" in recorded:
            recorded["epochs"] = value
