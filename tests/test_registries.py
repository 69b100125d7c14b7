"""One place per concept: a strategy and a regime registered from this test
module (no package file touched) run through the tasks end to end; the
vocabularies and defaults the CLI and the report use are the task
signatures'; a misspelled task parameter is an error; the world loads no
Inspect."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
import typing
from pathlib import Path

import pytest
from _builtins import BUILTIN_REGIMES, BUILTIN_STRATEGIES
from _warm import WarmPython
from inspect_ai import eval as inspect_eval
from inspect_ai.log import resolve_sample_attachments

from spatialstale_evals import cli, paper
from spatialstale_evals.analysis.logs import DEFAULT_ARGS
from spatialstale_evals.detect import detect
from spatialstale_evals.harness import prompts
from spatialstale_evals.harness.observe import OBSERVATIONS
from spatialstale_evals.navigate import navigate
from spatialstale_evals.navigation import strategies
from spatialstale_evals.navigation.cost import step_prompt_tokens
from spatialstale_evals.navigation.strategies import STRATEGIES, JudgeRequest, MemoryPolicy, Verdict
from spatialstale_evals.runs.cost import estimate_cost, task_settings
from spatialstale_evals.runs.matrix import MatrixSpec
from spatialstale_evals.world import dataset, regimes
from spatialstale_evals.world.grid import flip_cells, has_path, mutable_cells
from spatialstale_evals.world.regimes import REGIMES, Event, Regime
from spatialstale_evals.world.render import MARKER_SHAPES, PALETTES

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "spatialstale_evals" / "data" / "spatialstale-v1"


def _rows(regime: str) -> list[dict]:
    return [json.loads(line) for line in (DATA / f"{regime}.jsonl").read_text(encoding="utf-8").splitlines()]


# -- a toy strategy ------------------------------------------------------------------


class ForgetDangers(MemoryPolicy):
    """Shows only SAFE claims: drops every DANGER entry before the first step."""

    name = "toy_forget_dangers"
    summary = "every DANGER entry removed before the first step"

    removes_entries = True

    def judges(self, moment, instance, epoch) -> bool:
        return moment == "start"

    async def judge(self, request: JudgeRequest) -> Verdict:
        return Verdict({e.id: "contradicted" for e in request.instance.memory if e.claim == "DANGER"})


@pytest.fixture
def toy_strategy():
    strategies.register_strategy(ForgetDangers)
    yield ForgetDangers.name
    del STRATEGIES[ForgetDangers.name]


def test_a_strategy_registered_outside_the_package_runs_end_to_end(tmp_path: Path, toy_strategy: str) -> None:
    (log,) = inspect_eval(
        navigate(regime="L1", strategy=toy_strategy, epochs=1),
        model="spatialstale/memory",
        log_dir=str(tmp_path),
        limit=3,
        display="none",
    )
    assert log.status == "success" and log.eval.task_args["strategy"] == toy_strategy
    rows = {row["id"]: row for row in _rows("L1")}
    for sample in log.samples:
        sample, row = resolve_sample_attachments(sample, "full"), rows[sample.id]
        dangers = sorted(m["id"] for m in row["memory"] if m["claim"] == "DANGER")
        record = sample.scores["navigation_scorer"].metadata
        assert [a["removed"] for a in record["audits"]] == [dangers]
        assert record["view_size"] == 64 - len(dangers)
        prompts = [e.input[-1].text for e in sample.events if e.event == "model"]
        assert prompts and all("DANGER at" not in p and f"Memory notes ({64 - len(dangers)}):" in p for p in prompts)
    # the run matrix asks the same policy: it makes no model call, so it costs steps only,
    # each step's prompt holding the view the policy leaves
    instances = dataset.load(None, "L1")[:3]
    low, high = estimate_cost("navigate", instances, epochs=1, strategy=toy_strategy, modality="text", batch_size=10)
    assert (low.calls, high.calls) == (sum(low_steps(r) for r in _rows("L1")[:3]), 3 * 50)
    for inst in instances:
        sample = next(s for s in log.samples if s.id == inst.id)
        first = next(e for e in sample.events if e.event == "model")
        assert (
            step_prompt_tokens(inst, task_settings("navigate", strategy=toy_strategy))
            == first.output.usage.input_tokens
        )


def low_steps(row: dict) -> int:
    """Steps of a shortest S->G path on the instance's grid (a BFS written here)."""
    grid, (h, w) = row["grid"], (row["height"], row["width"])
    seen, frontier, steps = {(0, 0)}, [(0, 0)], 0
    while (h - 1, w - 1) not in seen:
        frontier = [
            (r + dr, c + dc)
            for r, c in frontier
            for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1))
            if 0 <= r + dr < h and 0 <= c + dc < w and grid[r + dr][c + dc] != "H"
        ]
        frontier = [p for p in dict.fromkeys(frontier) if p not in seen]
        seen.update(frontier)
        steps += 1
    return steps


