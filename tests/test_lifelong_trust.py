"""Deaths traced honestly: the note-trusting reference agent's deaths, the
harness's fallback step, the ``limit`` outcome, and the paper seed's notes
counted apart from the agent's own.

Expectations are computed here from the lifetimes and the trajectories the
records hold (what the agent was shown, with a view window written out in
this file), never from the harness's own sightings or note scores.
"""

from __future__ import annotations

from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, get_model

import spatialstale_evals._registry  # noqa: F401 - registers spatialstale/<agent>
from spatialstale_evals.lifelong import lifelong
from spatialstale_evals.world import dataset, lifetimes

RADIUS = 1
MOVES = {"UP": (-1, 0), "DOWN": (1, 0), "LEFT": (0, -1), "RIGHT": (0, 1)}


def run(model: Any, tmp_path: Any, limit: int = 1, ok: bool = True, **args: Any) -> EvalLog:
    (log,) = inspect_eval(lifelong(**args), model=model, limit=limit, display="none", log_dir=str(tmp_path))
    assert log.status == "success", log.error
    assert all(s.error is None for s in log.samples)
    return read_eval_log(log.location, resolve_attachments=True)


def records(sample: Any) -> list[dict[str, Any]]:
    return sample.scores["lifelong_scorer"].metadata["episodes"]


def shown(world: lifetimes.EpisodeWorld, rec: dict[str, Any]) -> dict[tuple[int, int], str]:
    """What the agent was shown in one episode: the window around it before each move."""
    seen: dict[tuple[int, int], str] = {}
    for i in range(len(rec["actions"])):
        ar, ac = rec["trajectory"][i]
        grid = world.grid_at(i)
        for r in range(len(grid)):
            for c in range(len(grid[0])):
                if abs(r - ar) <= RADIUS and abs(c - ac) <= RADIUS:
                    seen[(r, c)] = grid[r][c]
    return seen


@pytest.mark.parametrize("regime", ["L1", "L2"])
def test_credulous_dies_on_safe_notes_over_holes_it_could_see(tmp_path, regime):
    """Each death: the cell its notes (its last sightings in earlier episodes)
    called safe, a hole at the episode's start, in view before the fatal
    move; traced as ``safe_note`` and a hazard claim acted on. Which episodes
    end in a death is read from the trajectories on the lakes."""
    log = run("spatialstale/credulous", tmp_path, limit=2, regime=regime, episodes=3)
    lives = {lt.id: lt for lt in lifetimes.load(None, regime)}
    deaths = 0
    for sample in log.samples:
        life, last_seen = lives[sample.id], {}
        for rec, world in zip(records(sample), life.episodes):
            grid = world.grid  # L1/L2: no change inside an episode
            entered = [tuple(p) for p in rec["trajectory"][1:]]
            holes = [p for p in entered if grid[p[0]][p[1]] == "H"]
            assert (rec["outcome"] == "death") == bool(holes)
            if holes:
                cell, before = holes[0], tuple(rec["trajectory"][-2])
                assert cell == tuple(rec["death_cell"]) == entered[-1]
                assert last_seen.get(cell) not in (None, "H"), "its notes called the cell safe"
                assert max(abs(cell[0] - before[0]), abs(cell[1] - before[1])) <= RADIUS, "it could see the hole"
                assert rec["death_cause"] == "safe_note" and rec["hazard_acted_on"] is True
                deaths += 1
            now = shown(world, rec)
            if holes:
                now[holes[0]] = "H"
            last_seen |= now
    assert deaths > 0


def test_diligent_on_the_same_lifetimes_never_dies(tmp_path):
    log = run("spatialstale/diligent", tmp_path, limit=2, regime="L2", episodes=3)
    assert all(r["outcome"] == "success" for s in log.samples for r in records(s))


