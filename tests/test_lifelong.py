"""The lifelong task end to end through Inspect, with the scripted agents.

Every expected value is computed here from the lifetime data and the
trajectories the agents walked (recorded in each episode's score metadata),
with a view window written out in this file: what the agent saw before each
move, and the cell it died in. The harness's own sightings and note scores
are never used to compute an expectation.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import pytest
from _lifetime_truth import saw as truth_saw
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog
from inspect_ai.model import ModelOutput, ModelUsage, get_model

import spatialstale_evals._registry  # noqa: F401 - registers spatialstale/<agent>
from spatialstale_evals.lifelong import lifelong
from spatialstale_evals.lifetime.scoring import lifelong_scorer
from spatialstale_evals.lifetime.solver import lifelong_loop
from spatialstale_evals.world import lifetimes

EPISODES = 3
RADIUS = 1


def run(player: Any, regime: str, tmp_path: Any, limit: int = 2, **args: Any) -> EvalLog:
    task = lifelong(regime=regime, episodes=args.pop("episodes", EPISODES), **args)
    model = f"spatialstale/{player}" if isinstance(player, str) else player
    (log,) = inspect_eval(task, model=model, limit=limit, display="none", log_dir=str(tmp_path), max_samples=2)
    assert log.status == "success", log.error
    assert all(s.error is None for s in log.samples)
    return log


def records(sample: Any) -> list[dict[str, Any]]:
    return sample.scores["lifelong_scorer"].metadata["episodes"]


def lives(regime: str) -> dict[str, lifetimes.Lifetime]:
    return {lt.id: lt for lt in lifetimes.load(None, regime)}


def saw(world: lifetimes.EpisodeWorld, record: dict[str, Any], radius: int | None = RADIUS) -> dict[tuple, str]:
    """What the agent was shown in one episode (``_lifetime_truth.saw``, at the task's radius by default)."""
    return truth_saw(world, record, radius)


def is_hole(kind: str) -> bool:
    return kind == "H"


@pytest.fixture(scope="module")
def diligent_logs(tmp_path_factory) -> dict[str, EvalLog]:
    out = tmp_path_factory.mktemp("diligent")
    # L1 with two samples at once (max_samples=2): the exact counts below also show they never share files
    return {regime: run("diligent", regime, out, limit=2 if regime == "L1" else 1) for regime in ("L0", "L1", "L2")}


def test_diligent_on_l0_keeps_true_notes_and_has_nothing_to_repair(diligent_logs):
    log = diligent_logs["L0"]
    metrics = {m.name: m.value for s in log.results.scores for m in s.metrics.values()}
    for sample in log.samples:
        recs = records(sample)
        assert recs[0]["notes"]["claims"] == 0  # an empty store at the start of the lifetime
        for rec in recs[1:]:
            assert rec["notes"]["claims"] > 0 and rec["notes"]["claims_true"] == rec["notes"]["claims"]
        assert all(r["repair"]["repairable"] == 0 for r in recs)
        value = sample.scores["lifelong_scorer"].metadata["counts"]
        assert value["success_3"] >= value["success_1"]  # what it learned helps (or it already succeeded)
    assert math.isnan(metrics["spatialstale_evals/repair_rate"]) and math.isnan(metrics["note_precision_1"])
    assert metrics["note_precision_2"] == metrics["note_precision_3"] == metrics["note_balanced_2"] == 1.0


@pytest.mark.parametrize("regime", ["L1", "L2"])
def test_diligent_stale_claims_are_exactly_the_cells_changed_since_it_last_saw_them(diligent_logs, regime):
    log, by_id = diligent_logs[regime], lives(regime)
    stale_total = 0
    for sample in log.samples:
        life, last_seen = by_id[sample.id], {}
        for rec, world in zip(records(sample), life.episodes):
            now_kind = {cell: world.grid[cell[0]][cell[1]] for cell in last_seen}
            changed = {cell for cell, kind in last_seen.items() if is_hole(kind) != is_hole(now_kind[cell])}
            assert rec["notes"]["stale_claims"] == len(changed)
            assert rec["notes"]["claims"] == rec["notes"]["claimed_cells"] == len(last_seen)
            assert rec["notes"]["hazard_claims"] == sum(is_hole(world.grid[r][c]) for r, c in changed)
            assert rec["notes"]["covered_cells"] == rec["notes"]["seen_cells"] == len(last_seen)
            now = saw(world, rec)
            contradicted = {c for c, k in now.items() if c in last_seen and is_hole(k) != is_hole(last_seen[c])}
            assert rec["repair"] == {"repairable": len(contradicted), "repaired": len(contradicted), "removed": 0}
            stale_total += len(changed)
            last_seen |= now
    assert stale_total > 0  # the lakes did change under its notes
    metrics = {m.name: m.value for s in log.results.scores for m in s.metrics.values()}
    assert metrics["spatialstale_evals/repair_rate"] == 1.0


def test_write_once_never_repairs_and_its_stale_claims_follow_the_changes(tmp_path):
    log, by_id = run("write_once", "L1", tmp_path, limit=1), lives("L1")
    repairable = 0
    for sample in log.samples:
        life, recs = by_id[sample.id], records(sample)
        written = saw(life.episodes[0], recs[0])  # its only write: what it saw in episode 1
        for rec, world in zip(recs[1:], life.episodes[1:]):
            stale = sum(is_hole(k) != is_hole(world.grid[r][c]) for (r, c), k in written.items())
            assert rec["notes"]["stale_claims"] == stale and rec["notes"]["claims"] == len(written)
            assert rec["repair"]["repaired"] == 0
            repairable += rec["repair"]["repairable"]
    assert repairable > 0
    metrics = {m.name: m.value for s in log.results.scores for m in s.metrics.values()}
    assert metrics["spatialstale_evals/repair_rate"] == 0.0


def test_amnesiac_writes_nothing(tmp_path):
    log = run("amnesiac", "L2", tmp_path, limit=1)
    for rec in records(log.samples[0]):
        assert rec["notes"]["claims"] == rec["notes"]["memory_bytes"] == rec["notes"]["covered_cells"] == 0
        assert rec["memory_calls"] == 0
    metrics = {m.name: m.value for s in log.results.scores for m in s.metrics.values()}
    assert metrics["spatialstale_evals/note_coverage"] == 0.0


def test_paper_memory_starts_stale_by_the_regime(tmp_path):
    from spatialstale_evals.world import dataset

    log = run("write_once", "L2", tmp_path, limit=1, episodes=1, initial_memory="paper")
    inst = dataset.load(None, "L2")[0]
    notes = records(log.samples[0])[0]["notes"]
    stale = sum(inst.g0[r][c] != inst.grid[r][c] for r in range(8) for c in range(8))
    assert notes["claims"] == 64 and notes["stale_claims"] == stale > 0
    assert records(log.samples[0])[0]["memory_calls"] == 1  # it viewed the notes and, finding some, never wrote


def test_epochs_start_with_an_empty_memory_each(tmp_path):
    log = run("diligent", "L0", tmp_path, limit=1, episodes=2, epochs=2)
    assert len(log.samples) == 2
    for sample in log.samples:
        first, second = records(sample)
        assert first["notes"]["claims"] == 0 and second["notes"]["claims"] > 0
    assert records(log.samples[0]) == records(log.samples[1])  # and play the same lifetime the same way


def _junk() -> Iterator[ModelOutput]:
    """Replies no agent should send: empty, prose, malformed and hostile memory
    calls, a 100 KB file, an unknown tool, a move with a bad direction."""
    big = "SAFE at (1,1)\n" + "x" * 100_000
    calls: list[tuple[str, dict[str, Any]] | str] = [
        "",
        "I think I will go right, probably.",
        ("memory", {}),
        ("memory", {"command": "explode", "path": "/memories/x"}),
        ("memory", {"command": "view", "path": "/etc/passwd"}),
        ("memory", {"command": "create", "path": "/memories/../../etc/x", "file_text": "HOLE at (1,1)"}),
        ("memory", {"command": "insert", "path": "/memories/big.md", "insert_line": "x", "insert_text": 5}),
        ("memory", {"command": "view", "path": "/memories", "view_range": "abc"}),
        ("memory", {"command": "create", "path": "/memories/big.md", "file_text": big}),
        ("memory", {"command": "str_replace", "path": "/memories/big.md", "old_str": "", "new_str": "y"}),
        ("memory", {"command": "rename", "old_path": "/memories/big.md", "new_path": "/memories/big.md"}),
        ("teleport", {"to": "goal"}),
        ("move", {"direction": "NORTHWEST"}),
        ("move", {"direction": "down"}),
    ]
    n = 0
    while True:
        call = calls[n % len(calls)]
        if isinstance(call, str):
            out = ModelOutput.from_content("mockllm/model", call)
        else:
            out = ModelOutput.for_tool_call("mockllm/model", call[0], call[1], tool_call_id=f"c{n}", content="")
        out.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
        n += 1
        yield out


def test_junk_replies_and_hostile_memory_calls_never_crash_a_sample(tmp_path):
    model = get_model("mockllm/model", custom_outputs=_junk())
    log = run(model, "L1", tmp_path, limit=1, episodes=2, max_steps=8)
    recs = records(log.samples[0])
    assert [r["steps"] for r in recs if r["outcome"] == "timeout"] == [8] * sum(r["outcome"] == "timeout" for r in recs)
    assert sum(len(r["fallbacks"]) for r in recs) > 0
    assert max(r["notes_after"]["memory_bytes"] for r in recs) > 100_000  # the 100 KB body was stored and read
    assert sum(r["memory_calls"] for r in recs) > 0 and sum(r["memory_refused"] for r in recs) > 0  # capped


def test_the_solver_and_scorer_are_the_tasks():
    task = lifelong(episodes=2)
    assert task.scorer and task.solver and lifelong_loop and lifelong_scorer
    assert len(task.dataset) == 50


@pytest.mark.parametrize(
    "args,match",
    [
        ({"episodes": 11}, "at most 10"),
        ({"episodes": 0}, "positive"),
        ({"initial_memory": "full"}, "initial_memory"),
        ({"view_radus": 2}, "unknown task parameter"),
        ({"max_memory_calls": -1}, "non-negative"),
    ],
)
def test_bad_parameters_fail_before_any_model_call(args, match):
    with pytest.raises(ValueError, match=match):
        lifelong(**args)


def test_react_plays_as_the_default_loop(tmp_path):
    """The same scripted agent under Inspect's react() (move answers carry the
    next view) walks the same moves and keeps the same notes."""
    default = run("diligent", "L2", tmp_path, limit=1, episodes=2)
    react = run("diligent", "L2", tmp_path, limit=1, episodes=2, agent="react")
    for a, b in zip(records(default.samples[0]), records(react.samples[0]), strict=True):
        assert (a["actions"], a["notes"], a["repair"]) == (b["actions"], b["notes"], b["repair"])
        assert b["memory_calls"] == 2 and not b["fallbacks"]  # a view at the start, a write in the write-back


def test_your_own_agent_plays_the_episodes(tmp_path):
    from inspect_ai.agent import AgentState

    from spatialstale_evals.lifelong import lifelong_with_agent

    def right_then_down(tools):
        move, _memory = tools

        async def agent(state: AgentState) -> AgentState:
            for direction in ["RIGHT"] * 7 + ["DOWN"] * 7:
                answer = str(await move(direction=direction))
                if "Episode over" in answer:
                    break
            return state  # returning early is allowed: the harness falls back and calls it again

        return agent

    task = lifelong_with_agent(right_then_down, regime="L0", episodes=2)
    (log,) = inspect_eval(task, model="spatialstale/amnesiac", limit=1, display="none", log_dir=str(tmp_path))
    assert log.status == "success" and log.samples[0].error is None
    life = lives("L0")[log.samples[0].id]
    for rec in records(log.samples[0]):
        assert rec["actions"][: len(rec["actions"]) - len(rec["fallbacks"])] == (["RIGHT"] * 7 + ["DOWN"] * 7)[
            : len(rec["actions"]) - len(rec["fallbacks"])
        ]
        path = [(0, c) for c in range(8)] + [(r, 7) for r in range(1, 8)]
        first_hole = next((p for p in path if life.g0[p[0]][p[1]] == "H"), None)
        assert rec["outcome"] == ("death" if first_hole else "success")
    assert log.eval.metadata["agent"] == "custom"


def test_each_request_extends_the_previous_one_within_an_episode(diligent_logs):
    """history=None is append-only: within an episode every request is the
    previous one plus its reply, the tools' answers and the next prompt (a
    provider's prefix cache reuses it); a new episode starts a new conversation."""
    sample = diligent_logs["L2"].samples[0]
    inputs = [[(m.role, m.text) for m in e.input] for e in sample.events if e.event == "model"]
    restarts = 0
    for before, after in zip(inputs, inputs[1:]):
        if after[: len(before)] != before:
            restarts += 1
            assert len(after) == 2 and after[0][0] == "system"  # a new episode: system and first prompt only
    assert restarts == EPISODES - 1


def test_blind_diligent_dies_on_its_safe_notes_and_repairs_them(tmp_path):
    """At view radius 0 the agent sees only its own cell: its notes are all it
    has, and a death tells it the cell is a hole. Each death is traced to the
    notes the episode began with (computed here from its last sightings), and
    the write-back corrects the note it died of."""
    log, by_id = run("diligent", "L2", tmp_path, limit=2, episodes=3, view_radius=0), lives("L2")
    causes, repairs = [], 0
    for sample in log.samples:
        life, last_seen = by_id[sample.id], {}
        for rec, world in zip(records(sample), life.episodes):
            if rec["outcome"] == "death":
                cell = tuple(rec["death_cell"])
                noted = last_seen.get(cell)
                expected = "no_note" if noted is None else "hole_note" if is_hole(noted) else "safe_note"
                assert rec["death_cause"] == expected
                causes.append(expected)
            now = saw(world, rec, radius=0)
            contradicted = {c for c, k in now.items() if c in last_seen and is_hole(k) != is_hole(last_seen[c])}
            assert rec["repair"] == {"repairable": len(contradicted), "repaired": len(contradicted), "removed": 0}
            repairs += len(contradicted)
            last_seen |= now
    assert "no_note" in causes  # it walks blind into holes it never saw
    assert repairs > 0
