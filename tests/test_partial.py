"""Memory that matters (specification.md#partial-observation, #clean-memory-l0,
#the-runtime-resolver-and-filter-modes): partial observability, the clean regime
L0, the runtime resolver and the filter modes, each checked against a
simulation written here from the dataset and the specification."""

from __future__ import annotations

import io
import json
import math
from collections import deque
from pathlib import Path

import numpy as np
import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, resolve_sample_attachments
from PIL import Image

from spatialstale_evals.navigate import navigate
from spatialstale_evals.world import dataset
from spatialstale_evals.world.observation import text_observation, visible_grid
from spatialstale_evals.world.render import render_png

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "spatialstale_evals" / "data" / "spatialstale-v1"
FOG = (0x80, 0x80, 0x80)
PAPER = {"F": (0xA8, 0xC8, 0xE8), "H": (0x20, 0x20, 0x20), "S": (0x2E, 0x8B, 0x57), "G": (0xDA, 0xA5, 0x20)}
MOVES = {"UP": (-1, 0), "DOWN": (1, 0), "LEFT": (0, -1), "RIGHT": (0, 1)}


def rows(regime: str) -> dict[str, dict]:
    lines = (DATA / f"{regime}.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["id"]: r for r in map(json.loads, lines)}


def flip(grid: list[str], cells) -> list[str]:
    out = [list(row) for row in grid]
    for r, c in cells:
        out[r][c] = "H" if out[r][c] == "F" else "F"
    return ["".join(row) for row in out]


def grid_after(row: dict, step: int) -> list[str]:
    """The world after ``step`` moves: the pre-game grid plus every event at or before it."""
    grid = list(row["grid"])
    for event in row["events"]:
        if event["step"] <= step:
            grid = flip(grid, event["cells"])
    return grid


def seen(agent, cell, r) -> bool:
    return r is None or max(abs(agent[0] - cell[0]), abs(agent[1] - cell[1])) <= r


def run(tmp_path: Path, model: str, limit: int = 4, **args) -> EvalLog:
    (log,) = inspect_eval(navigate(epochs=1, **args), model=model, log_dir=str(tmp_path), limit=limit, display="none",
                          log_realtime=False)  # fmt: skip
    assert log.status == "success", log.error
    return log


def step_prompts(sample) -> list[str]:
    """The navigator's user prompt of every step (text modality)."""
    s = resolve_sample_attachments(sample, "full")
    return [e.input[-1].text for e in s.events if e.event == "model" and e.tools]


def memory_lines(prompt: str) -> list[str]:
    if not prompt.startswith("Memory notes"):
        return []
    block = prompt.split("\n\n", 1)[0] if "\n\n" in prompt else prompt
    return [line for line in block.splitlines()[1:] if line.startswith("[")]


def memory_section(prompt: str) -> list[str]:
    lines = prompt.splitlines()
    return [line for line in lines if line.startswith("[mem_")]


def positions(record: dict) -> list[tuple[int, int]]:
    return [tuple(p) for p in record["trajectory"]]


# -- the observation ------------------------------------------------------------------


@pytest.mark.parametrize("radius", [0, 1, 2, 3])
def test_text_observation_shows_exactly_the_window(radius: int) -> None:
    row = rows("L2")["L2-004"]
    for agent in [(0, 0), (3, 4), (7, 7), (6, 1)]:
        text = text_observation(visible_grid(row["grid"], agent, radius), agent)
        lines = text.splitlines()
        assert lines[-1] == f"Agent at ({agent[0]},{agent[1]}). Goal at (7,7)."
        for r in range(8):
            cells = lines[r].removeprefix(f"Row {r}: ").split(" ")
            expected = [f"({r},{c})={row['grid'][r][c] if seen(agent, (r, c), radius) else '?'}" for c in range(8)]
            assert cells == expected


def test_image_fog_grey_with_labels_and_paper_colours_in_view() -> None:
    row = rows("L1")["L1-002"]
    agent, radius = (4, 3), 1
    img = np.asarray(Image.open(io.BytesIO(render_png(visible_grid(row["grid"], agent, radius), agent))).convert("RGB"))
    for r in range(8):
        for c in range(8):
            centre_right = tuple(int(v) for v in img[r * 48 + 24, c * 48 + 42])
            label = img[r * 48 + 2 : r * 48 + 12, c * 48 + 3 : c * 48 + 30]
            if seen(agent, (r, c), radius):
                assert centre_right == PAPER[row["grid"][r][c]], (r, c)
            else:
                assert centre_right == FOG, (r, c)
                assert (label == 0).all(axis=-1).any(), f"fog cell ({r},{c}) keeps its coordinate label"
    full = np.asarray(Image.open(io.BytesIO(render_png(tuple(row["grid"]), agent))).convert("RGB"))
    assert not (full == FOG).all(axis=-1).any(), "no fog under full observability"


def test_a_radius_covering_the_grid_sends_the_prompts_of_full_observability(tmp_path: Path) -> None:
    full = run(tmp_path / "full", "spatialstale/memory", regime="L3", strategy="omcd")
    wide = run(tmp_path / "wide", "spatialstale/memory", regime="L3", strategy="omcd", view_radius=7)
    narrow = run(tmp_path / "narrow", "spatialstale/memory", regime="L3", strategy="omcd", view_radius=6)
    for a, b, c in zip(full.samples, wide.samples, narrow.samples):
        ia = [e.input for e in resolve_sample_attachments(a, "full").events if e.event == "model"]
        ib = [e.input for e in resolve_sample_attachments(b, "full").events if e.event == "model"]
        assert [[m.model_dump(exclude={"id"}) for m in x] for x in ia] == [
            [m.model_dump(exclude={"id"}) for m in x] for x in ib
        ]
        assert any("?" in p for p in step_prompts(c)), "a radius of 6 does not cover 8x8 from the corner"


# -- the runtime resolver --------------------------------------------------------------


def expected_view(row: dict, ledger: dict, since: dict, mode: str = "delete") -> list[str]:
    """The resolver's view from its ledger (cell -> (type, step)), by the resolver's rule;
    ``since`` keeps, per entry, the step of the first sighting that contradicted
    it (while it stays contradicted): the ``history`` label's step."""
    out = []
    for m in row["memory"]:
        sighting = ledger.get((m["row"], m["col"]))
        if sighting is None:
            out.append(m["text"] + " [unverified: written before this episode, its cell not seen since]")
        elif (m["claim"] == "DANGER") != (sighting[0] == "H"):
            since.setdefault(m["id"], sighting[1])
            if mode == "history":
                out.append(m["text"] + f" [out of date: contradicted by what was seen at step {since[m['id']]}]")
        else:
            since.pop(m["id"], None)
            out.append(m["text"])
    return out


@pytest.mark.parametrize("regime", ["L1", "L2", "L3"])
def test_resolve_equals_oracle_step_by_step_under_full_observability(tmp_path: Path, regime: str) -> None:
    resolve = run(tmp_path / "r", "spatialstale/observer", regime=regime, strategy="resolve")
    oracle = run(tmp_path / "o", "spatialstale/observer", regime=regime, strategy="oracle")
    data = rows(regime)
    for a, b in zip(resolve.samples, oracle.samples):
        pa, pb = step_prompts(a), step_prompts(b)
        assert len(pa) == len(pb) > 0
        for step, (x, y) in enumerate(zip(pa, pb)):
            assert memory_section(x) == memory_section(y), (a.id, step)
            # and both are the store minus what is stale now (the specification's definition, from the data)
            grid = grid_after(data[a.id], step)
            valid = [
                m["text"] for m in data[a.id]["memory"] if (m["claim"] == "DANGER") == (grid[m["row"]][m["col"]] == "H")
            ]
            assert memory_section(x) == valid, (a.id, step)


def test_resolve_under_radius_one_knows_only_what_was_seen(tmp_path: Path) -> None:
    for mode in ("delete", "history"):
        log = run(
            tmp_path / mode, "spatialstale/mixed", regime="L3", strategy="resolve", view_radius=1, filter_mode=mode
        )
        data = rows("L3")
        changed_any = False
        for sample in log.samples:
            row, record = data[sample.id], sample.scores["navigation_scorer"].metadata
            ledger: dict = {}
            since: dict = {}
            for step, (prompt, agent) in enumerate(zip(step_prompts(sample), positions(record))):
                grid = grid_after(row, step)
                for r in range(8):
                    for c in range(8):
                        if seen(agent, (r, c), 1):
                            ledger[(r, c)] = (grid[r][c], step)
                assert memory_section(prompt) == expected_view(row, ledger, since, mode), (sample.id, step)
            changed_any |= bool(record.get("resolutions"))
        assert changed_any, "some entry was resolved as contradicted"


# -- the memory-only agent and the audits under partial observability -----------------


def memory_agent_outcome(row: dict) -> tuple[str, int]:
    """The memory agent by its description in docs/models.md, simulated here: plan a
    shortest route (BFS, ties UP, DOWN, LEFT, RIGHT) through cells its memory
    calls SAFE to the goal; re-plan every step; with no route, bump a wall
    (stay put)."""
    safe = {(m["row"], m["col"]) for m in row["memory"] if m["claim"] == "SAFE"}
    pos = (0, 0)
    for step in range(1, row["max_steps"] + 1):
        prev, queue = {pos: None}, deque([pos])
        while queue:
            cur = queue.popleft()
            for dr, dc in MOVES.values():
                nxt = (cur[0] + dr, cur[1] + dc)
                if nxt in safe and nxt not in prev:
                    prev[nxt] = cur
                    queue.append(nxt)
        if (7, 7) in prev:
            nxt = (7, 7)
            while prev[nxt] != pos:
                nxt = prev[nxt]
            pos = nxt
        grid = grid_after(row, step - 1)  # the world the move lands in; events of this step come after
        if grid[pos[0]][pos[1]] == "H":
            return "death", step
        if pos == (7, 7):
            return "success", step
    return "timeout", row["max_steps"]


@pytest.mark.parametrize("radius", [None, 0, 1, 2])
def test_memory_agent_without_a_filter_ignores_the_radius(tmp_path: Path, radius) -> None:
    """Five instances a regime: in each regime the simulation has the agent succeed on some and
    die on others (both outcomes of the memory agent, checked here), so each is compared."""
    for regime in ("L2", "L3"):
        log = run(
            tmp_path / regime, "spatialstale/memory", limit=5, regime=regime, strategy="no_filter", view_radius=radius
        )
        data = rows(regime)
        outcomes = set()
        for sample in log.samples:
            record = sample.scores["navigation_scorer"].metadata
            assert (record["outcome"], record["steps"]) == memory_agent_outcome(data[sample.id]), sample.id
            outcomes.add(record["outcome"])
        assert outcomes == {"success", "death"}, (regime, outcomes)


def predicted_audit_calls(row: dict, record: dict, radius: int, batch: int = 10) -> int:
    """omcd's calls from the cells seen along the trajectory (specification.md#partial-observation): at the
    start and before every step, the entries of cells in view not yet judged
    since the world last changed, in batches; only while a window is open
    (after the pre-game changes; after each L3 event)."""
    event_steps = {e["step"] for e in row["events"]}
    windows = ({0} if not row["events"] else set()) | event_steps
    judged, epoch, calls = set(), 0, 0
    path = positions(record)

    def audit(agent) -> int:
        if epoch not in windows:
            return 0
        due = [
            (r, c) for r in range(8) for c in range(8) if seen(agent, (r, c), radius) and ((r, c), epoch) not in judged
        ]
        judged.update((cell, epoch) for cell in due)
        return math.ceil(len(due) / batch)

    calls += audit(path[0])  # start
    for k in range(record["steps"]):
        calls += audit(path[k])  # before step k+1
        if k + 1 in event_steps and k + 1 < record["steps"]:  # the episode goes on after the event
            epoch = k + 1
            calls += audit(path[k + 1])
    return calls


@pytest.mark.parametrize("regime", ["L1", "L2", "L3"])
def test_audit_calls_under_partial_observability_follow_the_cells_seen(tmp_path: Path, regime: str) -> None:
    log = run(tmp_path, "spatialstale/observer", limit=5, regime=regime, strategy="omcd", view_radius=1)
    data = rows(regime)
    for sample in log.samples:
        record = sample.scores["navigation_scorer"].metadata
        assert record["audit_calls"] == predicted_audit_calls(data[sample.id], record, 1), sample.id
        calls = [e for e in resolve_sample_attachments(sample, "full").events if e.event == "model" and not e.tools]
        assert len(calls) == record["audit_calls"]


def test_self_verify_under_partial_observability_audits_what_is_in_view_once(tmp_path: Path) -> None:
    log = run(tmp_path, "spatialstale/observer", limit=5, regime="L3", strategy="self_verify", view_radius=2)
    for sample in log.samples:
        record = sample.scores["navigation_scorer"].metadata
        calls = [e for e in resolve_sample_attachments(sample, "full").events if e.event == "model" and not e.tools]
        assert record["audit_calls"] == len(calls) == 1  # one call, before the first step
        entries = [line for line in calls[0].input[-1].text.splitlines() if line.startswith("[mem_")]
        in_view = [f"mem_{r * 8 + c:03d}" for r in range(8) for c in range(8) if seen((0, 0), (r, c), 2)]
        assert [line[1:8] for line in entries] == in_view  # the 9 cells of the corner's window, in store order


def test_image_and_text_observations_give_the_same_episodes_under_partial_observability(tmp_path: Path) -> None:
    """The scripted agents read fog as ``?``: the same decisions whichever way the grid is shown."""
    for strategy in ("resolve", "omcd"):
        text = run(tmp_path / f"t{strategy}", "spatialstale/mixed", regime="L3", strategy=strategy, view_radius=1)
        image = run(
            tmp_path / f"i{strategy}",
            "spatialstale/mixed",
            regime="L3",
            strategy=strategy,
            view_radius=1,
            modality="image",
        )
        for a, b in zip(text.samples, image.samples):
            ra, rb = (s.scores["navigation_scorer"].metadata for s in (a, b))
            assert (ra["trajectory"], ra["outcome"]) == (rb["trajectory"], rb["outcome"]), a.id
        first = resolve_sample_attachments(image.samples[0], "full")
        prompt = next(e for e in first.events if e.event == "model" and e.tools).input[-1]
        texts = " ".join(p.text for p in prompt.content if p.type == "text")
        assert "cells out of view are painted grey" in texts and "grey = out of view (?)" in texts


# -- filter modes ----------------------------------------------------------------------


def test_filter_modes_keep_ids_and_order_with_their_exact_strings(tmp_path: Path) -> None:
    data = rows("L2")
    for mode in ("delete", "mark", "history"):
        log = run(tmp_path / mode, "spatialstale/memory", limit=3, regime="L2", strategy="oracle", filter_mode=mode)
        for sample in log.samples:
            row = data[sample.id]
            stale = {
                m["id"] for m in row["memory"] if (m["claim"] == "DANGER") != (row["grid"][m["row"]][m["col"]] == "H")
            }
            first = memory_section(step_prompts(sample)[0])
            ids = [line[1:8] for line in first]
            if mode == "delete":
                assert ids == [m["id"] for m in row["memory"] if m["id"] not in stale]
                continue
            assert ids == [m["id"] for m in row["memory"]], "every entry kept, in store order"
            for line, m in zip(first, row["memory"]):
                if m["id"] not in stale:
                    assert line == m["text"]
                elif mode == "mark":
                    assert line == (
                        f"[{m['id']}] UNKNOWN at ({m['row']},{m['col']}): this note was found out of date; "
                        "what the cell is now is unknown"
                    )
                else:  # the oracle's authority is the ground truth, not a sighting
                    label = " [out of date as of step 0: told by the ground truth, not by an observation]"
                    assert line == m["text"] + label


def test_oracle_history_at_radius_one_claims_no_sighting_that_did_not_happen(tmp_path: Path) -> None:
    """At step 0 with view_radius=1 the agent has seen the 2x2 corner around (0,0): no entry outside
    it may say it was contradicted by what was seen; every stale entry says the ground truth found it."""
    data = rows("L2")
    log = run(tmp_path, "spatialstale/mixed", limit=3, regime="L2", strategy="oracle", filter_mode="history",
              view_radius=1)  # fmt: skip
    checked = 0
    for sample in log.samples:
        row = data[sample.id]
        lines = dict(zip([m["id"] for m in row["memory"]], memory_section(step_prompts(sample)[0])))
        for m in row["memory"]:
            line, in_view = lines[m["id"]], seen((0, 0), (m["row"], m["col"]), 1)
            assert "what was seen" not in line or in_view, line
            stale = (m["claim"] == "DANGER") != (row["grid"][m["row"]][m["col"]] == "H")
            suffix = " [out of date as of step 0: told by the ground truth, not by an observation]"
            assert line == m["text"] + (suffix if stale else ""), line
            checked += stale and not in_view
    assert checked, "some stale entry lies outside the window"


def test_filter_modes_only_for_strategies_that_judge() -> None:
    for strategy in ("no_filter", "no_memory"):
        with pytest.raises(ValueError, match="judges none"):
            navigate(strategy=strategy, filter_mode="mark")
    with pytest.raises(ValueError, match="filter_mode must be one of delete, mark, history"):
        navigate(strategy="omcd", filter_mode="hide")
    for bad in (-1, 1.5, "2", True):
        with pytest.raises(ValueError, match="view_radius must be a non-negative integer"):
            navigate(view_radius=bad)


# -- L0 ----------------------------------------------------------------------------------


def test_l0_is_clean_and_paired_with_l1() -> None:
    l0, l1 = rows("L0"), rows("L1")
    assert len(l0) == 50 and dataset.verify(None)["L0.jsonl"] == 50
    for i in range(50):
        a, b = l0[f"L0-{i:03d}"], l1[f"L1-{i:03d}"]
        assert a["grid"] == a["g0"] == b["g0"] and a["memory"] == b["memory"] and a["events"] == []
        assert a["seed"] == b["seed"]


def test_memory_is_a_benefit_on_l0_under_partial_observability(tmp_path: Path) -> None:
    # five instances: without memory the agent already loses some of them (timeouts, 50 calls each)
    with_memory = run(tmp_path / "m", "spatialstale/mixed", limit=5, regime="L0", strategy="no_filter", view_radius=1)
    without = run(tmp_path / "n", "spatialstale/mixed", limit=5, regime="L0", strategy="no_memory", view_radius=1)
    success = [
        sum(s.scores["navigation_scorer"].value["success"] for s in log.samples) for log in (with_memory, without)
    ]
    assert success[0] == 5 and success[1] < 5
