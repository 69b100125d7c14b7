"""The shared lake episode (``harness/lake_episode.py``): navigate's and
lifelong's episodes answer a move, fall back and log a fallback alike; a
lifelong run logs its fallbacks in that one format; lifelong records the
episode being served in the typed sample store, so the scripted ``random``
agent varies between epochs and repeats between runs.

Expectations are written here from the contract (the paper's greedy step, the
log's fields, the 2,000-character cut), not read from the harness.
"""

from __future__ import annotations

from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log
from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser, ModelOutput, ModelUsage, get_model
from inspect_ai.tool import ToolCall

import spatialstale_evals._registry  # noqa: F401 - registers spatialstale/<agent>
from spatialstale_evals.harness.lake_episode import LakeEpisode, play_turn
from spatialstale_evals.lifelong import lifelong
from spatialstale_evals.lifetime.episode import LifeEpisode
from spatialstale_evals.navigation.episode import Episode
from spatialstale_evals.world import dataset, lifetimes
from spatialstale_evals.world.env import DynamicFrozenLakeEnv

MOVES = {"UP": (-1, 0), "DOWN": (1, 0), "LEFT": (0, -1), "RIGHT": (0, 1)}
LONG = "x" * 2500


def greedy(agent: tuple[int, int], goal: tuple[int, int]) -> str:
    """The paper's fallback step: along the axis with the larger remaining distance, rows on a tie."""
    dr, dc = goal[0] - agent[0], goal[1] - agent[1]
    if abs(dr) >= abs(dc):
        return "DOWN" if dr > 0 else "UP"
    return "RIGHT" if dc > 0 else "LEFT"


def find(grid: tuple[str, ...], kind: str) -> tuple[int, int]:
    return next((r, c) for r, row in enumerate(grid) for c, k in enumerate(row) if k == kind)


def goal_of(grid: tuple[str, ...]) -> tuple[int, int]:
    return find(grid, "G")


def replay(grid: tuple[str, ...]) -> list[tuple[tuple[int, int], str]]:
    """Where the agent stands and the move it makes at each of ``REPLIES``:
    the greedy step, but for the third reply's RIGHT."""
    goal, pos, moves = goal_of(grid), find(grid, "S"), []
    for n in range(1, len(REPLIES) + 1):
        direction = "RIGHT" if n == 3 else greedy(pos, goal)
        moves.append((pos, direction))
        dr, dc = MOVES[direction]
        row, col = pos[0] + dr, pos[1] + dc
        pos = (row, col) if 0 <= row < len(grid) and 0 <= col < len(grid[0]) else pos
        if grid[pos[0]][pos[1]] in "HG":
            return []  # the episode would end early: not a lake for this test
    return moves


def episodes() -> dict[str, LakeEpisode]:
    """Navigate's and lifelong's episode on one L0 lake (nothing changes)
    where the replies' moves stay on the ice."""
    instance = next(i for i in dataset.load(None, "L0") if replay(i.grid))
    made: dict[str, LakeEpisode] = {}
    for family in ("navigate", "lifelong"):
        env = DynamicFrozenLakeEnv(instance)
        env.reset()
        made[family] = Episode(env=env, view=[]) if family == "navigate" else LifeEpisode(env=env, index=1)
    return made


def call(function: str, arguments: dict[str, Any], n: int) -> ToolCall:
    return ToolCall(id=f"c{n}", function=function, arguments=arguments)


REPLIES = [
    ChatMessageAssistant(content=LONG),  # prose: no tool call
    ChatMessageAssistant(content="go", tool_calls=[call("move", {"direction": "NORTH"}, 1), call("move", {}, 2)]),
    ChatMessageAssistant(content="", tool_calls=[call("move", {"direction": " right "}, 3)]),
    ChatMessageAssistant(content="", tool_calls=[call("walk", {"direction": "UP"}, 4)]),
]


