"""The report's trust-gap view on real scripted logs: the stale-memory tax per
model and factor level against a computation written here from the samples,
its paired tests, the capability column and plot, and bad model-info files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.stats as sps
import shortuuid
from inspect_ai import eval as inspect_eval
from inspect_ai.log import list_eval_logs, read_eval_log, write_eval_log

from spatialstale_evals.analysis.gap import read_model_info
from spatialstale_evals.analysis.logs import load
from spatialstale_evals.analysis.report import build_report
from spatialstale_evals.navigate import navigate
from spatialstale_evals.runs.matrix import MatrixSpec, plan

#: (strategy, factor arguments, the levels label the report gives them).
RUNS = [
    ("no_filter", {}, "paper defaults"),
    ("no_memory", {}, "paper defaults"),
    ("no_filter", {"memory_framing": "warn"}, "memory_framing=warn"),
    ("no_memory", {"memory_framing": "warn"}, "memory_framing=warn"),
    ("no_filter", {"memory_style": "detailed", "distractors": 2}, "memory_style=detailed, distractors=2"),
]
MODELS = {"spatialstale/memory": {}, "spatialstale/random": {"seed": 5}}
LIMIT = 10
#: Epochs per model. The memory agent is deterministic, so a second epoch would replay the first
#: step for step (and its no_memory arm is 50 model calls an episode: it never leaves the start);
#: the random agent's epochs differ, so its two epochs check the per-seed rates over epochs.
EPOCHS = {"spatialstale/memory": 1, "spatialstale/random": 2}


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    folder = tmp_path_factory.mktemp("gap")
    deaths: dict = {}
    for model, args in MODELS.items():
        tasks = [navigate(regime="L2", strategy=s, epochs=EPOCHS[model], **f) for s, f, _ in RUNS]
        for (strategy, _, label), log in zip(
            RUNS, inspect_eval(tasks, model=model, model_args=args, log_dir=str(folder), limit=LIMIT, display="none")
        ):
            assert log.status == "success"
            per_seed: dict[str, list[int]] = {}
            for s in log.samples:
                per_seed.setdefault(str(s.id), []).append(int(s.scores["navigation_scorer"].value["death"]))
            deaths[(model, strategy, label)] = {k: sum(v) / len(v) for k, v in per_seed.items()}
    return folder, deaths


def expected(deaths: dict, model: str, label: str) -> tuple[float, float]:
    """The tax (pp) and the two-sided Wilcoxon p on the per-seed death rates,
    against the no_memory run with the same framing (and nothing else)."""
    reference = "memory_framing=warn" if "framing" in label else "paper defaults"
    a, b = deaths[(model, "no_filter", label)], deaths[(model, "no_memory", reference)]
    seeds = sorted(set(a) & set(b))
    diffs = np.array([a[s] - b[s] for s in seeds])
    nonzero = diffs[diffs != 0]
    p = float(sps.wilcoxon(nonzero).pvalue) if len(nonzero) else float("nan")
    return 100 * diffs.mean(), p


def test_the_tax_table_equals_a_computation_from_the_samples(logs, tmp_path: Path) -> None:
    folder, deaths = logs
    csv = tmp_path / "models.csv"
    csv.write_text("model,params_b\nspatialstale/memory,7\nspatialstale/random [seed=5],70\n", encoding="utf-8")
    report = build_report(folder, tmp_path / "out", model_info=csv)
    tax = report.tables["tax"]
    assert len(tax) == len(MODELS) * 3
    for model in MODELS:
        label_model = model + (" [seed=5]" if MODELS[model] else "")
        rows = tax[tax["model"] == label_model].set_index("levels")
        ps = []
        for label in ("paper defaults", "memory_framing=warn", "memory_style=detailed, distractors=2"):
            tax_pp, p = expected(deaths, model, label)
            row = rows.loc[label]
            assert row["tax_pp"] == pytest.approx(tax_pp, abs=1e-9), (model, label)
            assert row["n_pairs"] == LIMIT
            assert row["tax_vs_default_pp"] == pytest.approx(tax_pp - rows.loc["paper defaults", "tax_pp"], abs=1e-9)
            if not np.isnan(p):
                assert row["pvalue"] == pytest.approx(p, rel=1e-6), (model, label)
            ps.append(row["pvalue"])
        # Holm within the model's cell, by hand: sort, scale by (m - rank), keep monotone
        valid = sorted((p, i) for i, p in enumerate(ps) if not np.isnan(p))
        running = 0.0
        for rank, (p, i) in enumerate(valid):
            running = max(running, min(1.0, (len(valid) - rank) * p))
            label = ("paper defaults", "memory_framing=warn", "memory_style=detailed, distractors=2")[i]
            assert rows.loc[label, "pvalue_holm"] == pytest.approx(running, rel=1e-9)
        assert set(rows["capability"]) == {7.0 if not MODELS[model] else 70.0}
    assert (tmp_path / "out" / "tax_vs_capability.png").stat().st_size > 5000
    assert "Trust gap" in report.markdown.read_text(encoding="utf-8")
    # the memory agent follows every stale SAFE claim: its tax is what the seeds' holes make it
    memory_default = tax[(tax["model"] == "spatialstale/memory") & (tax["levels"] == "paper defaults")]
    assert float(memory_default["tax_pp"].iloc[0]) > 0


def test_logs_before_3a_are_read_as_the_warn_framing_they_ran(logs, tmp_path: Path) -> None:
    """Every navigator prompt before task version 3-A had the line ``warn`` sends;
    such a log names no framing, and must not be read as the paper's ``none``."""
    folder, _ = logs
    paper_log = next(
        log
        for info in list_eval_logs(str(folder))
        if (args := (log := read_eval_log(info.name, header_only=True)).eval.task_args).get("memory_framing") == "none"
        and args.get("memory_style") == "plain"
        and log.eval.model == "spatialstale/memory"
    )
    old = read_eval_log(paper_log.location)
    old.eval.task_version, old.eval.eval_id = "2-A", shortuuid.uuid()
    old.eval.task_args = {k: v for k, v in old.eval.task_args.items() if k != "memory_framing"}
    old_dir = tmp_path / "old"
    write_eval_log(old, str(old_dir / "old.eval"))
    nav = load(old_dir).navigate
    assert set(nav["levels"]) == {"memory_framing=warn"} and set(nav["base_config"]) == {"task version 2-A"}
    assert len(nav) == LIMIT * EPOCHS["spatialstale/memory"]


def test_no_memory_with_memory_section_factors_is_not_applicable() -> None:
    with pytest.raises(ValueError, match="shows no memory"):
        navigate(strategy="no_memory", memory_style="detailed")
    planned = plan(
        MatrixSpec(
            models=["m"],
            families=["navigate"],
            regimes=["L2"],
            axes={"strategies": ["no_filter", "no_memory"]},
            factors={"memory_style": ["plain", "detailed"], "memory_framing": ["none", "warn"]},
        ),
        estimate=False,
    )
    names = [t.name for t in planned]
    assert len(names) == 2 * 2 + 2, names  # no_memory: framings only
    assert any("shows no memory" in reason for reason in planned.skipped)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("model\nx\n", "a model column and a numeric column"),
        ("model,params\nx,big\n", "line 2: expected a model and a number"),
    ],
)
def test_bad_model_info_is_a_clear_error(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "models.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        read_model_info(path)
    with pytest.raises(FileNotFoundError):
        read_model_info(tmp_path / "absent.csv")
