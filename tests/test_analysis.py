"""The analysis layer: the report's numbers against the samples, the
paired tests against scipy, the matrix's resume and dry run, skipped logs.

Logs come from real runs of the scripted agents (``spatialstale/memory``,
``spatialstale/random``) made here, kept small (6 seeds, 2 epochs), and from
synthetic logs written with ``write_eval_log`` from those runs' samples when a
test needs per-seed values it controls. Expected values are recomputed in
this file straight from ``read_eval_log`` samples, never through the
analysis code.
"""

from __future__ import annotations

import collections
import json
import math
import os
import shutil
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.stats
import shortuuid
from _fork import fork_cli, stop
from _reference import holm
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog, EvalSample, list_eval_logs, read_eval_log, write_eval_log
from inspect_ai.log._samples import sample_active
from inspect_ai.scorer import Score, match
from inspect_ai.solver import generate

from spatialstale_evals import cli
from spatialstale_evals.analysis import logs
from spatialstale_evals.analysis.report import build_report
from spatialstale_evals.detect import detect
from spatialstale_evals.harness.samples import INSTANCE_KEY
from spatialstale_evals.navigate import navigate
from spatialstale_evals.runs import matrix
from spatialstale_evals.scripted.api import ScriptedAPI
from spatialstale_evals.world.grid import shortest_path

SEEDS, EPOCHS = 6, 2
MEMORY, RANDOM = "spatialstale/memory", "spatialstale/random"
RANDOM_LABEL = "spatialstale/random [seed=1]"
APPROX = dict(rel=1e-12, abs=1e-12)


# -- fixtures -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def scripted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two models' detect and navigate logs: memory on L1+L2, random (seed 1) on L1."""
    log_dir = tmp_path_factory.mktemp("scripted")
    strategies = ("no_filter", "omcd")
    inspect_eval(
        [detect(regime=r) for r in ("L1", "L2")]
        + [navigate(regime=r, strategy=s, epochs=EPOCHS) for r in ("L1", "L2") for s in strategies],
        model=MEMORY,
        log_dir=str(log_dir),
        display="none",
        limit=SEEDS,
        log_realtime=False,  # read when finished: no live-viewing buffer (a third of the CPU)
    )
    inspect_eval(
        [detect(regime="L1")] + [navigate(regime="L1", strategy=s, epochs=EPOCHS) for s in strategies],
        model=RANDOM,
        model_args={"seed": 1},
        log_dir=str(log_dir),
        display="none",
        limit=SEEDS,
        log_realtime=False,
    )
    return log_dir


@pytest.fixture(scope="module")
def report(scripted: Path, tmp_path_factory: pytest.TempPathFactory):
    return build_report(scripted, tmp_path_factory.mktemp("report"))


def _path(log: EvalLog) -> str:
    return log.location.removeprefix("file://")


def _full_logs(log_dir: Path) -> list[EvalLog]:
    return [read_eval_log(info.name) for info in list_eval_logs(str(log_dir))]


def _label(log: EvalLog) -> str:
    return RANDOM_LABEL if log.eval.model_args else log.eval.model


def _family(log: EvalLog) -> str:
    return log.eval.task.rsplit("/", 1)[-1]


def _value(sample: EvalSample) -> dict:
    return next(iter(sample.scores.values())).metadata["counts"]


def _row(df, **match_):
    sel = df
    for key, value in match_.items():
        sel = sel[sel[key] == value]
    assert len(sel) == 1, f"expected one row for {match_}, got {len(sel)}"
    return sel.iloc[0]


def _per_seed(samples: list[EvalSample], key) -> dict[str, float]:
    by: dict[str, list[float]] = collections.defaultdict(list)
    for s in samples:
        by[s.id].append(key(s))
    return {sid: sum(v) / len(v) for sid, v in by.items()}


# -- the report's numbers against the samples ----------------------------------------------


