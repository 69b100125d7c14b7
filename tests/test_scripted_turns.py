"""The built-in scripted policies (``spatialstale/memory`` and the rest) in a
task whose turns they were not written for: lifelong's write-back turn offers
only the memory tool and holds no observation. The policy ends that turn with
a plain reply (it keeps no notes), so the lifetime runs to its end."""

from __future__ import annotations

from inspect_ai import eval as inspect_eval

from spatialstale_evals.lifelong import lifelong
from spatialstale_evals.scripted.api import NO_NOTES


def test_a_navigation_policy_lives_a_lifetime_without_notes(tmp_path) -> None:
    task = lifelong(episodes=2, view_radius=None, max_steps=8)
    [log] = inspect_eval(task, model="spatialstale/memory", limit=1, display="none", log_dir=str(tmp_path))
    assert log.status == "success" and log.samples
    sample = log.samples[0]
    assert sample.error is None
    replies = [m.text for m in sample.messages if m.role == "assistant" and not m.tool_calls]
    assert replies.count(NO_NOTES) == 2, "one write-back turn per episode, each ended without a note"
    assert log.results is not None
    metrics = log.results.scores[0].metrics
    assert metrics["note_coverage"].value == 0.0 and metrics["memory_bytes"].value == 0.0
