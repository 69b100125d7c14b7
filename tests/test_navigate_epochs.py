"""The log of a navigate run states the epochs the run made, wherever it states
them: the run's configuration (``eval.config.epochs``), the task's recorded
arguments (``eval.task_args``), the samples' epoch numbers, the result's
sample count, and what the report's reader takes from the log.

The task function's default is the paper's 5 episodes per instance; a run
with Inspect's ``--epochs 1`` (``eval(..., epochs=1)``) makes one, and its log
must not say 5 anywhere. The expected values come from the run's own request
(``epochs=1``, ``limit=1``), not from the code under test.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, read_eval_log

from spatialstale_evals.analysis.logs import eval_table
from spatialstale_evals.navigate import navigate

#: A short episode keeps the run fast; the outcome does not matter here.
ARGS = {"strategy": "no_filter", "regime": "L2", "max_steps": 3}


def epochs_stated(log: EvalLog) -> dict[str, Any]:
    """Every place the log states how many epochs the run made."""
    samples = log.samples or []
    return {
        "config.epochs": log.eval.config.epochs,
        "task_args.epochs": (log.eval.task_args or {}).get("epochs"),
        "highest sample epoch": max(s.epoch for s in samples),
        "samples per instance": len(samples) // len({s.id for s in samples}),
        "results.total_samples / instances": (log.results.total_samples if log.results else 0)
        // len(log.eval.dataset.sample_ids or [None]),
        "report reader": int(eval_table([log])["epochs"].iloc[0]),
    }


def run(tmp_path: Path, task_args: dict[str, Any] = ARGS, **eval_args: Any) -> EvalLog:
    (log,) = inspect_eval(
        "spatialstale_evals/navigate",
        task_args=task_args,
        model="spatialstale/observer",
        limit=1,
        log_dir=str(tmp_path),
        display="none",
        **eval_args,
    )
    assert log.status == "success", log.error
    return read_eval_log(log.location)  # as written to disk, not the object in memory


def test_the_task_default_is_the_papers_five() -> None:
    """The premise: without ``--epochs`` the task asks for 5, so a log saying 5 after ``--epochs 1`` is wrong."""
    assert inspect.signature(navigate).parameters["epochs"].default == 5


def test_epochs_1_is_stated_everywhere_in_the_log(tmp_path: Path) -> None:
    log = run(tmp_path, epochs=1)
    stated = epochs_stated(log)
    assert stated == dict.fromkeys(stated, 1), stated
    assert "epochs" not in (log.eval.task_args_passed or {}), "the arguments as passed: --epochs passes none"


def test_an_epochs_task_argument_is_what_runs(tmp_path: Path) -> None:
    """``-T epochs=2`` with no ``--epochs``: the task's own number runs and is stated."""
    log = run(tmp_path, task_args=ARGS | {"epochs": 2})
    stated = epochs_stated(log)
    assert stated == dict.fromkeys(stated, 2), stated


def test_run_epochs_override_a_task_argument(tmp_path: Path) -> None:
    """``-T epochs=2 --epochs 1``: Inspect runs 1; the recorded arguments say 1,
    the arguments as passed keep what the caller wrote."""
    log = run(tmp_path, task_args=ARGS | {"epochs": 2}, epochs=1)
    stated = epochs_stated(log)
    assert stated == dict.fromkeys(stated, 1), stated
    assert log.eval.task_args_passed["epochs"] == 2


@pytest.mark.parametrize("epochs", [1, 3])
def test_a_task_object_follows_inspects_override(epochs: int) -> None:
    """The recorded arguments follow the task's epochs when Inspect sets them (as it does before writing the header)."""
    task = navigate(**ARGS)
    assert task.__task_all_params__["epochs"] == 5 and task.epochs == 5
    task.epochs = epochs
    assert task.__task_all_params__["epochs"] == epochs