def test_detection_numbers_equal_samples(scripted: Path, report) -> None:
    det = report.tables["detection"]
    direction = report.tables["direction"]
    checked = 0
    for log in _full_logs(scripted):
        if _family(log) != "detect":
            continue
        v = [_value(s) for s in log.samples]
        tot = {k: sum(x[k] for x in v) for k in v[0] if isinstance(v[0][k], (int, float))}
        cell = dict(model=_label(log), regime=log.eval.task_args["regime"], modality="text")
        row = _row(det, **cell)
        assert row["seeds"] == SEEDS
        assert row["precision"] == pytest.approx(tot["tp"] / (tot["tp"] + tot["fp"]), **APPROX)
        assert row["recall"] == pytest.approx(tot["tp"] / (tot["tp"] + tot["fn"]), **APPROX)
        assert row["f1"] == pytest.approx(2 * tot["tp"] / (2 * tot["tp"] + tot["fp"] + tot["fn"]), **APPROX)
        f1s = [x["f1"] for x in v]
        assert row["f1_mean"] == pytest.approx(np.mean(f1s), **APPROX)
        assert row["f1_sd"] == pytest.approx(np.std(f1s, ddof=1), **APPROX)
        # the task's own pooled F1 metric agrees
        assert row["f1"] == pytest.approx(log.results.scores[0].metrics["f1"].value, **APPROX)
        d = _row(direction, **cell)
        assert d["thaw_n"] == tot["stale_thaw"] and d["freeze_n"] == tot["stale_freeze"]
        assert d["thaw_recall"] == pytest.approx(tot["thaw_flagged"] / tot["stale_thaw"], **APPROX)
        assert d["freeze_recall"] == pytest.approx(tot["freeze_flagged"] / tot["stale_freeze"], **APPROX)
        assert d["flag_rate_valid_safe"] == pytest.approx(tot["valid_safe_flagged"] / tot["valid_safe"], **APPROX)
        checked += 1
    assert checked == 3
    # two models, each with its own rows
    assert set(det["model"]) == {MEMORY, RANDOM_LABEL}
    # the random auditor is not perfect: the comparison above is not trivially 1.0 == 1.0
    assert _row(det, model=RANDOM_LABEL, regime="L1", modality="text")["f1"] < 0.5


def test_navigation_numbers_equal_samples(scripted: Path, report) -> None:
    nav, steps, gain = report.tables["navigation"], report.tables["steps"], report.tables["gain"]
    checked = 0
    for log in _full_logs(scripted):
        if _family(log) != "navigate":
            continue
        v = [_value(s) for s in log.samples]
        args = log.eval.task_args
        cell = dict(model=_label(log), regime=args["regime"], strategy=args["strategy"], modality="text")
        row = _row(nav, **cell)
        assert row["episodes"] == SEEDS * EPOCHS == len(v)
        assert row["seeds"] == SEEDS
        for key in ("success", "death", "timeout"):
            assert row[key] == pytest.approx(100 * sum(x[key] for x in v) / len(v), **APPROX)
        assert row["mean_steps"] == pytest.approx(np.mean([x["steps"] for x in v]), **APPROX)
        for outcome in ("success", "death", "timeout"):
            lengths = [x["steps"] for x in v if x[outcome]]
            sel = steps[
                (steps["model"] == cell["model"])
                & (steps["regime"] == cell["regime"])
                & (steps["strategy"] == cell["strategy"])
                & (steps["outcome"] == outcome)
            ]
            if lengths:
                assert sel.iloc[0]["episodes"] == len(lengths)
                assert sel.iloc[0]["mean_steps"] == pytest.approx(np.mean(lengths), **APPROX)
            else:
                assert sel.empty
        checked += 1
    assert checked == 6
    # the memory agent dies on stale cells without a filter and not with omcd: a real gap
    g = _row(gain, model=MEMORY, regime="L1")
    assert g["gain_pp"] == pytest.approx(g["omcd_success"] - g["no_filter_success"])
    assert g["gain_pp"] > 0


def _success_vectors(log_dir: Path, model: str, regime: str, a: str, b: str) -> tuple[list, list]:
    rates = {}
    for log in _full_logs(log_dir):
        args = log.eval.task_args
        if _family(log) == "navigate" and _label(log) == model and args["regime"] == regime:
            rates[args["strategy"]] = _per_seed(log.samples, lambda s: _value(s)["success"])
    seeds = sorted(set(rates[a]) & set(rates[b]))
    return [rates[a][s] for s in seeds], [rates[b][s] for s in seeds]


def _rank_biserial(x, y) -> float:
    d = np.asarray(x) - np.asarray(y)
    d = d[d != 0]
    ranks = scipy.stats.rankdata(np.abs(d))
    return (ranks[d > 0].sum() - ranks[d < 0].sum()) / (len(d) * (len(d) + 1) / 2)


