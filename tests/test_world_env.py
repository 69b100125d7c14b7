"""The gymnasium environment on tiny handmade instances (specification.md#the-world, L3 rules)."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import spatialstale_evals.world  # noqa: F401  (registers the env id)
from spatialstale_evals.world import dataset
from spatialstale_evals.world import env as env_module
from spatialstale_evals.world.env import DynamicFrozenLakeEnv
from spatialstale_evals.world.instance import Instance
from spatialstale_evals.world.observation import text_observation
from spatialstale_evals.world.regimes import Event

LEFT, DOWN, RIGHT, UP = 0, 1, 2, 3  # documented action ids (Gymnasium FrozenLake's)
CODES = {"S": 0, "F": 1, "H": 2, "G": 3}  # documented observation codes


def make(g0, *, grid=None, events=(), max_steps=50, regime="L1"):
    g0 = tuple(g0)
    return Instance(
        id="hand-000",
        regime=regime,
        seed=0,
        height=len(g0),
        width=len(g0[0]),
        max_steps=max_steps,
        g0=g0,
        grid=tuple(grid) if grid is not None else g0,
        events=tuple(events),
        memory=(),
    )


def grid_of(obs):
    inv = {v: k for k, v in CODES.items()}
    return tuple("".join(inv[int(x)] for x in row) for row in np.asarray(obs["grid"]))


def pos_of(obs, width):
    return divmod(int(obs["agent"]), width)


OPEN3 = ("SFF", "FHF", "FFG")


def test_reset_starts_at_s_with_pregame_grid():
    inst = make(OPEN3, grid=("SFF", "FFF", "FHG"))
    env = DynamicFrozenLakeEnv(inst)
    obs, info = env.reset()
    assert pos_of(obs, 3) == (0, 0)
    assert grid_of(obs) == ("SFF", "FFF", "FHG")  # the changed grid, not g0
    assert info["outcome"] is None and info["steps"] == 0
    assert env.observation_space.contains(obs)


def test_wall_bump_stays_in_place_and_costs_a_step():
    env = DynamicFrozenLakeEnv(make(OPEN3))
    env.reset()
    for n, action in enumerate((UP, LEFT), start=1):
        obs, reward, terminated, truncated, info = env.step(action)
        assert pos_of(obs, 3) == (0, 0)
        assert reward == 0.0 and not terminated and not truncated
        assert info["steps"] == n
        assert info["outcome"] is None
    # Right edge and bottom edge too.
    env.step(RIGHT)
    env.step(RIGHT)
    obs, *_ = env.step(RIGHT)
    assert pos_of(obs, 3) == (0, 2)
    assert env.steps == 5


def test_death_on_entering_a_hole():
    env = DynamicFrozenLakeEnv(make(OPEN3))
    env.reset()
    env.step(RIGHT)
    obs, reward, terminated, truncated, info = env.step(DOWN)
    assert pos_of(obs, 3) == (1, 1)
    assert reward == -1.0
    assert terminated and not truncated
    assert info["outcome"] == "death"
    with pytest.raises(RuntimeError):
        env.step(UP)


def test_success_on_reaching_goal():
    env = DynamicFrozenLakeEnv(make(OPEN3))
    env.reset()
    rewards = []
    for action in (RIGHT, RIGHT, DOWN):
        _, r, term, trunc, _ = env.step(action)
        rewards.append(r)
        assert not term and not trunc
    obs, reward, terminated, truncated, info = env.step(DOWN)
    assert pos_of(obs, 3) == (2, 2)
    assert rewards == [0.0, 0.0, 0.0]
    assert reward == 1.0 and terminated and not truncated
    assert info["outcome"] == "success"


def test_timeout_at_budget():
    env = DynamicFrozenLakeEnv(make(OPEN3, max_steps=4))
    env.reset()
    for _ in range(3):
        _, reward, terminated, truncated, info = env.step(UP)
        assert not terminated and not truncated and info["outcome"] is None
    _, reward, terminated, truncated, info = env.step(UP)
    assert reward == 0.0
    assert truncated and not terminated
    assert info["outcome"] == "timeout"
    assert info["steps"] == 4


def test_default_budget_is_fifty_on_8x8():
    inst = dataset.load(None, "L1")[0]
    env = DynamicFrozenLakeEnv(inst)
    env.reset()
    for n in range(1, 51):
        _, _, terminated, truncated, info = env.step(UP)  # bump at S forever
        assert not terminated
        assert truncated == (n == 50)
    assert info["outcome"] == "timeout"


def test_max_steps_override():
    env = DynamicFrozenLakeEnv(make(OPEN3, max_steps=50), max_steps=2)
    env.reset()
    env.step(UP)
    *_, truncated, info = env.step(UP)
    assert truncated and info["outcome"] == "timeout"


def test_l3_event_changes_grid_at_its_step_not_before():
    g0 = ("SFFF", "FFFF", "FFFF", "FFFG")
    ev = Event(step=3, cells=((0, 3), (3, 0)))
    env = DynamicFrozenLakeEnv(make(g0, events=[ev], regime="L3"))
    obs, _ = env.reset()
    assert grid_of(obs) == g0
    for _ in range(2):
        obs, _, _, _, info = env.step(UP)
        assert grid_of(obs) == g0
        assert info["events"] == []
    obs, reward, terminated, truncated, info = env.step(UP)
    assert grid_of(obs) == ("SFFH", "FFFF", "FFFF", "HFFG")
    assert reward == 0.0 and not terminated and not truncated
    assert len(info["events"]) == 1
    fired = info["events"][0]
    assert fired["step"] == 3
    assert sorted(map(tuple, fired["cells"])) == [(0, 3), (3, 0)]
    assert fired["under_agent"] is False and fired["cut_off"] is False
    # The change persists afterwards.
    obs, *_ = env.step(UP)
    assert grid_of(obs) == ("SFFH", "FFFF", "FFFF", "HFFG")


def test_l3_flip_under_agent_applies_without_killing():
    g0 = ("SFF", "FFF", "FFG")
    ev = Event(step=1, cells=((0, 1), (2, 0)))
    env = DynamicFrozenLakeEnv(make(g0, events=[ev], regime="L3"))
    env.reset()
    obs, reward, terminated, truncated, info = env.step(RIGHT)
    assert pos_of(obs, 3) == (0, 1)
    assert grid_of(obs) == ("SHF", "FFF", "HFG")  # the flip applied under the agent
    assert reward == 0.0 and not terminated and not truncated
    assert info["outcome"] is None
    assert info["events"][0]["under_agent"] is True
    # The agent may step off the hole it is standing on.
    obs, reward, terminated, *_ = env.step(RIGHT)
    assert pos_of(obs, 3) == (0, 2) and reward == 0.0 and not terminated


def test_l3_wall_bump_on_hole_under_agent_does_not_kill():
    # specification.md#the-world: *entering* H ends the episode; env.py's documented L3
    # rule: "only *entering* a hole kills". A wall bump enters nothing.
    g0 = ("SFF", "FFF", "FFG")
    ev = Event(step=1, cells=((0, 1), (2, 0)))
    env = DynamicFrozenLakeEnv(make(g0, events=[ev], regime="L3"))
    env.reset()
    env.step(RIGHT)  # hole opens under the agent at (0,1)
    obs, reward, terminated, truncated, info = env.step(UP)  # bump the top wall
    assert pos_of(obs, 3) == (0, 1)
    assert info["outcome"] is None, "a wall bump while standing on a thawed cell killed the agent"
    assert reward == 0.0 and not terminated


def test_l3_event_cutting_agent_off_applies_and_is_logged():
    # S->G stays connected, but the agent at (0,3) loses both its neighbours.
    g0 = ("SFFF", "FFFF", "FFFF", "FFFG")
    ev = Event(step=3, cells=((0, 2), (1, 3)))
    env = DynamicFrozenLakeEnv(make(g0, events=[ev], regime="L3"))
    env.reset()
    env.step(RIGHT)
    env.step(RIGHT)
    obs, reward, terminated, truncated, info = env.step(RIGHT)
    assert pos_of(obs, 4) == (0, 3)
    assert grid_of(obs) == ("SFHF", "FFFH", "FFFF", "FFFG")
    assert reward == 0.0 and not terminated and not truncated and info["outcome"] is None
    fired = info["events"][0]
    assert fired["cut_off"] is True
    assert fired["under_agent"] is False
    # Leaving through a freshly thawed cell is entering a hole: death.
    obs, reward, terminated, truncated, info = env.step(LEFT)
    assert pos_of(obs, 4) == (0, 2)
    assert (reward, terminated, info["outcome"]) == (-1.0, True, "death")


def test_canonical_l3_schedule_replayed_by_env():
    # Bumping at S (never changes) for the whole budget: the env's grid after
    # every step must equal g0 with every event up to that step applied.
    for inst in dataset.load(None, "L3"):
        env = DynamicFrozenLakeEnv(inst)
        env.reset()
        rows = [list(r) for r in inst.g0]
        by_step = {e.step: e for e in inst.events}
        for step in range(1, inst.max_steps + 1):
            obs, reward, terminated, truncated, info = env.step(UP)
            if step in by_step:
                for r, c in by_step[step].cells:
                    rows[r][c] = "H" if rows[r][c] == "F" else "F"
                assert [tuple(x) for x in info["events"][0]["cells"]] == list(by_step[step].cells)
            else:
                assert info["events"] == []
            assert grid_of(obs) == tuple("".join(r) for r in rows), (inst.id, step)
            assert not terminated
            assert truncated == (step == inst.max_steps)


def test_gymnasium_make_works():
    inst = make(OPEN3)
    env = gymnasium.make("SpatialStale/DynamicFrozenLake-v1", instance=inst)
    obs, info = env.reset(seed=0)
    assert pos_of(obs, 3) == (0, 0)
    env.step(RIGHT)
    _, reward, terminated, truncated, info = env.step(DOWN)
    assert (reward, terminated, info["outcome"]) == (-1.0, True, "death")
    env2 = gymnasium.make("SpatialStale/DynamicFrozenLake-v1", regime="L2")
    obs, info = env2.reset(seed=5)
    assert env2.observation_space.contains(obs)
    assert env2.action_space.n == 4


def test_reset_seed_reproducible_without_instance():
    for regime in ("L1", "L2", "L3"):
        env = DynamicFrozenLakeEnv(regime=regime)
        obs1, _ = env.reset(seed=123)
        inst1 = env.instance
        env.step(DOWN)
        obs2, _ = env.reset(seed=123)
        assert env.instance == inst1
        assert obs1["agent"] == obs2["agent"]
        assert np.array_equal(obs1["grid"], obs2["grid"])
        other = DynamicFrozenLakeEnv(regime=regime)
        obs3, _ = other.reset(seed=123)
        assert other.instance == inst1
        assert np.array_equal(obs1["grid"], obs3["grid"])
    env = DynamicFrozenLakeEnv(regime="L1")
    g0s = set()
    for seed in range(6):
        env.reset(seed=seed)
        g0s.add(env.instance.g0)
    assert len(g0s) >= 5


def test_action_ids_are_gymnasium_frozenlakes():
    """Every action id moves the agent where it moves in Gymnasium's own
    FrozenLake: both envs step each id from the centre of an all-ice 3x3 lake
    (where all four moves lead to different cells), and our named constants
    are FrozenLake's."""
    from gymnasium.envs.toy_text import frozen_lake

    lake = ("SFF", "FFF", "FFG")
    centre = 1 * 3 + 1
    reached = {}
    for action in range(4):
        theirs = gymnasium.make("FrozenLake-v1", desc=list(lake), is_slippery=False)
        theirs.reset(seed=0)
        theirs.unwrapped.s = centre
        state, *_ = theirs.step(action)
        ours = DynamicFrozenLakeEnv(make(lake))
        ours.reset()
        ours.agent = divmod(centre, 3)
        obs, reward, terminated, truncated, info = ours.step(action)
        assert obs["agent"] == int(state), action
        assert (reward, terminated, truncated) == (0.0, False, False)
        reached[action] = int(state)
    assert len(set(reached.values())) == 4
    names = {"LEFT": frozen_lake.LEFT, "DOWN": frozen_lake.DOWN, "RIGHT": frozen_lake.RIGHT, "UP": frozen_lake.UP}
    assert {name: getattr(env_module, name) for name in names} == names
    assert env_module.ACTION_IDS == names
    assert {env_module.ACTION_NAMES[i]: i for i in range(4)} == names
    assert (LEFT, DOWN, RIGHT, UP) == (names["LEFT"], names["DOWN"], names["RIGHT"], names["UP"])


