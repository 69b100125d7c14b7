"""The lifelong task in the report: its plot of SPL and ``note_balanced`` by
episode, and its row of the trust-gap view (hazard claims acted on).

One scripted run serves both: ``write_once`` starting from the paper's notes
(``initial_memory=paper``: it finds notes, so it never writes, and its notes
stay the instance's entries all lifetime) with no view beyond its own cell
(``view_radius=0``: it plans through its notes, so it walks into the holes
they call SAFE). Every expected value is computed here from the lifetime data
(the lakes and the instance's entries) and the trajectories recorded in the
samples (``tests/_lifetime_truth.py``), never from the harness's note scores.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import pytest
from _lifetime_truth import balanced, knowable_by_episode, spl_and_excess, told_counts
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog

import spatialstale_evals._registry  # noqa: F401 - registers spatialstale/<agent>
from spatialstale_evals.analysis.report import build_report
from spatialstale_evals.lifelong import lifelong
from spatialstale_evals.lifetime import plots
from spatialstale_evals.lifetime.notes import Notes
from spatialstale_evals.lifetime.records import hazard_acted_on
from spatialstale_evals.world import lifetimes
from spatialstale_evals.world.dataset import load as load_instances

REGIME, EPISODES, LIMIT = "L1", 2, 3
COUNTS = ("n", "success", "true", "claims", "hazards", "acted", "deaths")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[EvalLog, Any]:
    logs = tmp_path_factory.mktemp("lifelong_logs")
    task = lifelong(regime=REGIME, episodes=EPISODES, view_radius=0, initial_memory="paper")
    (log,) = inspect_eval(task, model="spatialstale/write_once", limit=LIMIT, display="none", log_dir=str(logs))
    assert log.status == "success" and all(s.error is None for s in log.samples)
    return log, build_report(logs, tmp_path_factory.mktemp("lifelong_report"))


def _episodes(log: EvalLog) -> list[tuple[str, dict[str, Any]]]:
    return [(str(s.id), r) for s in log.samples for r in s.scores["lifelong_scorer"].metadata["episodes"]]


def _paper_claims(sample_id: str) -> set[tuple[tuple[int, int], str]]:
    """The instance's entries as (cell, SAFE/HOLE) pairs, read from the dataset."""
    (instance,) = [i for i in load_instances(None, REGIME) if i.id == sample_id]
    return {((e.row, e.col), "SAFE" if e.claim == "SAFE" else "HOLE") for e in instance.memory if e.row >= 0}


def _expected(log: EvalLog) -> dict[int, dict[str, float]]:
    """Per episode index: success rate, SPL, the knowable cells told right by
    class, note accuracy, hazard claims, hazards acted on and deaths, from the
    lakes, the entries and the trajectories."""
    lives = {life.id: life for life in lifetimes.load(None, REGIME)}
    out: dict[int, dict[str, Any]] = {}
    for sample in log.samples:
        recs = sample.scores["lifelong_scorer"].metadata["episodes"]
        for record, knowable in zip(recs, knowable_by_episode(lives[str(sample.id)], recs, radius=0)):
            record["_knowable"] = knowable
    for sample_id, record in _episodes(log):
        world = lives[sample_id].episodes[record["episode"] - 1]
        grid = world.grid
        goal = (len(grid) - 1, len(grid[0]) - 1)
        claims = _paper_claims(sample_id)
        true = sum((grid[r][c] == "H") == (claim == "HOLE") for (r, c), claim in claims)
        hazards = {cell for cell, claim in claims if claim == "SAFE" and grid[cell[0]][cell[1]] == "H"}
        last = tuple(record["trajectory"][-1])
        died = grid[last[0]][last[1]] == "H"  # L1 changes nothing inside an episode
        k = out.setdefault(record["episode"], dict.fromkeys(COUNTS, 0) | {"spl": 0.0, "told": []})
        k["n"] += 1
        k["spl"] += spl_and_excess(world, record)[0]
        told = {cell: {claim for c, claim in claims if c == cell} for cell, _ in claims}
        k["told"].append(told_counts(grid, record.pop("_knowable"), told))
        k["success"] += last == goal
        k["true"] += true
        k["claims"] += len(claims)
        k["hazards"] += len(hazards)
        k["acted"] += died and last in hazards
        k["deaths"] += died
    return out


def _same(a: list[float], b: list[float]) -> bool:
    return len(a) == len(b) and all((math.isnan(x) and math.isnan(y)) or x == pytest.approx(y) for x, y in zip(a, b))