def test_wilcoxon_equals_scipy_on_integer_differences(scripted: Path, report) -> None:
    """The report's test equals scipy's signed-rank test (its automatic method)
    on the seeds' integer differences of success counts, zeros dropped."""
    w = report.tables["wilcoxon"]
    x, y = _success_vectors(scripted, MEMORY, "L2", "no_filter", "omcd")
    d = np.rint(EPOCHS * (np.asarray(x) - np.asarray(y))).astype(int)
    expected = scipy.stats.wilcoxon(d[d != 0])
    row = _row(w, model=MEMORY, regime="L2", metric="success", a="no_filter", b="omcd")
    assert row["n_pairs"] == SEEDS
    assert row["n_nonzero"] == int(np.count_nonzero(d)) > 0
    assert row["statistic"] == pytest.approx(expected.statistic, **APPROX)
    assert row["pvalue"] == pytest.approx(expected.pvalue, **APPROX)
    assert row["rank_biserial"] == pytest.approx(_rank_biserial(x, y), **APPROX)
    assert row["diff_pp"] == pytest.approx(100 * (np.mean(x) - np.mean(y)), **APPROX)
    # the Holm family: every pair and metric of the same (model, regime) cell
    family = w[(w["model"] == MEMORY) & (w["regime"] == "L2")]
    raw = family["pvalue"].to_numpy()
    assert list(family["pvalue_holm"]) == pytest.approx(holm(list(raw)), nan_ok=True)


def test_path_conditioned_recall_equals_samples(scripted: Path, report) -> None:
    full = _full_logs(scripted)
    traj = collections.defaultdict(list)
    for log in full:
        if _family(log) == "navigate" and log.eval.task_args["strategy"] == "omcd":
            for s in log.samples:
                traj[(_label(log), log.eval.task_args["regime"], s.id)].append(
                    {tuple(c) for c in s.scores["navigation_scorer"].metadata["trajectory"]}
                )
    table = report.tables["path_recall"]
    for log in full:
        if _family(log) != "detect":
            continue
        regime, model = log.eval.task_args["regime"], _label(log)
        n = collections.Counter()
        for s in log.samples:
            inst = json.loads(s.store[INSTANCE_KEY])
            cell = {m["id"]: (m["row"], m["col"]) for m in inst["memory"]}
            (truth,), (verdicts,) = s.metadata["windows"], s.scores["detection_scorer"].metadata["windows"]
            stale, flagged = truth["thaw"] + truth["freeze"], set(verdicts["flagged"])
            true_path = set(shortest_path(tuple(inst["grid"]), (0, 0), (7, 7)))
            sets = [("all", set(cell.values())), ("true_path", true_path)]
            sets += [("trajectory", t) for t in traj[(model, regime, s.id)]]
            for name, cells in sets:
                on = [e for e in stale if cell[e] in cells]
                n[name, "n"] += len(on)
                n[name, "hit"] += sum(e in flagged for e in on)
        row = _row(table, model=model, regime=regime, modality="text")
        for name in ("all", "true_path", "trajectory"):
            assert row[f"{name}_n"] == n[name, "n"]
            expected = n[name, "hit"] / n[name, "n"] if n[name, "n"] else math.nan
            assert row[f"{name}_recall"] == pytest.approx(expected, nan_ok=True)
    # the random agent's trajectories do cross stale cells: the trajectory set is exercised
    assert _row(table, model=RANDOM_LABEL, regime="L1", modality="text")["trajectory_n"] > 0