def _greedy_walk(grid: tuple[str, ...]) -> tuple[int, int] | None:
    """The first hole the harness's fallback walk enters from the start (the
    greedy rule the docs state: down or right toward the goal, the larger gap first)."""
    n = len(grid)
    goal, agent = (n - 1, len(grid[0]) - 1), (0, 0)
    while agent != goal:
        dr, dc = goal[0] - agent[0], goal[1] - agent[1]
        agent = (agent[0] + (dr > 0), agent[1]) if abs(dr) >= abs(dc) else (agent[0], agent[1] + (dc > 0))
        if grid[agent[0]][agent[1]] == "H":
            return agent
    return None


def _writes_safe_everywhere_then_never_moves() -> Any:
    create = {
        "command": "create",
        "path": "/memories/lake.md",
        "file_text": "".join(f"SAFE at ({r},{c})\n" for r in range(8) for c in range(8)),
    }
    n = 0
    while True:
        if n == 0:
            out = ModelOutput.for_tool_call("mockllm/model", "memory", create, tool_call_id="c0")
        else:
            out = ModelOutput.from_content("mockllm/model", "I will think about it.")
        out.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
        n += 1
        yield out


def test_a_death_on_the_fallback_step_is_no_trust_in_a_note(tmp_path):
    """Notes that call every cell SAFE, replies without a move: the harness's
    greedy fallback walks into a hole the notes call safe. Cause ``fallback``,
    not ``safe_note``, and no hazard claim acted on."""
    regime = "L1"
    life = next(lt for lt in lifetimes.load(None, regime) if _greedy_walk(lt.episodes[1].grid) is not None)
    index = [lt.id for lt in lifetimes.load(None, regime)].index(life.id)
    model = get_model("mockllm/model", custom_outputs=_writes_safe_everywhere_then_never_moves())
    (log,) = inspect_eval(
        lifelong(regime=regime, episodes=2), model=model, sample_id=life.id, display="none", log_dir=str(tmp_path)
    )
    assert log.status == "success" and log.samples[0].error is None, index
    second = records(log.samples[0])[1]
    assert second["outcome"] == "death" and tuple(second["death_cell"]) == _greedy_walk(life.episodes[1].grid)
    assert len(second["fallbacks"]) == second["steps"]
    assert second["notes"]["claims"] == 64 and second["notes"]["hazard_claims"] > 0  # the cell was noted SAFE
    assert second["death_cause"] == "fallback" and second["hazard_acted_on"] is False


@pytest.mark.parametrize("agent", ["default", "react"])
def test_a_message_limit_ends_the_episode_with_outcome_limit(tmp_path, agent):
    task = lifelong(regime="L0", episodes=3, agent=agent)
    (log,) = inspect_eval(
        task, model="spatialstale/diligent", limit=1, message_limit=12, display="none", log_dir=str(tmp_path)
    )
    assert log.samples[0].error is None
    recs = records(log.samples[0])
    assert recs[-1]["outcome"] == "limit" and recs[-1]["steps"] < 14
    assert all(r["outcome"] == "success" for r in recs[:-1])


def test_the_paper_seed_is_an_event_and_counted_apart_from_the_agents_notes(tmp_path):
    log = run("spatialstale/diligent", tmp_path, regime="L2", episodes=2, initial_memory="paper")
    sample = log.samples[0]
    inst = next(i for i in dataset.load(None, "L2") if i.id == sample.id)
    seeds = [e for e in sample.events if e.event == "info" and "initial memory" in str(e.source)]
    assert len(seeds) == 1 and seeds[0].data["entries"] == len(inst.memory) == 64
    first_note = next(e for e in sample.events if e.event == "info" and "notes at the start" in str(e.source))
    assert sample.events.index(seeds[0]) < sample.events.index(first_note)  # written before episode 1
    first, second = records(sample)
    stale = sum(inst.g0[r][c] != inst.grid[r][c] for r in range(8) for c in range(8))
    assert first["notes_by_provenance"]["seeded"]["claims"] == 64
    assert first["notes_by_provenance"]["seeded"]["stale_claims"] == stale
    assert first["notes_by_provenance"]["written"]["claims"] == 0
    # diligent rewrote the file in its own format: episode 2 starts with its notes only
    assert second["notes_by_provenance"]["seeded"]["claims"] == 0
    assert second["notes_by_provenance"]["written"]["claims"] == second["notes"]["claims"] > 0
