"""A task family registered from outside the package (here) is read by the
periphery without an edit to it: the matrix plans and runs it with its own
cost, the ``matrix`` command offers it, and the report shows a section for it
whose numbers are recomputed here from the dataset. A metric registered here
(``toy_odd_share``) is logged by the run, and the family's own report table
(``TaskFamily.tables``) reaches the report, as does a table of the report's
fixed layout with its columns and note (``TaskFamily.layout_tables``), and
the family's own plot (``TaskFamily.plots``), in either place; the family's
example (``TaskFamily.example``) is run by the example report and the
screenshots; and an axis the family crosses (``TaskFamily.axes``) is an
option of the ``matrix`` command and a column of its dry run: all with no
package edit either."""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

import pytest
from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import read_eval_log
from inspect_ai.scorer import Metric, SampleScore, Score, Target, mean, metric, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from spatialstale_evals.analysis.report import build_report
from spatialstale_evals.harness.cost import Cost
from spatialstale_evals.harness.family import (
    Example,
    MatrixAxis,
    TaskFamily,
    families,
    register_family,
    unregister_family,
)
from spatialstale_evals.harness.report_layout import ReportTable, integer, labels
from spatialstale_evals.runs.matrix import MatrixSpec, format_plan, matrix_families, plan, run_matrix
from spatialstale_evals.world import dataset
from spatialstale_evals.world.grid import HOLE

NAME = "toy_holes"


@solver
def count_holes() -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return state  # no model call: the family's logic, not a model, is under test

    return solve


@metric
def toy_odd_share() -> Metric:
    """A metric of this module's own: the share of samples with an odd number of holes."""

    def compute(scores: list[SampleScore]) -> float:
        return sum(1 - s.score.value["even"] for s in scores) / len(scores)  # type: ignore[index]

    return compute


@scorer(metrics=[mean(), toy_odd_share()])
def toy_holes_scorer():  # noqa: ANN201 - Inspect's scorer factory protocol
    async def score(state: TaskState, target: Target) -> Score:
        holes = int(state.metadata["holes"])
        return Score(value={"holes": holes, "even": float(holes % 2 == 0)})

    return score


#: Which rows of the grid the toy task counts: its own matrix axis (``HALVES``).
Rows = Literal["all", "top", "bottom"]


@task
def toy_holes(regime: str = "L1", dataset: str | None = None, size: str = "8x8", rows: Rows = "all") -> Task:
    """Counts the holes of each instance's final grid (of its top or bottom half: ``rows``):
    a family with no model call."""
    from spatialstale_evals.world import dataset as world_dataset

    def counted(grid: list[str]) -> list[str]:
        half = len(grid) // 2
        return {"all": grid, "top": grid[:half], "bottom": grid[half:]}[rows]

    samples = [
        Sample(
            input=inst.id, id=inst.id, metadata={"holes": sum(row.count(HOLE) for row in counted(inst.final_grid()))}
        )
        for inst in world_dataset.load(dataset, regime, size)
    ]
    return Task(
        dataset=MemoryDataset(samples),
        solver=count_holes(),
        scorer=toy_holes_scorer(),
        name=NAME,
        metadata={"task_family": NAME, "regime": regime, "rows": rows},
    )


def _estimate(instances: Any, args: dict[str, Any], model: Any, roles: Any) -> tuple[Cost, Cost]:
    return Cost(), Cost(calls=len(instances), input_tokens=7 * len(instances))


@pytest.fixture
def toy_family() -> Iterator[TaskFamily]:
    family = register_family(
        TaskFamily(
            name=NAME,
            scorer="toy_holes_scorer",
            task=toy_holes,
            dimensions=("regime",),
            matrix=lambda spec: iter([({}, 1)]),
            estimate=_estimate,
            in_default_matrix=False,
        )
    )
    yield family
    unregister_family(NAME)


def test_a_registered_family_is_planned_with_its_cost(toy_family: TaskFamily) -> None:
    assert NAME in matrix_families()
    spec = MatrixSpec(models=["mockllm/model"], regimes=["L1", "L2"], families=[NAME], seeds=3)
    planned = plan(spec)
    assert [(t.family, t.regime, t.samples) for t in planned] == [(NAME, "L1", 3), (NAME, "L2", 3)]
    assert all((t.cost_min, t.cost) == (Cost(), Cost(3, 21)) for t in planned)
    text = format_plan(spec, planned)
    assert f"| {NAME} L1 | 3 | 3 | 0 - 3 | 0 - 21 | 0 |" in text
    assert NAME not in MatrixSpec(models=["m"]).families  # not in the default matrix: it said so