def test_report_files_and_missing_sections(scripted: Path, report, tmp_path: Path) -> None:
    text = report.markdown.read_text()
    assert report.markdown.name == "REPORT.md"
    for png in ("f1_by_regime.png", "outcomes_by_strategy.png", "trajectory_lengths.png"):
        assert (report.out_dir / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"]({png})" in text
    assert "Paired Wilcoxon" in text and "Path-conditioned" in text
    # a folder with navigate logs only: the detection sections say so, the rest still works
    nav_only = tmp_path / "nav_only"
    nav_only.mkdir()
    for log in _full_logs(scripted):
        if _family(log) == "navigate":
            shutil.copy(_path(log), nav_only)
    partial = build_report(nav_only, tmp_path / "out")
    assert partial.tables["detection"].empty and not partial.tables["navigation"].empty
    md = partial.markdown.read_text()
    assert "No detect logs" in md and "f1_by_regime.png" not in md


# -- synthetic log sets: known difference, no difference, correlation, reruns --------------------


def _nav_value(success: int, steps: int = 14) -> dict:
    death = 1 - success
    return {
        "success": success,
        "death": death,
        "timeout": 0,
        "reward": 1.0 if success else -1.0,
        "steps": steps,
        "steps_if_success": steps * success,
        "steps_if_death": steps * death,
        "steps_if_timeout": 0,
        "fallbacks": 0,
        "extra_calls": 0,
        "death_on_stale": death,
        "death_on_stale_shown": death,
        "audit_calls": 0,
        "tokens": 100,
    }


def _write(
    template: EvalLog,
    path: Path,
    samples: list[EvalSample],
    status: str = "success",
    created: str | None = None,
    **task_args,
) -> Path:
    log = template.model_copy(deep=True)
    log.eval.eval_id = shortuuid.uuid()
    log.eval.task_args = {**log.eval.task_args, **task_args}
    log.eval.metadata = {**(log.eval.metadata or {}), **task_args}
    log.eval.dataset.sample_ids = sorted({s.id for s in samples})
    log.eval.config.epochs = max(s.epoch for s in samples)
    log.status = status
    if created:
        log.eval.created = created
        log.stats.completed_at = created
    log.samples = samples
    write_eval_log(log, str(path))
    return path


def _nav_samples(template: EvalSample, successes: dict[str, list[int]]) -> list[EvalSample]:
    out = []
    for sid, per_epoch in successes.items():
        for epoch, success in enumerate(per_epoch, start=1):
            s = template.model_copy(deep=True)
            s.id, s.epoch, s.uuid, s.events, s.messages = sid, epoch, shortuuid.uuid(), [], []
            s.scores = {
                "navigation_scorer": Score(
                    value=_nav_value(success),
                    metadata={"outcome": "success" if success else "death", "trajectory": [[0, 0]], "death_cell": None},
                )
            }
            out.append(s)
    return out


def _template(log_dir: Path, family: str, strategy: str | None = None) -> EvalLog:
    for log in _full_logs(log_dir):
        if (
            _family(log) == family
            and log.eval.model == MEMORY
            and log.eval.task_args["regime"] == "L1"
            and (strategy is None or log.eval.task_args["strategy"] == strategy)
        ):
            return log
    raise AssertionError("no template log")


def test_synthetic_difference_is_detected_and_none_is_not(scripted: Path, tmp_path: Path) -> None:
    template = _template(scripted, "navigate", "no_filter")
    ids = [f"L1-{i:03d}" for i in range(16)]
    rng = np.random.default_rng(0)
    # known difference: oracle succeeds on every episode; no_filter on 2 epochs of 16 seeds only
    diff = tmp_path / "diff"
    diff.mkdir()
    _write(
        template, diff / "oracle.eval", _nav_samples(template.samples[0], {i: [1, 1] for i in ids}), strategy="oracle"
    )
    _write(
        template,
        diff / "no_filter.eval",
        _nav_samples(template.samples[0], {i: [int(k < 2), 0] for k, i in enumerate(ids)}),
        strategy="no_filter",
    )
    # no difference: the same per-seed success rates, paired with a random permutation of the seeds
    same = tmp_path / "same"
    same.mkdir()
    pattern = {i: [int(rng.random() < 0.5), int(rng.random() < 0.5)] for i in ids}
    shuffled = dict(zip(ids, [pattern[i] for i in rng.permutation(ids)]))
    _write(template, same / "omcd.eval", _nav_samples(template.samples[0], pattern), strategy="omcd")
    _write(template, same / "no_filter.eval", _nav_samples(template.samples[0], shuffled), strategy="no_filter")

    found = build_report(diff, tmp_path / "r1").tables["wilcoxon"]
    row = _row(found, metric="success", a="no_filter", b="oracle")
    assert row["n_pairs"] == 16 and row["n_nonzero"] == 16
    assert row["significant"] and row["pvalue"] < 0.001
    assert row["rank_biserial"] == -1.0
    d = np.array([-1] * 2 + [-2] * 14)  # successes of the 2 epochs: no_filter minus oracle
    assert row["pvalue"] == pytest.approx(scipy.stats.wilcoxon(d).pvalue, **APPROX)

    none = build_report(same, tmp_path / "r2").tables["wilcoxon"]
    row = _row(none, metric="success", a="no_filter", b="omcd")
    assert row["n_pairs"] == 16 and not row["significant"] and row["pvalue"] > 0.05


def test_synthetic_correlation_equals_scipy(scripted: Path, tmp_path: Path) -> None:
    det_t, nav_t = _template(scripted, "detect"), _template(scripted, "navigate", "omcd")
    ids = [f"L1-{i:03d}" for i in range(10)]
    rng = np.random.default_rng(5)
    det_samples, f1 = [], {}
    for sid in ids:
        s = det_t.samples[0].model_copy(deep=True)
        tp, fp, fn = (int(v) for v in rng.integers(1, 9, 3))
        f1[sid] = 2 * tp / (2 * tp + fp + fn)
        value = {**s.scores["detection_scorer"].metadata["counts"], "tp": tp, "fp": fp, "fn": fn, "f1": f1[sid]}
        s.id, s.uuid, s.events, s.messages = sid, shortuuid.uuid(), [], []
        s.scores = {"detection_scorer": Score(value=value, metadata={"windows": []})}
        det_samples.append(s)
    success = {sid: [int(rng.random() < f1[sid]), int(rng.random() < 0.5)] for sid in ids}
    _write(det_t, tmp_path / "detect.eval", det_samples)
    _write(nav_t, tmp_path / "omcd.eval", _nav_samples(nav_t.samples[0], success))
    row = _row(build_report(tmp_path, tmp_path / "out").tables["correlation"], regime="L1")
    x, y = [f1[i] for i in ids], [np.mean(success[i]) for i in ids]
    assert row["seeds"] == 10
    assert row["pearson_r"] == pytest.approx(scipy.stats.pearsonr(x, y).statistic, **APPROX)
    assert row["pearson_p"] == pytest.approx(scipy.stats.pearsonr(x, y).pvalue, **APPROX)
    assert row["spearman_rho"] == pytest.approx(scipy.stats.spearmanr(x, y).statistic, **APPROX)
    assert row["spearman_p"] == pytest.approx(scipy.stats.spearmanr(x, y).pvalue, **APPROX)


def test_reruns_partials_and_copies_are_counted_once(scripted: Path, tmp_path: Path) -> None:
    original = _template(scripted, "detect")  # memory, L1, 6 samples, complete
    shutil.copy(_path(original), tmp_path / "copy-a.eval")
    shutil.copy(_path(original), tmp_path / "copy-b.eval")  # the same log twice (same eval id)

    def marked(ids: list[str], tp: int) -> list[EvalSample]:
        out = []
        for sid in ids:
            s = original.samples[0].model_copy(deep=True)
            s.id, s.uuid, s.events, s.messages = sid, shortuuid.uuid(), [], []
            s.scores = {
                "detection_scorer": Score(
                    value={**s.scores["detection_scorer"].metadata["counts"], "tp": tp}, metadata={"windows": []}
                )
            }
            out.append(s)
        return out

    # a newer complete rerun of three seeds, and a still newer partial run
    _write(
        original,
        tmp_path / "rerun.eval",
        marked(["L1-000", "L1-001", "L1-002"], 99),
        created="2099-01-01T00:00:00+00:00",
    )
    _write(
        original,
        tmp_path / "partial.eval",
        marked(["L1-000", "L1-006"], 555),
        status="started",
        created="2099-01-02T00:00:00+00:00",
    )
    loaded = logs.load(tmp_path)
    tp = dict(zip(loaded.detect["instance_id"], loaded.detect["tp"]))
    expected_orig = {s.id: _value(s)["tp"] for s in original.samples}
    assert sorted(tp) == [f"L1-{i:03d}" for i in range(7)]  # 6 + the partial run's new seed, once each
    assert tp["L1-000"] == tp["L1-001"] == tp["L1-002"] == 99  # complete beats partial, newer beats older
    assert tp["L1-006"] == 555  # a partial run contributes what no complete log has
    assert all(tp[i] == expected_orig[i] for i in ("L1-003", "L1-004", "L1-005"))
    used = dict(zip(loaded.evals["log"].map(lambda p: Path(p).name), loaded.evals["used_samples"]))
    assert used["rerun.eval"] == 3 and used["partial.eval"] == 1
    assert sum(used.values()) == 7


# -- skipped logs -------------------------------------------------------------------------------


def test_corrupt_and_foreign_logs_are_skipped_with_a_warning(scripted: Path, tmp_path: Path) -> None:
    good = _template(scripted, "detect")
    shutil.copy(_path(good), tmp_path)
    junk = tmp_path / "2026-01-01T00-00-00-00-00_detect_junk.eval"
    junk.write_bytes(b"not a zip file at all")
    truncated = tmp_path / "truncated.eval"
    truncated.write_bytes(Path(_path(good)).read_bytes()[:4000])
    foreign = [
        Task(dataset=[Sample(input="Say hi", target="hi")], solver=generate(), scorer=match(), name="trivial"),
        # a foreign task that is even called "detect"
        Task(dataset=[Sample(input="Say hi", target="hi")], solver=generate(), scorer=match(), name="detect"),
    ]
    foreign_logs = inspect_eval(foreign, model="mockllm/model", log_dir=str(tmp_path), display="none")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = build_report(tmp_path, tmp_path / "out")
    messages = [str(w.message) for w in caught if issubclass(w.category, logs.SkippedLog)]
    skipped = [junk, truncated, *(Path(_path(log)) for log in foreign_logs)]
    for path in skipped:
        assert any(str(path) in m for m in messages), f"no warning names {path}"
    assert len(messages) == 4
    assert {Path(p) for p, _ in result.logset.skipped} == set(skipped)
    assert len(result.logset.detect) == SEEDS and result.logset.navigate.empty
    md = result.markdown.read_text()
    assert "Skipped files" in md and junk.name in md


# -- the run matrix -------------------------------------------------------------------------------

MATRIX_ARGS = [
    "matrix",
    "--model",
    "spatialstale/observer",
    "--seeds",
    "4",
    "--epochs",
    "1",
    "--regimes",
    "L1",
    "--strategies",
    "no_filter",
    "omcd",
    "--modalities",
    "text",
    "--display",
    "none",
]


def _hang_on_omcd() -> None:
    """In the matrix's child process only: the omcd task never finishes (its sample L1-002 waits an hour),
    so the run is killed there, with detect and no_filter done."""
    import asyncio

    original = ScriptedAPI.generate

    async def hang_on_omcd(self, input, tools, tool_choice, config):
        active = sample_active()
        if active.sample.metadata.get("strategy") == "omcd" and active.sample.id == "L1-002":
            await asyncio.sleep(3600)  # this task never finishes: the run is killed here
        return await original(self, input, tools, tool_choice, config)

    ScriptedAPI.generate = hang_on_omcd


def _run_cli(argv: list[str]) -> int:
    return cli.main(argv)


def _log_state(log_dir: Path) -> dict[str, tuple]:
    state = {}
    for info in list_eval_logs(str(log_dir)):
        path = info.name.removeprefix("file://")
        try:
            header = read_eval_log(info.name, header_only=True)
        except Exception:  # noqa: BLE001 - being written
            continue
        task = header.eval.task.rsplit("/", 1)[-1] + " " + str(header.eval.task_args.get("strategy", ""))
        state[path] = (task.strip(), header.status, header.eval.eval_id, os.path.getmtime(path))
    return state


def test_matrix_resumes_after_a_kill_without_redoing_finished_tasks(tmp_path: Path, monkeypatch) -> None:
    log_dir = tmp_path / "matrix"
    argv = [*MATRIX_ARGS, "--log-dir", str(log_dir)]
    # its own process (forked from this warm one, tests/_fork.py), killed with SIGKILL mid-run
    pid = fork_cli(argv, tmp_path / "child.out", before=_hang_on_omcd)
    try:
        deadline = time.monotonic() + 150
        while time.monotonic() < deadline:
            state = _log_state(log_dir)
            finished = {v[0] for v in state.values() if v[1] == "success"}
            if finished == {"detect", "navigate no_filter"} and any(v[0] == "navigate omcd" for v in state.values()):
                break
            assert os.waitpid(pid, os.WNOHANG) == (0, 0), "the matrix ended before it could be interrupted"
            time.sleep(0.3)
        else:
            raise AssertionError(f"matrix did not reach the interruption point: {_log_state(log_dir)}")
    finally:
        stop(pid)  # already ended (and reaped): the assert says so
    before = _log_state(log_dir)
    done_before = {p: v for p, v in before.items() if v[1] == "success"}
    assert {v[0] for v in done_before.values()} == {"detect", "navigate no_filter"}
    assert [v[1] for v in before.values() if v[0] == "navigate omcd"] == ["started"]

    calls = collections.Counter()
    original = ScriptedAPI.generate

    async def counting(self, input, tools, tool_choice, config):
        active = sample_active()
        calls[active.sample.metadata.get("strategy") or "detect"] += 1
        return await original(self, input, tools, tool_choice, config)

    monkeypatch.setattr(ScriptedAPI, "generate", counting)
    assert _run_cli(argv) == 0  # the same command again
    after = _log_state(log_dir)
    for path, value in done_before.items():
        assert after[path] == value  # same file, same eval id, not rewritten
    assert set(calls) == {"omcd"}  # only the interrupted task ran
    finished = [v[0] for v in after.values() if v[1] == "success"]
    assert sorted(finished) == ["detect", "navigate no_filter", "navigate omcd"]

    calls.clear()
    assert _run_cli(argv) == 0  # complete: a third run does nothing
    assert not calls and _log_state(log_dir) == after
    # the report counts the killed run's samples once
    loaded = logs.load(log_dir)
    omcd = loaded.navigate[loaded.navigate["strategy"] == "omcd"]
    assert sorted(omcd["instance_id"]) == ["L1-000", "L1-001", "L1-002", "L1-003"]
    # and the resumed task scored what an uninterrupted run of it scores, sample for sample
    monkeypatch.setattr(ScriptedAPI, "generate", original)
    (resumed,) = [read_eval_log(path) for path, value in after.items() if value[:2] == ("navigate omcd", "success")]
    (fresh,) = inspect_eval(
        navigate(**resumed.eval.task_args), model="spatialstale/observer", limit=resumed.eval.config.limit,
        log_dir=str(tmp_path / "fresh"), display="none",
    )  # fmt: skip
    assert fresh.status == "success" and len(fresh.samples) == 4

    def values(log: EvalLog) -> dict:
        return {(s.id, s.epoch): s.scores["navigation_scorer"].metadata["counts"] for s in log.samples}

    assert values(resumed) == values(fresh)


def test_dry_run_makes_no_model_call_and_estimates_real_usage(
    scripted: Path, tmp_path: Path, monkeypatch, capsys
) -> None:
    async def forbidden(*args, **kwargs):
        raise AssertionError("a model was called during --dry-run")

    def no_eval_set(*args, **kwargs):
        raise AssertionError("eval_set was called during --dry-run")

    monkeypatch.setattr(ScriptedAPI, "generate", forbidden)
    monkeypatch.setattr(matrix, "eval_set", no_eval_set)
    log_dir = tmp_path / "never"
    argv = [
        "matrix",
        "--model",
        MEMORY,
        "--model",
        "openai/gpt-4o",
        "--log-dir",
        str(log_dir),
        "--dry-run",
        "--seeds",
        str(SEEDS),
        "--epochs",
        str(EPOCHS),
        "--regimes",
        "L1",
        "L2",
        "--strategies",
        "no_filter",
        "omcd",
        "--modalities",
        "text",
    ]
    assert _run_cli(argv) == 0
    out = capsys.readouterr().out
    assert not log_dir.exists()
    assert "6 task(s) x 2 model(s) = 12 eval(s)" in out
    assert "| detect L1 text | 6 | 6 | 42 |" in out
    assert "upper bound" in out and "no model was called" in out

    # the estimate is the scripted provider's actual count for detection, and bounds navigation
    spec = matrix.MatrixSpec(
        models=[MEMORY],
        regimes=["L1", "L2"],
        axes={"modalities": ["text"], "strategies": ["no_filter", "omcd"]},
        seeds=SEEDS,
        epochs=EPOCHS,
    )
    planned = {(t.family, t.regime, t.task_args.get("strategy")): t for t in matrix.plan(spec)}
    for log in _full_logs(scripted):
        if log.eval.model != MEMORY:
            continue
        args = log.eval.task_args
        t = planned[(_family(log), args["regime"], args.get("strategy"))]
        tin = sum(u.input_tokens for s in log.samples for u in s.model_usage.values())
        tout = sum(u.output_tokens for s in log.samples for u in s.model_usage.values())
        n_calls = sum(1 for s in log.samples for e in s.events if e.event == "model")
        if t.family == "detect":
            assert (t.cost.calls, t.cost.input_tokens, t.cost.output_tokens) == (n_calls, tin, tout)
        else:
            assert n_calls <= t.cost.calls and tin <= t.cost.input_tokens and tout <= t.cost.output_tokens


def test_paper_values_sit_beside_matching_models_only(scripted: Path, tmp_path: Path) -> None:
    template = _template(scripted, "navigate", "no_filter")
    shutil.copy(_path(template), tmp_path)  # memory: no paper model
    renamed = template.model_copy(deep=True)
    renamed.eval.model, renamed.eval.eval_id = "openai/gpt-4o-2024-08-06", shortuuid.uuid()
    renamed.eval.task_args = {**renamed.eval.task_args, "regime": "L2"}
    write_eval_log(renamed, str(tmp_path / "gpt4o.eval"))
    nav = build_report(tmp_path, tmp_path / "out").tables["navigation"]
    gpt = _row(nav, model="openai/gpt-4o-2024-08-06")
    assert (gpt["paper_success"], gpt["paper_death"]) == (14.4, 74.4)
    mem = _row(nav, model=MEMORY)
    assert math.isnan(mem["paper_success"]) and math.isnan(mem["paper_death"])


def test_logs_of_an_earlier_task_version_are_kept_apart(scripted: Path, tmp_path: Path) -> None:
    """1-A counted S and G in the valid-SAFE control: its logs must not be pooled with 2-A's."""
    template = _template(scripted, "detect")
    shutil.copy(_path(template), tmp_path)
    old = template.model_copy(deep=True)
    old.eval.task_version, old.eval.eval_id = "1-A", shortuuid.uuid()
    write_eval_log(old, str(tmp_path / "old.eval"))
    det = build_report(tmp_path, tmp_path / "out").tables["detection"]
    assert sorted(det["config"]) == ["", "task version 1-A"]
    assert set(det["samples"]) == {SEEDS}, "each version's samples counted in its own row, once"


def test_logs_of_a_version_with_the_same_number_are_pooled(scripted: Path, tmp_path: Path) -> None:
    """Versions of one number (3-A, 3-B) differ in interface only: their logs are one configuration."""
    template = _template(scripted, "detect")
    shutil.copy(_path(template), tmp_path)
    old = template.model_copy(deep=True)
    old.eval.task_version, old.eval.eval_id = template.eval.task_version.split("-")[0] + "-0", shortuuid.uuid()
    write_eval_log(old, str(tmp_path / "old.eval"))
    det = build_report(tmp_path, tmp_path / "out").tables["detection"]
    assert list(det["config"]) == [""] and set(det["samples"]) == {SEEDS}, "one row, each sample once"


def test_samples_stopped_by_a_limit_are_scored_and_reported(tmp_path: Path) -> None:
    """A ``--token-limit`` stops samples mid-way: Inspect still scores them, so
    the solvers leave their records (and the instance) in the store even then,
    the episode's outcome is ``limit``, and the report reads such logs."""
    log_dir = tmp_path / "logs"
    nav, det = inspect_eval(
        [navigate(regime="L2", strategy="omcd", epochs=1), detect(regime="L3")],
        model=MEMORY,
        log_dir=str(log_dir),
        display="none",
        limit=3,
        token_limit=8000,
    )
    for log in (nav, det):
        assert log.status == "success"
        assert all(s.limit is not None and s.limit.type == "token" for s in log.samples)
        assert all(json.loads(s.store[INSTANCE_KEY])["id"] == s.id for s in log.samples)
    for s in nav.samples:
        score = s.scores["navigation_scorer"]
        assert score.metadata["outcome"] == "limit" and score.metadata["counts"]["limit"] == 1
        assert score.value["success"] + score.value["death"] + score.value["timeout"] == 0
    assert all(s.scores["detection_scorer"].metadata["counts"]["windows"] < 2 for s in det.samples)
    report = build_report(log_dir, tmp_path / "report")
    assert (tmp_path / "report" / "REPORT.md").exists() and report.tables


# -- the order of configurations -------------------------------------------------------------


def test_configurations_sort_by_the_type_of_their_values_not_as_text() -> None:
    """Labels as ``config_label`` writes them, shuffled; the expected order is written out here:
    the defaults first, names alphabetically, numbers numerically, registry values in declared order."""
    import random

    import pandas as pd

    from spatialstale_evals.analysis.tables import sort_table

    expected = [
        "",
        *[f"batch_size={b}" for b in (1, 5, 10, 20, 64)],
        *[f"distractors={d}" for d in (2, 8, 16)],
        "distractors=16, grader=openai/gpt-4o",
        *[f"filter_mode={m}" for m in ("delete", "mark", "history")],  # harness/memory_view.FilterMode's order
        "view_radius=None",
        *[f"view_radius={r}" for r in (0, 1, 2, 10)],
    ]
    shuffled = expected[:]
    random.Random(4).shuffle(shuffled)
    df = pd.DataFrame(
        {"model": "m", "config": shuffled, "regime": "L1", "levels": shuffled, "value": range(len(shuffled))}
    )
    assert list(sort_table(df)["config"]) == expected
    by_levels = sort_table(df.assign(config="")).drop(columns="config")
    assert list(by_levels["levels"]) == expected
    two_models = pd.concat([df.assign(model="b"), df.assign(model="a")])
    assert list(sort_table(two_models)["config"]) == expected * 2
