"""The sample list shows a few headline values per sample, and every
log-level metric is what it was when the score value held every count.

Method: ``tests/fixtures/headline_baseline.json`` holds the log-level
metrics of one scripted run of every task family (``RUNS``: detect,
navigate with ``epochs=2``, probe, stale with its scripted agent and judge,
lifelong), written by this module (``python tests/test_headline_scores.py``
with ``PYTHONPATH`` at a checkout of the code from before the counts moved
to ``Score.metadata["counts"]``, when every count was a key of
``Score.value`` and Inspect's ``mean`` reduced them). The scripted runs are
deterministic, so the same runs on the current code must log the same
metrics, every one, exactly (NaN where the baseline has NaN); lifelong's
entry holds its metrics under the names of task version 6-A (the outcome
rates ``episode_*_rate``, ``note_precision`` for ``note_accuracy``: the same
values as logged before the rename, checked when it was made) and the scores
it added then (``note_balanced``, ``spl`` ...). Independently
of the baseline, the navigate run's pooled step metric and the reduced
counts are recomputed here from the samples' own recorded counts, epoch by
epoch: the reducer must average each sample's counts over its epochs, as
the ``mean`` reducer averaged them when they were the value.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog

BASELINE = Path(__file__).parent / "fixtures" / "headline_baseline.json"
STALE_FILE = Path(__file__).parent / "fixtures" / "stale_mini.json"
#: name -> (task, task arguments, model, model arguments, model roles, samples)
RUNS: dict[str, tuple[str, dict[str, Any], str, dict[str, Any], dict[str, str], int]] = {
    "detect": ("detect", {"regime": "L3"}, "spatialstale/random", {"seed": 3}, {}, 2),
    # success, death and a death on a stale cell, the same in both epochs
    "navigate": ("navigate", {"regime": "L2", "strategy": "no_filter", "epochs": 2}, "spatialstale/memory", {}, {}, 2),
    # epochs that differ (steps): the pooled ratios must not notice the averaging
    "navigate_random": (
        "navigate", {"regime": "L2", "strategy": "no_filter", "epochs": 2}, "spatialstale/random", {"seed": 5}, {}, 3
    ),
    "probe": ("probe", {"regime": "L2"}, "spatialstale/random", {"seed": 3}, {}, 2),
    "stale": ("stale", {"path": str(STALE_FILE)}, "spatialstale/stale-naive", {}, {"grader": "spatialstale/judge"}, 5),
    "lifelong": ("lifelong", {"regime": "L1", "episodes": 2}, "spatialstale/diligent", {}, {}, 2),
}


def run_all(log_dir: Path) -> dict[str, EvalLog]:
    """Every run of ``RUNS``, through the task functions by name (as the CLI finds them)."""
    logs = {}
    for name, (task, args, model, model_args, roles, limit) in RUNS.items():
        (log,) = inspect_eval(
            f"spatialstale_evals/{task}",
            task_args=args,
            model=model,
            model_args=model_args,
            model_roles=roles or None,
            limit=limit,
            display="none",
            log_dir=str(log_dir / name),
        )
        assert log.status == "success", (name, log.error)
        logs[name] = log
    return logs


def log_metrics(log: EvalLog) -> dict[str, float]:
    """Every metric the log's results hold, by name."""
    return {name: m.value for s in (log.results.scores if log.results else []) for name, m in s.metrics.items()}


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


#: Each family's headline values: the keys of its ``Score.value``.
HEADLINES = {
    "detect": {"f1", "precision", "recall", "parse_failures"},
    "navigate": {"success", "death", "timeout", "steps", "death_on_stale"},
    "probe": {"explicit_balanced", "premise_balanced", "implicit_balanced", "parse_failures"},
    "stale": {"dim1", "dim2", "dim3", "judge_failed"},
    "lifelong": {"spl", "episode_success_rate", "episode_death_rate", "hazard_death_rate", "note_balanced", "played"},
}


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, EvalLog]:
    return run_all(tmp_path_factory.mktemp("headline"))


def test_every_log_metric_is_the_baselines(logs: dict[str, EvalLog]) -> None:
    """Every metric of every family's run, by name, equals the one logged when
    the counts were the score value (NaN where that was NaN)."""
    baseline = json.loads(BASELINE.read_text(encoding="utf-8"))
    assert set(baseline) == set(logs) == set(RUNS)
    for name, log in logs.items():
        now = log_metrics(log)
        assert set(now) == set(baseline[name]), name
        wrong = {m: (v, baseline[name][m]) for m, v in now.items() if not same(v, baseline[name][m])}
        assert not wrong, f"{name}: {wrong}"
    assert sum(len(m) for m in baseline.values()) >= 80


def test_each_sample_shows_its_headline_values_and_keeps_its_counts(logs: dict[str, EvalLog]) -> None:
    """The value of every sample (epoch) is its family's headline values, at
    most six; the counts are in the score's metadata, more of them than the value has;
    every task reduces its epochs with the suite's reducer."""
    for name, log in logs.items():
        family = RUNS[name][0]
        assert log.eval.config.epochs_reducer == ["spatialstale_evals/counts_mean"], name
        for sample in log.samples or []:
            (score,) = (sample.scores or {}).values()
            assert set(score.value) == HEADLINES[family], (name, sample.id)
            assert len(score.value) <= 6
            assert len(score.metadata["counts"]) > len(score.value), (name, sample.id)