def test_navigate_and_lifelong_answer_and_log_a_turn_alike() -> None:
    """The same replies on the same lake: the same answers, trajectory,
    counted extra calls and fallback log in both families' episodes, and the
    log is what the contract says (step ended, greedy direction, the reply cut
    to 2,000 characters, its tool calls)."""
    played: dict[str, tuple[list[Any], LakeEpisode]] = {}
    for family, episode in episodes().items():
        episode.trajectory.append(list(episode.agent))
        answers = [play_turn(episode, reply) for reply in REPLIES]
        played[family] = (answers, episode)
    (nav_answers, nav), (life_answers, life) = played["navigate"], played["lifelong"]
    assert [[(type(m), m.text, getattr(m, "tool_call_id", None)) for m in a] for a in nav_answers] == [
        [(type(m), m.text, getattr(m, "tool_call_id", None)) for m in a] for a in life_answers
    ]
    assert nav.fallbacks == life.fallbacks and nav.trajectory == life.trajectory and nav.actions == life.actions
    assert nav.extra_calls == life.extra_calls == 1

    # independently: the moves the contract asks for, and the log of each fallback
    expected = [
        {
            "step": n,
            "direction": direction,
            "reply": reply.text[:2000],
            "tool_calls": [{"function": c.function, "arguments": c.arguments} for c in reply.tool_calls or []],
        }
        for n, (reply, (_, direction)) in enumerate(zip(REPLIES, replay(nav.grid)), start=1)
        if n != 3
    ]
    assert nav.actions == [direction for _, direction in replay(nav.grid)]
    assert [{k: v for k, v in f.items() if k != "problem"} for f in nav.fallbacks] == expected
    assert len(nav.fallbacks[0]["reply"]) == 2000
    assert [f["problem"] for f in nav.fallbacks] == ["no tool call", "invalid direction 'NORTH'", "unknown tool 'walk'"]

    # the answers: a user message for prose, a tool answer per call (later calls ignored)
    assert [type(m) for m in nav_answers[0]] == [ChatMessageUser]
    assert [(type(m), m.tool_call_id) for m in nav_answers[1]] == [(ChatMessageTool, "c1"), (ChatMessageTool, "c2")]
    assert nav_answers[1][1].text.startswith("Ignored")
    assert nav_answers[2][0].text.startswith("Moved RIGHT")


def test_lifelong_sightings_count_a_death_as_a_hole() -> None:
    """Lifelong's episode adds its sightings to the shared step: what is in
    view, and the hole it died in."""
    life = episodes()["lifelong"]
    assert isinstance(life, LifeEpisode)
    life.observe()
    assert set(life.sightings) == {(r, c) for r in range(len(life.grid)) for c in range(len(life.grid[0]))}
    hole = find(life.grid, "H")
    life.env.agent = (hole[0] - 1, hole[1]) if hole[0] > 0 else (hole[0] + 1, hole[1])
    life.step("DOWN" if hole[0] > 0 else "UP")
    assert life.outcome == "death" and life.death_cell == hole and life.sightings[hole] == "H"


def _prose_then_stop():
    while True:
        out = ModelOutput.from_content("mockllm/model", "y" * 2100)
        out.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
        yield out


def test_a_lifelong_run_logs_its_fallbacks_as_navigate_does(tmp_path) -> None:
    """Replies that never move: every step is a fallback, logged with the step
    it ended (1-based), the greedy direction from where the agent stood, and
    the reply cut to 2,000 characters."""
    model = get_model("mockllm/model", custom_outputs=_prose_then_stop())
    (log,) = inspect_eval(
        lifelong(regime="L0", episodes=1, memory="none"), model=model, limit=1, display="none", log_dir=str(tmp_path)
    )
    assert log.status == "success", log.error
    sample = read_eval_log(log.location, resolve_attachments=True).samples[0]
    (record,) = sample.scores["lifelong_scorer"].metadata["episodes"]
    assert len(record["fallbacks"]) == record["steps"] > 0
    life = next(lt for lt in lifetimes.load(None, "L0") if lt.id == sample.id)
    goal = goal_of(life.episodes[0].grid)
    for n, fallback in enumerate(record["fallbacks"], start=1):
        assert fallback["step"] == n and fallback["reply"] == "y" * 2000 and fallback["tool_calls"] == []
        assert fallback["direction"] == record["actions"][n - 1] == greedy(tuple(record["trajectory"][n - 1]), goal)


@pytest.mark.parametrize("epochs", [2])
def test_lifelong_records_the_episode_served_in_the_typed_store(tmp_path, epochs) -> None:
    """The ``random`` agent's salt is the (sample, epoch) lifelong records in
    ``SampleState``: the store holds it, two runs move alike, two epochs of one
    lifetime do not."""
    moves = []
    for run in range(2):
        (log,) = inspect_eval(
            lifelong(regime="L0", episodes=1, memory="none", epochs=epochs), model="spatialstale/random", limit=2,
            display="none", log_dir=str(tmp_path / str(run)),
        )  # fmt: skip
        assert log.status == "success", log.error
        samples = read_eval_log(log.location).samples
        for sample in samples:
            assert sample.store["SampleState:episode"] == [sample.id, sample.epoch]
        moves.append({(s.id, s.epoch): s.scores["lifelong_scorer"].metadata["episodes"][0]["actions"] for s in samples})
    assert moves[0] == moves[1]
    assert any(moves[0][(sid, 1)] != moves[0][(sid, 2)] for sid, _ in moves[0])
