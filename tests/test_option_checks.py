"""Options with no effect in the configuration chosen, and sizes past their
bounds, are errors when the task is built (before any model call), naming the
option and the reason or the bound; the ``stale`` task without its ``grader``
role stops every sample before any model call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from spatialstale_evals.detect import detect
from spatialstale_evals.harness.params import NotApplicable
from spatialstale_evals.navigate import navigate
from spatialstale_evals.probe import probe
from spatialstale_evals.stale import stale
from spatialstale_evals.world import generate_instance
from spatialstale_evals.world.grid import GridError

MINI = str(Path(__file__).parent / "fixtures" / "stale_mini.json")


@pytest.mark.parametrize("strategy,why", [("no_memory", "asks no auditor"), ("self_verify", "every entry in one call")])
def test_batch_size_without_batched_audits_is_an_error(strategy: str, why: str) -> None:
    with pytest.raises(NotApplicable) as exc:
        navigate(strategy=strategy, batch_size=5)
    assert "batch_size=5" in str(exc.value) and why in str(exc.value)


def test_batch_size_with_batched_audits_is_accepted() -> None:
    assert navigate(strategy="omcd", batch_size=5, epochs=1).metadata["batch_size"] == 5


def test_hub_revision_with_a_local_path_is_an_error() -> None:
    with pytest.raises(NotApplicable, match="hub_revision='v2'.*source=local"):
        stale(path=MINI, hub_revision="v2")


def test_stale_without_a_grader_stops_every_sample_before_any_call(tmp_path: Path) -> None:
    calls: list[int] = []

    def reply(messages, tools, tool_choice, config) -> ModelOutput:
        calls.append(1)
        out = ModelOutput.from_content(model="mockllm/model", content="ok")
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    model = get_model("mockllm/model", custom_outputs=reply, memoize=False)
    [log] = inspect_eval(stale, task_args={"path": MINI}, model=model, display="none", log_dir=str(tmp_path))
    assert calls == []
    assert log.status == "error" or all(s.error for s in log.samples or [])
    errors = [s.error.message for s in log.samples or [] if s.error] or [log.error.message if log.error else ""]
    assert all("--model-role grader=" in e for e in errors), errors


@pytest.mark.parametrize(
    "build,args,message",
    [
        (detect, {"modality": "image", "image_cell_px": 20_000}, "image_cell_px is at most 512"),
        (navigate, {"modality": "image", "image_cell_px": 600}, "image_cell_px is at most 512"),
        (probe, {"modality": "image", "image_cell_px": 10**9}, "at most 4096 px a side"),
        (navigate, {"max_steps": 10_001}, "max_steps must be at most 10,000"),
        (navigate, {"history": 10**6}, "history must be at most 10,000"),
        (probe, {"targets_per_kind": 10**6}, "targets_per_kind must be at most 16,384"),
    ],
)
def test_sizes_past_their_bounds_fail_when_the_task_is_built(build: Any, args: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build(**args)


def test_the_largest_cell_size_still_builds() -> None:
    assert detect(modality="image", image_cell_px=512).metadata["image_cell_px"] == 512


@pytest.mark.parametrize("height,width", [(129, 8), (8, 10_000)])
def test_grids_past_the_largest_side_are_refused(height: int, width: int) -> None:
    with pytest.raises(GridError, match="at most 128"):
        generate_instance(1, "L1", 0, height=height, width=width)
