"""``inspect eval --epochs 0`` ran the task's default epoch without a word
(Inspect's CLI reads 0 as "not given"; issue 37): the suite's tasks refuse it
as they are built, before any model call, naming the option."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from _warm import WarmPython

import spatialstale_evals
from spatialstale_evals.detect import detect
from spatialstale_evals.harness.cli_epochs import epochs_given_as_zero
from spatialstale_evals.stale import stale

INSPECT = str(Path(sys.executable).parent / "inspect")
ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "argv,found",
    [
        ([INSPECT, "eval", "detect.py", "--epochs", "0"], "--epochs 0"),
        ([INSPECT, "eval", "detect.py", "--epochs=00"], "--epochs=00"),
        (["/x/inspect_ai/__main__.py", "eval", "detect.py", "--epochs", "0"], "--epochs 0"),
        ([INSPECT, "eval", "detect.py", "--epochs", "1"], None),
        ([INSPECT, "eval", "detect.py", "-T", "epochs=0"], None),  # the task's own parameter: its own check
        (["spatialstale", "matrix", "--epochs", "0"], None),  # not Inspect's CLI (the matrix checks its own)
        (["pytest", "--epochs", "0"], None),
    ],
)
def test_zero_epochs_given_to_inspects_cli_are_found(argv: list[str], found: str | None, monkeypatch) -> None:
    monkeypatch.delenv("INSPECT_EVAL_EPOCHS", raising=False)
    assert epochs_given_as_zero(argv) == found


@pytest.mark.parametrize("name", list(spatialstale_evals.task_functions()))
def test_every_task_refuses_zero_epochs(name: str, monkeypatch) -> None:
    task = spatialstale_evals.task_functions()[name]
    monkeypatch.setattr(sys, "argv", [INSPECT, "eval", "x.py", "--epochs", "0"])
    with pytest.raises(ValueError, match=r"^--epochs 0: epochs must be a positive integer"):
        task() if task is not stale else task(path=str(ROOT / "tests" / "fixtures" / "stale_mini.json"))
    monkeypatch.setattr(sys, "argv", [INSPECT, "eval", "x.py"])
    monkeypatch.setenv("INSPECT_EVAL_EPOCHS", "0")
    with pytest.raises(ValueError, match=r"^INSPECT_EVAL_EPOCHS=0: epochs must be a positive integer"):
        detect()
    monkeypatch.delenv("INSPECT_EVAL_EPOCHS")
    monkeypatch.setattr(sys, "argv", [INSPECT, "eval", "x.py", "--epochs", "2"])
    assert detect().name.endswith("detect")


def test_inspect_eval_epochs_0_stops_before_any_log(tmp_path: Path, warm_python: WarmPython) -> None:
    """The issue's reproduction, through Inspect's own command line (its ``inspect``
    script, run in a fork of the session's warm interpreter)."""
    run = warm_python.run(
        [INSPECT, "eval", "spatialstale_evals/detect.py", "--epochs", "0", "--limit", "1",
         "--model", "spatialstale/memory", "--log-dir", str(tmp_path / "logs"), "--display", "plain"],
        timeout=600, cwd=ROOT,
        env=os.environ | {"PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert run.returncode != 0
    assert "--epochs 0: epochs must be a positive integer" in run.stdout + run.stderr
    assert not (tmp_path / "logs").exists()