# -- a toy regime --------------------------------------------------------------------


def _toy_draw(g0, rng, budget):
    """One event at step 3 flipping the two first mutable cells (in a random
    order) that keep a path: an online regime of its own."""
    cells = mutable_cells(g0)
    order = [cells[i] for i in rng.permutation(len(cells))]
    picked = []
    for cell in order:
        if has_path(flip_cells(g0, [*picked, cell])):
            picked.append(cell)
        if len(picked) == 2:
            break
    return g0, (Event(step=3, cells=tuple(picked)),)


@pytest.fixture
def toy_regime():
    regime = Regime("T9", "toy: two cells flip at step 3", stream=99, draw=_toy_draw, windows=regimes.after_each_event)
    regimes.register_regime(regime)
    yield regime.name
    del REGIMES[regime.name]


def test_a_regime_registered_outside_the_package_runs_end_to_end(tmp_path: Path, toy_regime: str) -> None:
    folder = dataset.write(tmp_path / "set", count=3)
    assert (folder / "T9.jsonl").exists() and dataset.verify(folder)["T9.jsonl"] == 3
    rows = [json.loads(line) for line in (folder / "T9.jsonl").read_text(encoding="utf-8").splitlines()]
    l1 = [json.loads(line) for line in (folder / "L1.jsonl").read_text(encoding="utf-8").splitlines()]
    for row, paired in zip(rows, l1):
        assert row["id"].startswith("T9-") and row["g0"] == paired["g0"] and row["memory"] == paired["memory"]
        assert row["grid"] == row["g0"] and [e["step"] for e in row["events"]] == [3]
    det, nav = inspect_eval(
        [
            detect(regime=toy_regime, dataset=str(folder)),
            navigate(regime=toy_regime, strategy="oracle", dataset=str(folder), epochs=1),
        ],
        model="spatialstale/observer",
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert det.status == nav.status == "success"
    for sample in det.samples:
        value = sample.scores["detection_scorer"].metadata["counts"]
        assert value["windows"] == 1 and value["tp"] == 2 and value["fp"] == value["fn"] == 0
    by_id = {row["id"]: row for row in rows}
    for sample in nav.samples:
        row = by_id[sample.id]
        # no window before the first step; the one after the event: the oracle judges there only
        record = sample.scores["navigation_scorer"].metadata
        flipped = sorted(f"mem_{r * 8 + c:03d}" for r, c in row["events"][0]["cells"])
        assert [(a["reason"], a["removed"]) for a in record["audits"]] == [("event at step 3", flipped)]


def _before_and_during(g0, rng, budget):
    """L1's pre-game changes, and one more flip at step 3 that no window audits."""
    grid, (event,) = regimes.l1_changes(g0, rng), _toy_draw(g0, rng, budget)[1]
    cells = tuple(c for c in event.cells if has_path(flip_cells(grid, [c])))[:1]
    return grid, (Event(step=3, cells=cells),)


def test_the_window_rule_decides_when_strategies_judge(tmp_path: Path) -> None:
    """A regime with pre-game changes and an event, audited before navigation
    only: omcd and the oracle judge once, as detect has one window."""
    regimes.register_regime(Regime("T7", "pre-game + one event", stream=97, draw=_before_and_during))
    try:
        folder = dataset.write(tmp_path / "set", count=2)
        logs = inspect_eval(
            [
                detect(regime="T7", dataset=str(folder)),
                *(navigate(regime="T7", strategy=s, dataset=str(folder), epochs=1) for s in ("omcd", "oracle")),
            ],
            model="spatialstale/observer",
            log_dir=str(tmp_path / "logs"),
            display="none",
        )
        assert all(log.status == "success" for log in logs)
        assert all(s.scores["detection_scorer"].metadata["counts"]["windows"] == 1 for s in logs[0].samples)
        for log in logs[1:]:
            for sample in log.samples:
                record = sample.scores["navigation_scorer"].metadata
                assert record["events_realized"] and [a["reason"] for a in record["audits"]] == ["start"]
    finally:
        del REGIMES["T7"]


def test_registering_a_taken_name_or_stream_is_an_error(toy_regime: str) -> None:
    with pytest.raises(regimes.RegimeError, match="already registered"):
        regimes.register_regime(Regime(toy_regime, "", stream=98, draw=_toy_draw))
    with pytest.raises(regimes.RegimeError, match="stream 12 is taken"):
        regimes.register_regime(Regime("T8", "", stream=12, draw=_toy_draw))
    with pytest.raises(regimes.RegimeError, match="stream 2 is taken \\(by the distractor notes\\)"):
        regimes.register_regime(Regime("T8", "", stream=2, draw=_toy_draw))
    with pytest.raises(ValueError, match="already registered"):
        strategies.register_strategy(type("Again", (MemoryPolicy,), {"name": "omcd", "summary": ""}))


# -- vocabularies and defaults come from the task signatures -----------------------


def _hints(task) -> dict:
    return typing.get_type_hints(inspect.unwrap(task))


def test_the_literals_name_exactly_the_registered_builtins() -> None:
    """The package's own entries (``_builtins``: the registries before any test
    module added one); an entry registered from outside is reachable by name
    (the toy tests above) without being one of the Literal's."""
    assert typing.get_args(_hints(navigate)["regime"]) == BUILTIN_REGIMES
    assert typing.get_args(_hints(detect)["regime"]) == BUILTIN_REGIMES
    assert typing.get_args(_hints(navigate)["strategy"]) == BUILTIN_STRATEGIES
    assert tuple(REGIMES)[: len(BUILTIN_REGIMES)] == BUILTIN_REGIMES  # the package registers first
    assert tuple(STRATEGIES)[: len(BUILTIN_STRATEGIES)] == BUILTIN_STRATEGIES
    assert typing.get_args(_hints(navigate)["modality"]) == tuple(OBSERVATIONS)
    # the factor levels with a table behind them: one entry per level, in the Literal's order
    assert typing.get_args(_hints(navigate)["memory_framing"]) == tuple(prompts.FRAMINGS)
    assert typing.get_args(_hints(navigate)["image_palette"]) == tuple(PALETTES)
    assert typing.get_args(_hints(detect)["image_palette"]) == tuple(PALETTES)
    assert typing.get_args(_hints(detect)["image_marker"]) == tuple(MARKER_SHAPES)
    assert typing.get_args(_hints(detect)["memory_style"]) == tuple(prompts.STYLE_SUFFIXES)


#: The strategies the paper ran (specification.md#navigate).
PAPER_STRATEGIES = ["no_memory", "no_filter", "self_verify", "omcd", "oracle"]


def _matrix_actions() -> dict:
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")  # noqa: SLF001 - argparse has no public API for this
    return {a.dest: a for a in sub.choices["matrix"]._actions}  # noqa: SLF001


def test_the_matrix_cli_choices_and_defaults_are_the_task_signatures() -> None:
    actions = _matrix_actions()
    nav, det = _hints(navigate), _hints(detect)
    assert tuple(actions["regimes"].choices) == typing.get_args(nav["regime"])
    assert tuple(actions["strategies"].choices) == typing.get_args(nav["strategy"])
    # the default matrix is the paper's (specification.md#change-regimes, #navigate):
    # of the package's own entries, its three regimes
    # and five strategies; an entry a test module registers may join only if it says the paper ran it
    regimes_default, strategies_default = actions["regimes"].default, actions["strategies"].default
    assert [r for r in regimes_default if r in BUILTIN_REGIMES] == ["L1", "L2", "L3"] == list(paper.TABLE1)
    assert [s for s in strategies_default if s in BUILTIN_STRATEGIES] == PAPER_STRATEGIES
    assert all(REGIMES[r].table1 is not None for r in regimes_default)
    assert all(STRATEGIES[s].paper for s in strategies_default)
    assert tuple(actions["modalities"].choices) == typing.get_args(det["modality"])
    signature = inspect.signature(navigate).parameters
    assert actions["epochs"].default == signature["epochs"].default == MatrixSpec(models=["m"]).epochs
    assert actions["batch_size"].default == signature["batch_size"].default == MatrixSpec(models=["m"]).batch_size


def test_the_reports_defaults_are_the_papers_protocol() -> None:
    """A log whose arguments equal these is labelled as the paper's protocol (specification.md#tasks)."""
    assert {k: DEFAULT_ARGS["detect"][k] for k in ("batch_size", "output", "threshold", "dataset")} == {
        "batch_size": 10,
        "output": "binary",
        "threshold": 0.7,
        "dataset": None,
    }
    nav = DEFAULT_ARGS["navigate"]
    assert (nav["batch_size"], nav["epochs"], nav["history"], nav["view_radius"], nav["filter_mode"]) == (
        10,
        5,
        0,
        None,
        "delete",
    )


# -- misspelled parameters ---------------------------------------------------------------


@pytest.mark.parametrize("task", [detect, navigate])
def test_a_misspelled_task_parameter_is_an_error_listing_the_real_ones(task) -> None:
    with pytest.raises(ValueError) as caught:
        task(view_radus=2)
    message = str(caught.value)
    assert "unknown task parameter(s) view_radus" in message
    assert all(name in message for name in inspect.signature(task).parameters if name != "unknown")


def test_a_misspelled_parameter_fails_the_run_through_inspect(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="view_radus"):
        inspect_eval(
            "spatialstale_evals/navigate",
            task_args={"view_radus": 2},
            model="spatialstale/observer",
            log_dir=str(tmp_path),
            display="none",
        )
    assert not list(tmp_path.glob("*.eval")), "no model was called, no log was written"


# -- imports -----------------------------------------------------------------------------


def test_the_world_loads_no_inspect() -> None:
    code = (
        "import sys; import spatialstale_evals.world; import spatialstale_evals.world.dataset; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'inspect_ai'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_package_exports_the_task_functions_however_it_is_imported(warm_python: WarmPython) -> None:
    """In a fresh interpreter (a fork of the session's warm one, which imported nothing of the package)."""
    code = (
        "import importlib, spatialstale_evals as p; "
        "importlib.import_module('spatialstale_evals.navigate'); "  # what Inspect's registry does
        "from spatialstale_evals import detect, navigate; "
        "print(callable(detect) and callable(navigate), type(p.navigate).__name__, "
        "type(importlib.import_module('spatialstale_evals.navigate')).__name__)"
    )
    out = warm_python.run([sys.executable, "-c", code], check=True)
    assert out.stdout.split() == ["True", "function", "module"]


def test_a_task_module_that_fails_to_import_shows_its_error_not_an_unknown_provider(
    tmp_path: Path, warm_python: WarmPython
) -> None:
    """Below the declared minimum of inspect-ai (no ``inspect_ai.scorer.aggregate``,
    simulated here by removing it), ``--model spatialstale/...`` must show that
    import error: the providers register before the task modules import (in a
    fresh interpreter: a fork of the session's warm one, which imported Inspect
    and nothing of the package)."""
    code = (
        "import inspect_ai.scorer as s; del s.aggregate\n"
        "from inspect_ai.model import get_model\n"
        "get_model('spatialstale/observer')\n"
    )
    out = warm_python.run([sys.executable, "-c", code], cwd=tmp_path, timeout=300)
    assert out.returncode != 0
    assert "cannot import name 'aggregate'" in out.stderr, out.stderr[-2000:]
    assert "not recognized" not in out.stderr