def test_the_matrix_command_offers_a_registered_family(toy_family: TaskFamily) -> None:
    from spatialstale_evals.cli import build_parser

    args = build_parser().parse_args(["matrix", "--model", "m", "--log-dir", "x", "--tasks", NAME, "detect"])
    assert args.tasks == [NAME, "detect"]


#: The toy family's own matrix axis: the halves of the grid it counts (every choice of ``Rows`` unless told).
HALVES = MatrixAxis("halves", "rows", label="half")


def test_a_registered_familys_own_axis_is_an_option_and_crossed_in_the_dry_run(
    toy_family: TaskFamily, capsys: pytest.CaptureFixture[str]
) -> None:
    from spatialstale_evals import cli

    register_family(dataclasses.replace(toy_family, axes=(HALVES,)))
    argv = ["matrix", "--model", "m", "--log-dir", "x", "--tasks", NAME, "--regimes", "L1", "--seeds", "2"]
    assert cli.main([*argv, "--dry-run"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith(f"| {NAME} ")]
    # every half the task's Literal names, by default; the family's cost for each
    assert rows == [f"| {NAME} L1 {half} | 2 | 2 | 0 - 2 | 0 - 14 | 0 |" for half in ("all", "top", "bottom")]
    assert cli.main([*argv, "--halves", "bottom", "top", "--dry-run"]) == 0
    assert [line.split(" | ")[0] for line in capsys.readouterr().out.splitlines() if f"| {NAME} " in line] == [
        f"| {NAME} L1 bottom",
        f"| {NAME} L1 top",
    ]
    with pytest.raises(SystemExit):  # the option's choices are the task's Literal
        cli.main([*argv, "--halves", "left", "--dry-run"])
    assert "invalid choice: 'left'" in capsys.readouterr().err
    # a factor may not name an axis's parameter; the spec names an unknown value by the axis's label
    with pytest.raises(ValueError, match="own axes"):
        plan(MatrixSpec(models=["m"], families=[NAME], factors={"rows": ["top"]}))
    with pytest.raises(ValueError, match="unknown half left"):
        plan(MatrixSpec(models=["m"], families=[NAME], axes={"halves": ["left"]}))
    # each planned task counts its half: recounted here from the dataset's grids
    planned = plan(MatrixSpec(models=["m"], regimes=["L2"], families=[NAME], seeds=3), estimate=False)
    grids = [inst.final_grid() for inst in dataset.load(None, "L2")[:3]]
    halves = {"all": slice(0, 8), "top": slice(0, 4), "bottom": slice(4, 8)}
    for t in planned:
        half = t.task_args["rows"]
        assert t.axes == {"rows": half}
        counts = [s.metadata["holes"] for s in t.task.dataset][:3]
        assert counts == [sum(row.count(HOLE) for row in g[halves[half]]) for g in grids]
    assert sorted(t.task_args["rows"] for t in planned) == ["all", "bottom", "top"]


def test_a_registered_family_runs_in_the_matrix_and_has_a_report_section(
    toy_family: TaskFamily, tmp_path: Path
) -> None:
    spec = MatrixSpec(models=["mockllm/model"], regimes=["L1"], families=[NAME], seeds=4)
    done, _ = run_matrix(spec, tmp_path / "logs", display="none")
    assert done
    report = build_report(tmp_path / "logs", tmp_path / "report")
    holes = [sum(row.count(HOLE) for row in inst.final_grid()) for inst in dataset.load(None, "L1")[:4]]
    table = report.tables[f"{NAME}:summary"]
    assert table[["regime", "n"]].values.tolist() == [["L1", 4]]
    assert table["holes"].iloc[0] == pytest.approx(sum(holes) / 4)
    assert table["even"].iloc[0] == pytest.approx(sum(h % 2 == 0 for h in holes) / 4)
    text = report.markdown.read_text(encoding="utf-8")
    assert f"## Task `{NAME}`" in text and "4 toy_holes sample(s)" in text
    assert len(report.logset.records[NAME]) == 4


def toy_tables(records: Any) -> dict[str, tuple[str, Any]]:
    """The toy family's own report table: odd-hole samples per regime, from its records."""
    return {"parity": ("Toy: samples with an odd number of holes", odd_by_regime(records, {}))}


def odd_by_regime(records: Any, built: Any) -> Any:
    return records.assign(odd=1 - records["even"]).groupby("regime", as_index=False)["odd"].sum()


#: The same table in the report's fixed layout (``TaskFamily.layout_tables``): columns, title, note.
TOY_NOTE = "Odd: the samples whose final grid has an odd number of holes."
TOY_LAYOUT = {
    "toy_parity": ReportTable(
        title="Toy: odd-hole samples by regime",
        columns=[*labels("regime"), ("odd", "odd samples", integer)],
        build=odd_by_regime,
        missing="No toy logs.",
        note=TOY_NOTE,
    )
}


#: What the toy family's plot was handed, one entry a report: (its tables by key, its records).
TOY_PLOTTED: list[tuple[dict[str, Any], Any]] = []
TOY_PLOT = "toy_odd.png"


def toy_plot(tables: Any, records: Any, out_dir: Path) -> list[Path]:
    """The toy family's own plot: its odd-hole samples per regime as bars, from the
    table it is handed (whichever key it has: its section's or the fixed layout's)."""
    from spatialstale_evals.harness.report_plots import plt, save

    TOY_PLOTTED.append((dict(tables), records))
    (table,) = tables.values()
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.bar(table["regime"], table["odd"])
    return [save(fig, out_dir / TOY_PLOT)]


def shows_toy_plot(report: Any) -> bool:
    """The toy plot is among the report's plots, written as a PNG, and shown in its Markdown."""
    path = report.out_dir / TOY_PLOT
    return (
        path in report.plots
        and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        and f"![toy_odd]({TOY_PLOT})" in report.markdown.read_text(encoding="utf-8")
    )


def benchmark(name: str) -> ModuleType:
    """A script of ``benchmarks/`` as a module."""
    spec = importlib.util.spec_from_file_location(
        name, Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # a dataclass of the script looks its module up there
    spec.loader.exec_module(module)
    return module


def test_a_registered_metric_and_table_reach_the_log_the_plan_and_the_report(
    toy_family: TaskFamily, tmp_path: Path
) -> None:
    TOY_PLOTTED.clear()
    register_family(dataclasses.replace(toy_family, tables=toy_tables, plots=toy_plot))
    spec = MatrixSpec(models=["mockllm/model"], regimes=["L1"], families=[NAME], seeds=5)
    assert f"| {NAME} L1 | 5 |" in format_plan(spec, plan(spec))  # the dry run plans it
    done, _ = run_matrix(spec, tmp_path / "logs", display="none")
    assert done
    holes = [sum(row.count(HOLE) for row in inst.final_grid()) for inst in dataset.load(None, "L1")[:5]]
    odd = sum(h % 2 for h in holes)
    (log,) = [read_eval_log(p) for p in (tmp_path / "logs").rglob("*.eval")]
    assert log.results.scores[0].metrics["toy_odd_share"].value == pytest.approx(odd / 5)
    report = build_report(tmp_path / "logs", tmp_path / "report")
    table = report.tables[f"{NAME}:parity"]
    assert table[["regime", "odd"]].values.tolist() == [["L1", odd]]
    assert "Toy: samples with an odd number of holes" in report.markdown.read_text(encoding="utf-8")
    # its plot, drawn from its own section's table and its records
    assert shows_toy_plot(report)
    ((handed, records),) = TOY_PLOTTED
    assert list(handed) == ["parity"] and handed["parity"].equals(table) and len(records) == 5

    # the same table in the fixed layout, in a section of the family's own, with its columns and note
    register_family(
        dataclasses.replace(
            toy_family, layout_tables=TOY_LAYOUT, report_sections=(("Toy holes", ("toy_parity",)),), plots=toy_plot
        )
    )
    report = build_report(tmp_path / "logs", tmp_path / "report")
    text = report.markdown.read_text(encoding="utf-8")
    shown = (
        f"## Toy holes\n\n### Toy: odd-hole samples by regime\n\n| regime | odd samples |\n|---|---|\n| L1 | {odd} |"
    )
    assert f"{shown}\n\n{TOY_NOTE}\n" in text
    # after the suite's families' sections (in registration order), before the shared statistics
    assert text.index("## Probes") < text.index("## Toy holes") < text.index("## Statistics")
    assert f"## Task `{NAME}`" not in text
    # its plot, now drawn from its table of the fixed layout
    assert shows_toy_plot(report)
    assert list(TOY_PLOTTED[-1][0]) == ["toy_parity"] and TOY_PLOTTED[-1][0]["toy_parity"]["odd"].tolist() == [odd]


def test_a_registered_example_reaches_the_example_report_and_the_screenshots(
    toy_family: TaskFamily, tmp_path: Path
) -> None:
    """The example report and the screenshots loop over the families' examples
    (``TaskFamily.example``): a family that names one is run by both, with no edit to them."""
    example = Example(models=("mockllm/model",), view_model="mockllm/model", view_args={"regime": "L2"})
    register_family(dataclasses.replace(toy_family, example=example))
    script = benchmark("example_report")
    assert NAME in script.example_families()
    script.run(tmp_path / "logs", seeds=2, epochs=1, names=[NAME])
    logs = [read_eval_log(p) for p in (tmp_path / "logs" / NAME).rglob("*.eval")]
    # the run matrix's default regimes, the family's own matrix arguments, two seeds each
    ran = sorted((log.eval.model, log.eval.task_args.get("regime"), len(log.samples)) for log in logs)
    assert ran == [("mockllm/model", regime, 2) for regime in sorted(MatrixSpec(models=["m"]).regimes)]
    shots = benchmark("view_screenshots")
    assert NAME in shots.shots()
    (shot,) = shots.run_tasks(tmp_path / "view", samples=3, only=[NAME]).values()
    assert (shot.eval.model, shot.eval.task_args.get("regime"), len(shot.samples)) == ("mockllm/model", "L2", 3)


def test_unregistering_leaves_the_suite_as_it_was() -> None:
    from spatialstale_evals.runs.axes import matrix_axes

    assert NAME not in families()
    assert list(matrix_axes()) == ["modalities", "strategies", "nav_modalities"]
    assert list(families())[:4] == ["detect", "navigate", "probe", "stale"]


def test_the_lifelong_family_has_its_report_section(tmp_path: Path) -> None:
    """The lifelong task's own tables reach the report through its registry entry,
    grouped by model, configuration and regime; the success rate is recounted here
    from the episodes each sample's score lists."""
    from inspect_ai import eval as inspect_eval

    from spatialstale_evals.lifelong import lifelong

    [log] = inspect_eval(
        lifelong(regime="L1", episodes=2),
        model="spatialstale/diligent",
        limit=2,
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    episodes = [e for s in log.samples for e in s.scores["lifelong_scorer"].metadata["episodes"]]
    report = build_report(tmp_path / "logs", tmp_path / "report")
    summary = report.tables["lifelong:summary"]
    assert summary[["model", "config", "regime", "lifetimes"]].values.tolist() == [
        ["spatialstale/diligent", "episodes=2", "L1", 2]
    ]
    assert summary["episode_success_rate"].iloc[0] == pytest.approx(
        sum(e["outcome"] == "success" for e in episodes) / len(episodes)
    )
    assert "## Task `lifelong`" in report.markdown.read_text(encoding="utf-8")


def test_the_fixed_layout_is_the_families_sections_then_the_shared_ones() -> None:
    """Every table the report lays out (``analysis/layout.py``) but the list of
    logs is shown in exactly one section: a family's (its registry entry) or
    one the report keeps for tables that read several families."""
    from spatialstale_evals.analysis.layout import specs, titles
    from spatialstale_evals.analysis.report import SHARED_SECTIONS

    sections = [s for f in families().values() for s in f.report_sections] + list(SHARED_SECTIONS)
    shown = [name for _, names in sections for name in names]
    assert sorted(shown) == sorted(set(specs()) - {"inputs"}) and set(shown) <= set(titles())
    # a family's sections hold its own tables (``layout_tables``) and shared ones, which read several families
    own = {name for f in families().values() for name in f.layout_tables}
    assert own == {"detection", "modality", "direction", "navigation", "gain", "steps", "probe", "stale"} | {
        "navigate_access",
        "stale_access",
    }
    # the paper's order: detection first, the shared statistics last
    assert sections[0][0] == "Detection" and sections[-1][0] == "Statistics"
    assert {name for name, f in families().items() if f.in_report_layout} == {"detect", "navigate", "probe", "stale"}
    assert families()["navigate"].unit == "episode" and families()["lifelong"].unit == "sample"
