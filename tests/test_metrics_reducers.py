"""Every @metric of detect and navigate (``detection/metrics.py``,
``navigation/metrics.py``) run through Inspect's real epoch reducer.

A metric receives the score the epoch reducer leaves, not the one the scorer
returned: under the default ``mean`` an instance whose episodes went success,
success, death reaches ``success_rate`` as ``success == 0.667``, and a window
audited three times reaches ``precision`` with ``tp == 1.667``. The scores here
come from the real ``detection_scorer`` and ``navigation_scorer`` (fed
hand-written audit windows and episode records), and
``pytest_inspect_evals.metrics`` replays them as epochs through a real eval:

- ``assert_agreeing_epochs_change_nothing``: equal epochs, under ``mean`` and
  ``mode``, give what one epoch of the scorer's own values gives;
- ``run_metrics``: disagreeing epochs under ``counts_mean``, the reducer every
  task pins (``harness/score_counts.py``: the headline values and the counts in
  ``Score.metadata["counts"]`` averaged alike), give the values worked out by
  hand below. The metrics pool counts over
  samples, so with equal epochs per sample the mean-reduced result is the
  pooled ratio over every (sample, epoch); the data is chosen so that a macro
  average (mean of per-sample ratios) or truncating a reduced count would give
  a different number.
"""

from __future__ import annotations

import ast
import asyncio
import functools
import math
from pathlib import Path
from typing import Any

import pytest
import pytest_inspect_evals.metrics as epoch_replay
from inspect_ai import Task
from inspect_ai.scorer import Score, Target
from inspect_ai.solver import TaskState
from pytest_inspect_evals.metrics import AGREEING_REDUCERS, assert_agreeing_epochs_change_nothing, run_metrics

from spatialstale_evals.detection import metrics as detection_metrics
from spatialstale_evals.detection.metrics import EDIT_METRICS
from spatialstale_evals.detection.windows import DETECTION_METRICS, detection_scorer
from spatialstale_evals.harness.score_counts import counts_mean
from spatialstale_evals.navigation import metrics as navigation_metrics
from spatialstale_evals.navigation.loop import NAVIGATION_METRICS, navigation_scorer

METRICS_FILES = (Path(detection_metrics.__file__), Path(navigation_metrics.__file__))