def test_headline_values_are_the_samples_own_ratios(logs: dict[str, EvalLog]) -> None:
    """Each headline value recomputed from the sample's own counts."""
    for sample in logs["detect"].samples:
        (score,) = sample.scores.values()
        c = score.metadata["counts"]
        precision = c["tp"] / (c["tp"] + c["fp"]) if c["tp"] + c["fp"] else math.nan
        recall = c["tp"] / (c["tp"] + c["fn"]) if c["tp"] + c["fn"] else math.nan
        assert same(score.value["precision"], precision) and same(score.value["recall"], recall)
        assert score.value["f1"] == pytest.approx(2 * c["tp"] / (2 * c["tp"] + c["fp"] + c["fn"]))
        assert score.value["parse_failures"] == c["parse_failures"]
    for name in ("navigate", "navigate_random"):
        for sample in logs[name].samples:
            (score,) = sample.scores.values()
            assert score.value == {k: score.metadata["counts"][k] for k in HEADLINES["navigate"]}
    for sample in logs["lifelong"].samples:
        (score,) = sample.scores.values()
        c = score.metadata["counts"]
        episodes = score.metadata["episodes"]
        assert score.value["played"] == c["played"] == len(episodes)
        assert score.value["episode_success_rate"] == c["success"] / c["played"]
        assert score.value["episode_death_rate"] == c["death"] / c["played"]
        assert score.value["spl"] == pytest.approx(sum(r["spl"] for r in episodes) / len(episodes))
        assert score.value["hazard_death_rate"] == sum(r["hazard_acted_on"] for r in episodes) / len(episodes)
        shares = [c[f"told_{k}"] / c[f"knowable_{k}"] for k in ("safe", "hole") if c[f"knowable_{k}"]]
        assert shares and score.value["note_balanced"] == pytest.approx(sum(shares) / len(shares))
    for sample in logs["stale"].samples:
        (score,) = sample.scores.values()
        c, kind = score.metadata["counts"], score.metadata["type"]
        assert all(same(score.value[d], c[f"{d}_{kind}"]) for d in ("dim1", "dim2", "dim3"))
    for sample in logs["probe"].samples:
        (score,) = sample.scores.values()
        c = score.metadata["counts"]
        stale = sum(c[f"premise_stale_{k}_pass"] for k in ("thaw", "freeze"))
        stale_asked = sum(
            c[f"premise_stale_{k}_{o}"] for k in ("thaw", "freeze") for o in ("pass", "fail", "unparseable")
        )
        control = sum(c[f"premise_valid_{k}_pass"] for k in ("safe", "danger"))
        control_asked = sum(
            c[f"premise_valid_{k}_{o}"] for k in ("safe", "danger") for o in ("pass", "fail", "unparseable")
        )
        assert score.value["premise_balanced"] == pytest.approx((stale / stale_asked + control / control_asked) / 2)


def test_epochs_average_the_counts_and_pooled_ratios_stay_exact(logs: dict[str, EvalLog]) -> None:
    """Under ``epochs=2`` the reduced score of each sample holds the mean of
    its epochs' counts (recomputed here from the epochs' recorded counts), and
    the pooled step metric is the ratio of the counts summed over every
    sample and epoch."""
    for name in ("navigate", "navigate_random"):
        log = logs[name]
        by_id: dict[str, list[dict[str, Any]]] = {}
        for sample in log.samples:
            (score,) = sample.scores.values()
            by_id.setdefault(str(sample.id), []).append(score.metadata["counts"])
        assert all(len(epochs) == 2 for epochs in by_id.values())
        (reductions,) = log.reductions
        assert reductions.reducer == "spatialstale_evals/counts_mean"
        for reduced in reductions.samples:
            epochs = by_id[str(reduced.sample_id)]
            assert reduced.metadata["counts"] == {k: sum(e[k] for e in epochs) / 2 for k in epochs[0]}
        every = [c for epochs in by_id.values() for c in epochs]
        deaths = sum(c["death"] for c in every)
        metrics = log_metrics(log)
        assert deaths > 0 and metrics["steps_death"] == pytest.approx(sum(c["steps_if_death"] for c in every) / deaths)
        assert metrics["death_rate"] == pytest.approx(deaths / len(every))
    steps = {(s.id, s.epoch): s.scores["navigation_scorer"].value["steps"] for s in logs["navigate_random"].samples}
    assert any(steps[(sid, 1)] != steps[(sid, 2)] for sid, _ in steps), "the random agent's epochs differ"


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        metrics = {name: log_metrics(log) for name, log in run_all(Path(tmp)).items()}
    BASELINE.write_text(json.dumps(metrics, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {BASELINE} ({sum(len(m) for m in metrics.values())} metrics)", file=sys.stderr)