def test_the_old_version_is_deprecated():
    """v0 had another action encoding: making it points to the current id
    instead of silently walking the other way."""
    with pytest.raises(gymnasium.error.DeprecatedEnv, match="DynamicFrozenLake-v1"):
        gymnasium.make("SpatialStale/DynamicFrozenLake-v0", regime="L1")


def test_check_env_passes():
    check_env(DynamicFrozenLakeEnv(regime="L3"))
    check_env(gymnasium.make("SpatialStale/DynamicFrozenLake-v1", regime="L1").unwrapped)
    inst = dataset.load(None, "L3")[0]
    check_env(gymnasium.make("SpatialStale/DynamicFrozenLake-v1", instance=inst).unwrapped)


def test_render_modes():
    inst = dataset.load(None, "L1")[3]
    env = DynamicFrozenLakeEnv(inst, render_mode="ansi")
    env.reset()
    env.step(DOWN)
    assert env.render() == text_observation(env.grid, env.agent)
    assert env.render().splitlines()[-1] == f"Agent at ({env.agent[0]},{env.agent[1]}). Goal at (7,7)."
    env = DynamicFrozenLakeEnv(inst, render_mode="rgb_array")
    env.reset()
    frame = env.render()
    assert isinstance(frame, np.ndarray)
    assert frame.shape == (384, 384, 3) and frame.dtype == np.uint8
    with pytest.raises(ValueError, match="render_mode"):
        DynamicFrozenLakeEnv(inst, render_mode="human")


def test_ansi_render_literal_small_grid():
    env = DynamicFrozenLakeEnv(make(OPEN3), render_mode="ansi")
    env.reset()
    env.step(DOWN)
    assert env.render() == (
        "Row 0: (0,0)=S (0,1)=F (0,2)=F\n"
        "Row 1: (1,0)=F (1,1)=H (1,2)=F\n"
        "Row 2: (2,0)=F (2,1)=F (2,2)=G\n"
        "Agent at (1,0). Goal at (2,2)."
    )


def test_bad_actions_and_step_before_reset():
    env = DynamicFrozenLakeEnv(make(OPEN3))
    with pytest.raises(RuntimeError, match="reset"):
        DynamicFrozenLakeEnv().step(0)
    env.reset()
    with pytest.raises(ValueError, match="action"):
        env.step(4)