@pytest.fixture(scope="module", autouse=True)
def _replay_without_a_model_turn():
    """The helper's task has no solver, so Inspect adds ``generate()``, and mockllm
    fills in the missing token usage with tiktoken's o200k_base encoding, which
    tiktoken downloads on first use: offline every replay eval fails with a
    ConnectionError. The replayed scores never read the model's output, so the
    task gets an empty solver chain instead. If the helper stops building its
    task with a module-level ``Task``, ``setattr`` raises and says so."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(epoch_replay, "Task", functools.partial(Task, solver=[]))
        yield


def _score(scorer: Any, store: dict[str, Any]) -> Score:
    state = TaskState(model="mockllm/model", sample_id="s", epoch=1, input="", messages=[], store=store)
    return asyncio.run(scorer(state, Target("")))


# -- detection -------------------------------------------------------------------


def window(
    thaw: tuple[int, int] = (0, 0),
    freeze: tuple[int, int] = (0, 0),
    safe: tuple[int, int] = (0, 0),
    danger: tuple[int, int] = (0, 0),
    parse_failures: int = 0,
    notes: tuple[int, int] = (0, 0),
    edits: tuple[int, int, int] | None = None,
) -> dict[str, int]:
    """The counts of one audit window as ``audit_windows`` stores them. Each pair is
    (entries of that kind, how many of them the auditor flagged): thawed and frozen
    entries are stale, SAFE and DANGER entries and distractor notes still true.
    ``edits`` (``output=edit``): (corrections proposed, right ones, flags without one)."""
    (stale_thaw, thaw_flagged), (stale_freeze, freeze_flagged) = thaw, freeze
    (valid_safe, safe_flagged), (valid_danger, danger_flagged) = safe, danger
    (n_notes, notes_flagged) = notes
    return {
        "tp": thaw_flagged + freeze_flagged,
        "fn": stale_thaw - thaw_flagged + stale_freeze - freeze_flagged,
        "fp": safe_flagged + danger_flagged + notes_flagged,
        "tn": valid_safe - safe_flagged + valid_danger - danger_flagged + n_notes - notes_flagged,
        "stale_thaw": stale_thaw,
        "thaw_flagged": thaw_flagged,
        "stale_freeze": stale_freeze,
        "freeze_flagged": freeze_flagged,
        "valid_safe": valid_safe,
        "valid_safe_flagged": safe_flagged,
        "distractors": n_notes,
        "distractors_flagged": notes_flagged,
        "entries": stale_thaw + stale_freeze + valid_safe + valid_danger + n_notes,
        "parse_failures": parse_failures,
        "missing": parse_failures,
        "calls": 1,
        **(dict(zip(("corrections", "corrections_right", "corrections_missing"), edits)) if edits else {}),
    }


def detection_score(*windows: dict[str, int]) -> Score:
    return _score(detection_scorer(), {"DetectionState:windows": list(windows)})


# Instance A: one window of 10 entries (2 thawed, 1 frozen, 4 SAFE, 3 DANGER), and in
# its second epoch 2 distractor notes, one of them flagged.
# Instance B: two windows (an L3 instance) of 4 entries each; 1 thawed, 3 frozen, 2 SAFE, 2 DANGER in all.
DETECTION_EPOCHS = [
    [
        detection_score(window(thaw=(2, 2), freeze=(1, 1), safe=(4, 0), danger=(3, 0))),  # tp 3 fp 0 fn 0: F1 1
        detection_score(window(thaw=(2, 1), freeze=(1, 0), safe=(4, 1), danger=(3, 0), parse_failures=1, notes=(2, 1))),
        # ^ tp 1 fp 2 (one a note) fn 2: F1 2/6
        detection_score(window(thaw=(2, 0), freeze=(1, 1), safe=(4, 2), danger=(3, 1))),  # tp 1 fp 3 fn 2: F1 2/7
    ],
    [
        detection_score(  # tp 1 fp 1 fn 3: F1 1/3
            window(thaw=(1, 1), freeze=(1, 0), safe=(1, 1), danger=(1, 0)),
            window(freeze=(2, 0), safe=(1, 0), danger=(1, 0)),
        ),
        detection_score(  # tp 0 fp 0 fn 4: F1 0
            window(thaw=(1, 0), freeze=(1, 0), safe=(1, 0), danger=(1, 0), parse_failures=4),
            window(freeze=(2, 0), safe=(1, 0), danger=(1, 0)),
        ),
        detection_score(  # tp 1 fp 1 fn 3: F1 1/3
            window(thaw=(1, 0), freeze=(1, 0), safe=(1, 0), danger=(1, 1)),
            window(freeze=(2, 1), safe=(1, 0), danger=(1, 0)),
        ),
    ],
]

# Sums over the three epochs: A tp 5 fp 5 fn 4, B tp 2 fp 2 fn 10; pooled tp 7 fp 7 fn 14.
DETECTION_EXPECTED = {
    "precision": 7 / 14,  # macro would be (5/10 + 2/4) / 2
    "recall": 7 / 21,  # macro (5/9 + 2/12) / 2
    "f1": 2 * 7 / (2 * 7 + 7 + 14),
    # per instance, the reducer averages the epochs' own F1; then the mean over instances
    "f1_mean": ((1 + 2 / 6 + 2 / 7) / 3 + (1 / 3 + 0 + 1 / 3) / 3) / 2,
    "thaw_recall": (3 + 1) / (6 + 3),  # thawed flagged / thawed: A 3 of 6, B 1 of 3
    "freeze_recall": (2 + 1) / (3 + 9),  # A 2 of 3, B 1 of 9
    "flag_rate_valid_safe": (3 + 1) / (12 + 6),  # A 3 of 12, B 1 of 6
    "distractor_flag_rate": 1 / 2,  # the notes flagged / the notes: A 1 of 2
    "parse_failure_rate": (1 + 4) / (32 + 24),  # A 1 of 32 entries, B 4 of 24
}


# -- edit proposals (output=edit) ---------------------------------------------------------

# The same instances with proposed corrections: (proposed, right, flagged without one).
EDIT_EPOCHS = [
    [
        detection_score(window(thaw=(2, 2), freeze=(1, 1), safe=(4, 0), danger=(3, 0), edits=(3, 3, 0))),
        detection_score(window(thaw=(2, 1), freeze=(1, 0), safe=(4, 1), danger=(3, 0), edits=(2, 1, 0))),
        # ^ the false positive's correction is wrong
        detection_score(window(thaw=(2, 0), freeze=(1, 1), safe=(4, 2), danger=(3, 1), edits=(3, 0, 1))),
        # ^ the true positive restates its claim (wrong); one flag proposes nothing
    ],
    [
        detection_score(
            window(thaw=(1, 1), freeze=(1, 0), safe=(1, 1), danger=(1, 0), edits=(2, 1, 0)),
            window(freeze=(2, 0), safe=(1, 0), danger=(1, 0), edits=(0, 0, 0)),
        ),
        detection_score(
            window(thaw=(1, 0), freeze=(1, 0), safe=(1, 0), danger=(1, 0), edits=(0, 0, 0)),
            window(freeze=(2, 0), safe=(1, 0), danger=(1, 0), edits=(0, 0, 0)),
        ),
        detection_score(
            window(thaw=(1, 0), freeze=(1, 0), safe=(1, 0), danger=(1, 1), edits=(1, 0, 0)),
            window(freeze=(2, 1), safe=(1, 0), danger=(1, 0), edits=(1, 1, 0)),
        ),
    ],
]
# A: 9 stale entries over the epochs, 4 right corrections of 8; B: 12 stale, 2 right of 4.
EDIT_EXPECTED = {
    "edit_accuracy": (4 + 2) / (9 + 12),  # macro would be (4/9 + 2/12) / 2
    "edit_precision": (4 + 2) / (8 + 4),
}


# -- navigation ------------------------------------------------------------------


def episode(outcome: str, steps: int, fallbacks: int = 0, death_on_stale: bool = False) -> Score:
    """Score the record ``navigation_loop`` stores for one episode."""
    record = {
        "outcome": outcome,
        "steps": steps,
        "reward": {"success": 1.0, "death": -1.0}.get(outcome, 0.0),
        "trajectory": [],
        "actions": [],
        "fallbacks": [{"step": i, "problem": "no move call", "direction": "right"} for i in range(fallbacks)],
        "extra_calls": fallbacks,
        "death_cell": [2, 3] if outcome == "death" else None,
        "death_entry": "e07" if outcome == "death" else None,
        "death_on_stale": death_on_stale,
        "death_on_stale_shown": death_on_stale,
        "audits": [],
        "events_realized": [],
        "view_size": 5,
        "tokens": {"navigator": 40 * steps, "auditor": 100},
        "audit_calls": 2,
    }
    return _score(navigation_scorer(), {"NavigationState:episode": record})


# Three instances, three episodes each (timeouts at max_steps 40).
NAVIGATION_EPOCHS = [
    [episode("success", 10, 1), episode("success", 12), episode("death", 6, 2, death_on_stale=True)],
    [episode("success", 14), episode("success", 22, 2), episode("timeout", 40, 5)],
    [episode("death", 3, death_on_stale=True), episode("death", 7, 1), episode("timeout", 40)],
]


# After the mean reducer each instance carries its outcome fractions:
# success 2/3, 2/3, 0; death 1/3, 0, 2/3; timeout 0, 1/3, 1/3.
NAVIGATION_EXPECTED = {
    "success_rate": 4 / 9,
    # the stderr is over instances (n = 3), not over the 9 episodes
    "success_stderr": 2 / 9,  # deviations 2/9, 2/9, -4/9: sqrt(24/81 / 2 / 3)
    "death_rate": 1 / 3,
    "death_stderr": math.sqrt(1 / 27),  # deviations 0, -1/3, 1/3: sqrt(2/9 / 2 / 3)
    "timeout_rate": 2 / 9,
    "timeout_stderr": 1 / 9,  # deviations -2/9, 1/9, 1/9: sqrt(6/81 / 2 / 3)
    "steps_success": (10 + 12 + 14 + 22) / 4,  # steps over successes, pooled
    "steps_death": (6 + 3 + 7) / 3,  # pooled 16/3; a macro average would give (6 + 5) / 2
    "steps_timeout": (40 + 40) / 2,
    "death_on_stale_rate": (1 / 3 + 0 + 1 / 3) / 3,  # episodes, not deaths, in the denominator
    "fallback_rate": (3 + 7 + 1) / (28 + 76 + 50),  # fallbacks / steps, pooled
}


# -- the checks ------------------------------------------------------------------


def test_every_metric_in_metrics_py_is_checked_here():
    trees = [ast.parse(path.read_text(encoding="utf-8")) for path in METRICS_FILES]
    declared = {
        node.name
        for tree in trees
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef)
        and any(
            (d.id if isinstance(d, ast.Name) else getattr(getattr(d, "func", None), "id", None)) == "metric"
            for d in node.decorator_list
        )
    }
    assert declared == set(DETECTION_EXPECTED) | set(EDIT_EXPECTED) | set(NAVIGATION_EXPECTED)


def test_hand_written_scores_hold_the_scorers_keys():
    """The scores come from the real scorers, so every key a metric reads is there."""
    assert DETECTION_EPOCHS[1][0].metadata["counts"]["windows"] == 2
    assert DETECTION_EPOCHS[0][1].value["f1"] == pytest.approx(2 / 6)
    assert NAVIGATION_EPOCHS[0][2].metadata["counts"]["steps_if_death"] == 6
    assert NAVIGATION_EPOCHS[0][2].metadata["counts"]["steps_if_success"] == 0


@pytest.mark.parametrize(
    ("group", "epochs"),
    [(DETECTION_METRICS, DETECTION_EPOCHS), (EDIT_METRICS, EDIT_EPOCHS), (NAVIGATION_METRICS, NAVIGATION_EPOCHS)],
    ids=["detection", "edit", "navigation"],
)
def test_agreeing_epochs_change_nothing(group, epochs):
    scores = [score for sample in epochs for score in sample]
    assert_agreeing_epochs_change_nothing(group, scores, reducers=[*AGREEING_REDUCERS, counts_mean()])


@pytest.fixture(scope="module")
def detection_mean(_replay_without_a_model_turn) -> dict[str, Any]:
    return run_metrics(DETECTION_METRICS, DETECTION_EPOCHS, reducer=counts_mean())


@pytest.fixture(scope="module")
def edit_mean(_replay_without_a_model_turn) -> dict[str, Any]:
    return run_metrics(EDIT_METRICS, EDIT_EPOCHS, reducer=counts_mean())


@pytest.mark.parametrize("name", list(EDIT_EXPECTED))
def test_edit_metric_under_mean_of_disagreeing_epochs(edit_mean, name):
    assert edit_mean[name] == pytest.approx(EDIT_EXPECTED[name])


def test_edit_metrics_pool_alike_without_reduction(edit_mean):
    assert run_metrics(EDIT_METRICS, EDIT_EPOCHS, reducer=None) == pytest.approx(edit_mean)


@pytest.fixture(scope="module")
def navigation_mean(_replay_without_a_model_turn) -> dict[str, Any]:
    return run_metrics(NAVIGATION_METRICS, NAVIGATION_EPOCHS, reducer=counts_mean())


def test_disagreeing_epochs_report_every_metric(detection_mean, navigation_mean):
    assert set(detection_mean) == set(DETECTION_EXPECTED)
    assert set(navigation_mean) == set(NAVIGATION_EXPECTED)


@pytest.mark.parametrize("name", list(DETECTION_EXPECTED))
def test_detection_metric_under_mean_of_disagreeing_epochs(detection_mean, name):
    assert detection_mean[name] == pytest.approx(DETECTION_EXPECTED[name])


@pytest.mark.parametrize("name", list(NAVIGATION_EXPECTED))
def test_navigation_metric_under_mean_of_disagreeing_epochs(navigation_mean, name):
    assert navigation_mean[name] == pytest.approx(NAVIGATION_EXPECTED[name])


def test_mean_reducer_leaves_pooled_metrics_as_if_every_epoch_were_a_sample(detection_mean, navigation_mean):
    """metrics.py's promise: with equal epochs per sample, the mean reducer scales
    every sample's counts by the same 1/epochs and a ratio of sums does not notice.
    With no reduction the metrics see all nine (sample, epoch) scores. The stderrs
    are left out: they are over samples, so they do depend on the reduction."""
    unreduced = {
        **run_metrics(DETECTION_METRICS, DETECTION_EPOCHS, reducer=None),
        **run_metrics(NAVIGATION_METRICS, NAVIGATION_EPOCHS, reducer=None),
    }
    reduced = {**detection_mean, **navigation_mean}
    pooled = set(reduced) - {"success_stderr", "death_stderr", "timeout_stderr"}
    assert {name: unreduced[name] for name in pooled} == pytest.approx({name: reduced[name] for name in pooled})


def test_scores_of_logs_from_before_the_counts_moved_give_the_same_metrics(detection_mean, navigation_mean):
    """A log written when the value held every count (no ``counts`` in the
    metadata; Inspect's ``mean`` reduced them): the metrics read the value."""

    def as_before(epochs: list[list[Score]]) -> list[list[Score]]:
        return [[Score(value=dict(s.metadata["counts"])) for s in sample] for sample in epochs]

    old = {
        **run_metrics(DETECTION_METRICS, as_before(DETECTION_EPOCHS)),
        **run_metrics(NAVIGATION_METRICS, as_before(NAVIGATION_EPOCHS)),
    }
    assert old == pytest.approx({**detection_mean, **navigation_mean}, nan_ok=True)


def test_inspects_own_mean_would_leave_the_first_epochs_counts():
    """Why every task pins ``counts_mean``: Inspect's ``mean`` (what
    ``--epochs-reducer mean`` chooses) averages the value only and keeps the
    first epoch's metadata, so a pooled ratio reads one epoch per sample
    (recounted here from the first epochs' windows), while the metrics over the
    headline values (``f1_mean``) stay as they were."""
    first = [e[0].metadata["counts"] for e in DETECTION_EPOCHS]
    values = run_metrics(DETECTION_METRICS, DETECTION_EPOCHS, reducer="mean")
    tp, fp = sum(c["tp"] for c in first), sum(c["fp"] for c in first)
    assert values["precision"] == pytest.approx(tp / (tp + fp)) != pytest.approx(DETECTION_EXPECTED["precision"])
    assert values["f1_mean"] == pytest.approx(DETECTION_EXPECTED["f1_mean"])
