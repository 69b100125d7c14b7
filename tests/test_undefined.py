"""An undefined ratio (an empty denominator) is NaN in every task's log, never
0.0, and "-" in the report. On L0 nothing is stale, so every ratio over stale
entries or targets is undefined; which ones are is recomputed here from the
dataset and the samples, not from the metrics code."""

from __future__ import annotations

import math
from pathlib import Path

from inspect_ai import eval as inspect_eval

from spatialstale_evals.analysis.report import build_report
from spatialstale_evals.detect import detect
from spatialstale_evals.navigate import navigate
from spatialstale_evals.probe import probe
from spatialstale_evals.world import dataset


def metrics_of(log) -> dict[str, float]:  # noqa: ANN001 - an EvalLog
    return {n: m.value for s in log.results.scores for n, m in s.metrics.items()}


def test_l0_ratios_over_stale_things_are_nan_in_every_task(tmp_path: Path) -> None:
    instances = dataset.load(None, "L0")[:2]
    assert all(not w.thaw and not w.freeze for inst in instances for w in inst.windows), "L0 has nothing stale"
    logs = inspect_eval(
        [detect(regime="L0"), navigate(regime="L0", strategy="no_filter", epochs=1), probe(regime="L0")],
        model="spatialstale/observer",
        limit=2,
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    det, nav, pro = (metrics_of(log) for log in logs)
    # detect: no stale entry, and the observer flags nothing: recall and precision have nothing to count
    assert all(math.isnan(det[m]) for m in ("precision", "recall", "thaw_recall", "freeze_recall")), det
    assert det["parse_failure_rate"] == 0.0  # defined (there were entries), and measured zero
    # navigate: the observer never dies nor times out on a solvable lake
    outcomes = [s.scores["navigation_scorer"].metadata["outcome"] for s in logs[1].samples]
    assert outcomes == ["success", "success"]
    assert math.isnan(nav["steps_death"]) and math.isnan(nav["steps_timeout"]) and nav["death_rate"] == 0.0
    # probe: no stale target on L0, so accuracy on stale targets is undefined; controls are measured
    values = [s.scores["probe_scorer"].metadata["counts"] for s in logs[2].samples]
    assert sum(v for value in values for k, v in value.items() if "_stale_" in k) == 0
    assert math.isnan(pro["state_resolution"]) and math.isnan(pro["premise_resistance"])
    assert pro["explicit_control"] == 1.0
    report = build_report(tmp_path / "logs", tmp_path / "report")
    probe_rows = report.rendered["probe"]
    assert "| - |" in probe_rows or "| -" in probe_rows, "an undefined accuracy is '-' in the report"
    assert "| nan" not in report.markdown.read_text(encoding="utf-8").lower(), "no NaN printed as such"
