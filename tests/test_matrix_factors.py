"""The run matrix's factors and the report's benefit/safety view: crossing,
what is left out as not applicable, what runs alike planned once, costs that
bound a real run, and the two suites' numbers against the samples."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

from spatialstale_evals.analysis.report import build_report
from spatialstale_evals.navigate import navigate
from spatialstale_evals.runs.matrix import MatrixSpec, plan


def spec(**kwargs) -> MatrixSpec:
    base = dict(models=["m"], families=["navigate"], regimes=["L2"], seeds=3, epochs=1)
    return MatrixSpec(**{**base, **kwargs})


def test_factors_cross_skip_what_does_not_apply_and_dedupe() -> None:
    planned = plan(
        spec(
            axes={"strategies": ["no_filter", "omcd"]},
            factors={"filter_mode": ["delete", "history"], "view_radius": [None, 1, 7]},
        ),
        estimate=False,
    )
    names = [t.name for t in planned]
    # no_filter: 2 radii (7 covers 8x8: it is None), delete only; omcd: 2 radii x 2 modes
    assert len(names) == 2 + 4, names
    assert all("no_filter" not in n or "history" not in n for n in names)
    assert not any("view_radius=7" in n for n in names)
    assert len(planned.skipped) == 1 and "judges none" in planned.skipped[0]
    with pytest.raises(ValueError, match="no parameter"):
        plan(spec(factors={"view_radus": [1]}))
    with pytest.raises(ValueError, match="own axes"):
        plan(spec(factors={"strategy": ["omcd"]}))


def test_the_estimate_follows_every_factor_and_bounds_a_run(tmp_path: Path) -> None:
    def cost(**factors):
        (task,) = plan(spec(axes={"strategies": ["omcd"]}, factors={k: [v] for k, v in factors.items()}))
        return task.cost_min, task.cost

    base_low, base_high = cost()
    assert cost(history=3)[0].input_tokens > base_low.input_tokens
    assert cost(filter_mode="history")[0].input_tokens > base_low.input_tokens  # marked entries stay in the view
    low, high = cost(view_radius=1)
    assert high.calls > base_high.calls  # every entry audited alone, once per window
    (log,) = inspect_eval(
        navigate(regime="L2", strategy="omcd", view_radius=1, epochs=1),
        model="spatialstale/observer",
        log_dir=str(tmp_path),
        limit=3,
        display="none",
    )
    calls = sum(1 for s in log.samples for e in s.events if e.event == "model")
    tokens = sum(u.input_tokens for s in log.samples for u in s.model_usage.values())
    assert calls <= high.calls and tokens <= high.input_tokens


def test_benefit_and_safety_tables_equal_the_samples(tmp_path: Path) -> None:
    runs = [
        dict(regime="L0", strategy="no_filter"),
        dict(regime="L0", strategy="no_memory"),
        dict(regime="L2", strategy="no_filter"),
        dict(regime="L2", strategy="omcd"),
        dict(regime="L2", strategy="omcd", filter_mode="history"),
    ]
    logs = inspect_eval(
        [navigate(view_radius=1, epochs=1, **r) for r in runs],
        model="spatialstale/mixed",
        log_dir=str(tmp_path / "logs"),
        limit=8,
        display="none",
    )
    pct = {}
    for r, log in zip(runs, logs):
        values = [s.scores["navigation_scorer"].metadata["counts"] for s in log.samples]
        arm = r["strategy"] + ("[history]" if "filter_mode" in r else "")
        pct[(r["regime"], arm)] = {
            k: 100 * sum(v[k] for v in values) / len(values) for k in ("success", "death", "timeout")
        }
    report = build_report(tmp_path / "logs", tmp_path / "out")
    (benefit,) = report.tables["benefit"].to_dict("records")
    assert benefit["config"] == "view_radius=1" and benefit["regime"] == "L0"
    assert benefit["success_with"] == pct[("L0", "no_filter")]["success"]
    assert benefit["success_without"] == pct[("L0", "no_memory")]["success"]
    assert benefit["benefit_pp"] == pct[("L0", "no_filter")]["success"] - pct[("L0", "no_memory")]["success"]
    safety = {row["strategy"]: row for row in report.tables["safety"].to_dict("records")}
    assert list(safety) == ["no_filter", "omcd", "omcd[history]"]
    for arm, row in safety.items():
        assert {k: row[k] for k in ("success", "death", "timeout")} == pct[("L2", arm)]
    tests = report.tables["wilcoxon"]
    holm = tests[(tests["regime"] == "L2") & (tests["metric"] == "success") & (tests["b"] == "omcd[history]")]
    assert safety["omcd[history]"]["p_success"] == pytest.approx(
        float(holm[holm["a"] == "no_filter"]["pvalue_holm"].iloc[0]), nan_ok=True
    )


def test_benefit_table_sets_full_observation_beside_each_radius_on_stale_regimes(tmp_path: Path) -> None:
    """Memory against none on a stale regime, full observation and radius 1, from the samples;
    rows by regime, full first; both sides, success and deaths, read together (counted here)."""
    runs = [(r, g, s) for r in (1, None) for g in ("L1", "L0") for s in ("no_filter", "no_memory")]
    logs = inspect_eval(
        [navigate(view_radius=r, regime=g, strategy=s, epochs=1) for r, g, s in runs],
        model="spatialstale/memory",
        log_dir=str(tmp_path / "logs"),
        limit=4,
        display="none",
    )
    pct = {}
    for (r, g, s), log in zip(runs, logs):
        values = [x.scores["navigation_scorer"].metadata["counts"] for x in log.samples]
        pct[(r, g, s)] = {k: 100 * sum(v[k] for v in values) / len(values) for k in ("success", "death")}
    table = build_report(tmp_path / "logs", tmp_path / "out").tables["benefit"]
    rows = table.to_dict("records")
    assert [(row["regime"], row["observation"]) for row in rows] == [
        ("L0", "full"), ("L0", "radius 1"), ("L1", "full"), ("L1", "radius 1")
    ]  # fmt: skip
    for row in rows:
        r = None if row["observation"] == "full" else 1
        with_, without = pct[(r, row["regime"], "no_filter")], pct[(r, row["regime"], "no_memory")]
        assert (row["success_with"], row["success_without"]) == (with_["success"], without["success"])
        assert (row["death_with"], row["death_without"]) == (with_["death"], without["death"])
        gain, cost = with_["success"] - without["success"], with_["death"] - without["death"]
        assert (row["benefit_pp"], row["death_pp"]) == (gain, cost)
        sides = {"helps": gain > 0 or cost < 0, "harms": gain < 0 or cost > 0}
        expected = {
            (True, False): "helps",
            (False, True): "harms",
            (False, False): "no difference",
            (True, True): "helps and harms" if gain > 0 else "fewer successes, fewer deaths",
        }[(sides["helps"], sides["harms"])]
        assert row["net"] == expected
        assert row["memory"] == ("true (nothing stale)" if row["regime"] == "L0" else "stale entries")