def test_the_report_plots_spl_and_note_balanced_against_the_episode_index(run):
    log, report = run
    expected = _expected(log)
    path = report.out_dir / plots.FILE
    assert path in report.plots and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"]({plots.FILE})" in report.markdown.read_text(encoding="utf-8")
    own = {key.split(":", 1)[1]: t for key, t in report.tables.items() if key.startswith("lifelong:")}
    fig = plots.draw(plots.curves(own))
    try:
        lines = {line.get_label(): line for ax in fig.axes for line in ax.get_lines()}
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)
    spl = [k["spl"] / k["n"] for _, k in sorted(expected.items())]
    notes = [balanced(k["told"]) for _, k in sorted(expected.items())]
    assert math.isnan(notes[0]) and 0 < notes[1] < 1 and 0 < spl[0] < 1  # nothing knowable in episode 1
    (s_label,) = [label for label in lines if label.endswith(": SPL")]
    (a_label,) = [label for label in lines if label.endswith(": note_balanced")]
    assert list(lines[s_label].get_xdata()) == list(lines[a_label].get_xdata()) == sorted(expected)
    assert _same(list(lines[s_label].get_ydata()), spl)
    assert _same(list(lines[a_label].get_ydata()), notes)


def test_the_trust_gap_view_has_the_lifelong_row_of_hazard_claims_acted_on(run):
    log, report = run
    expected = _expected(log)
    table = report.tables["acted_on"]
    (row,) = table[table["task"] == "lifelong"].to_dict("records")
    hazards = sum(k["hazards"] for k in expected.values())
    acted = sum(k["acted"] for k in expected.values())
    deaths = sum(k["deaths"] for k in expected.values())
    assert acted > 0 and hazards > acted  # both counts are exercised
    assert (row["regime"], row["samples"], row["episodes"]) == (REGIME, LIMIT, LIMIT * EPISODES)
    assert (row["hazard_claims"], row["acted_on"], row["deaths"]) == (hazards, acted, deaths)
    assert row["acted_on_rate"] == pytest.approx(acted / hazards)
    assert row["death_on_hazard"] == pytest.approx(acted / deaths)
    assert "hazard claims acted on" in report.rendered["acted_on"] or "acted on" in report.rendered["acted_on"]
    summary = report.tables["lifelong:summary"].iloc[0]
    assert summary["acted_on_rate"] == pytest.approx(acted / hazards)


def test_a_hazard_claim_is_acted_on_only_by_a_death_in_a_hole_the_notes_called_safe():
    grid = ("SFFF", "FHFF", "FFHF", "FFFG")
    notes = Notes(claims={(1, 1): {"SAFE"}, (2, 2): {"HOLE"}, (0, 1): {"SAFE"}, (2, 1): {"SAFE", "HOLE"}})
    assert hazard_acted_on(notes, grid, (1, 1))  # SAFE note on a hole, walked into
    assert not hazard_acted_on(notes, grid, (2, 2))  # the note said hole: ignored, not trusted
    assert not hazard_acted_on(notes, grid, None)  # no death
    assert not hazard_acted_on(Notes(), grid, (1, 1))  # no note
    # a cell that was ice at the start (its SAFE note true then) and thawed during the episode
    assert not hazard_acted_on(notes, grid, (0, 1))
    assert hazard_acted_on(notes, ("SFFF", "FHFF", "FHHF", "FFFG"), (2, 1))  # claimed both ways, SAFE among them


def test_equal_lines_stay_visible():
    """Two agents with the same success by episode: each its own marker, set
    apart sideways, so neither line hides the other."""
    curve = plots.CURVES[0][1]
    points = pd.DataFrame(
        [{"regime": "L1", "series": name, "curve": curve, "episode": e, "value": 0.5} for name in ("a", "b")
         for e in (1, 2, 3)]
    )  # fmt: skip
    fig = plots.draw(points)
    try:
        lines = {line.get_label(): line for ax in fig.axes for line in ax.get_lines()}
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)
    a, b = lines[f"a: {curve}"], lines[f"b: {curve}"]
    assert a.get_marker() != b.get_marker()
    assert all(xa < xb for xa, xb in zip(a.get_xdata(), b.get_xdata()))
    assert [round(x) for x in a.get_xdata()] == [round(x) for x in b.get_xdata()] == [1, 2, 3]
