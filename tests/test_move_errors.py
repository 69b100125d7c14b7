"""``move(direction=...)`` called from Python with a value that is no move
(issue 37): a one-line ``ValueError`` naming the value, where it raised
``KeyError: 'NORTH'`` before; the episode is left as it was."""

from __future__ import annotations

import asyncio

import pytest

from spatialstale_evals.lifetime.agents import move_tool
from spatialstale_evals.lifetime.episode import LifeEpisode
from spatialstale_evals.navigation.episode import Episode
from spatialstale_evals.world import dataset
from spatialstale_evals.world.env import ACTION_NAMES, DynamicFrozenLakeEnv, action_id

BAD = ["NORTH", "", "up ", None, 3, 10**5000, ["UP"]]


def env() -> DynamicFrozenLakeEnv:
    lake = DynamicFrozenLakeEnv(dataset.load(None, "L2")[0])
    lake.reset()
    return lake


@pytest.mark.parametrize("value", BAD, ids=lambda v: type(v).__name__)
def test_a_bad_direction_is_one_line_naming_it(value) -> None:
    with pytest.raises(ValueError) as raised:
        action_id(value)
    message = str(raised.value)
    assert "\n" not in message and len(message) < 200
    assert all(name in message for name in ACTION_NAMES)
    if isinstance(value, str):
        assert repr(value) in message


@pytest.mark.parametrize("episode", ["navigate", "lifelong"])
def test_an_episode_refuses_a_bad_direction_and_stays_where_it_was(episode: str) -> None:
    play = Episode(env=env(), view=[]) if episode == "navigate" else LifeEpisode(index=0, env=env(), view_radius=1)
    start = play.env.agent
    with pytest.raises(ValueError, match="got 'NORTH'"):
        play.step("NORTH")
    assert play.env.agent == start and play.env.steps == 0 and play.actions == []


def test_the_lifelong_move_tool_called_from_python_names_the_value() -> None:
    tool = move_tool(LifeEpisode(index=0, env=env(), view_radius=1))
    with pytest.raises(ValueError, match="got 'NORTH'"):
        asyncio.run(tool(direction="NORTH"))
    assert asyncio.run(tool(direction="down"))  # a move still moves
