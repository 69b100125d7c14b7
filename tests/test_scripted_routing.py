"""The built-in scripted policies' routing (``scripted/api.family_reply``):
each family answers its own turns (``TaskFamily.scripted_reply``) and None
to the others', and a family registered from outside the package serves the
policies in its turns with no edit to the provider."""

from __future__ import annotations

import asyncio
import json
import math

import pytest
from inspect_ai.model import ChatMessageUser, GenerateConfig, ModelOutput
from inspect_ai.tool import ToolInfo, ToolParams

from spatialstale_evals.harness.audit import audit_messages
from spatialstale_evals.harness.family import TaskFamily, families, register_family, unregister_family
from spatialstale_evals.harness.move import MOVE_TOOL
from spatialstale_evals.harness.observe import Prompt
from spatialstale_evals.harness.prompts import NAVIGATE_STEP, TEXT_OBSERVATION
from spatialstale_evals.harness.samples import InstanceSet
from spatialstale_evals.harness.scripted_turn import NO_NOTES, ScriptedTurn
from spatialstale_evals.lifetime.prompts import NEXT_EPISODE, WRITE_BACK
from spatialstale_evals.probing.prompts import PROBE_EXPLICIT
from spatialstale_evals.scripted.api import ScriptedAPI, last_prompt
from spatialstale_evals.world.grid import HOLE, goal_of, start_of
from spatialstale_evals.world.observation import text_observation

INSTANCE = next(iter(InstanceSet.load(None, "L1", "8x8").by_id.values()))
GRID = INSTANCE.final_grid()
PAINT = ToolInfo(name="paint", description="Paint a cell.", parameters=ToolParams())
MEMORY = ToolInfo(name="memory", description="Your notes.", parameters=ToolParams())


def _step_text() -> str:
    (row, col), (goal_row, goal_col) = start_of(GRID), goal_of(GRID)
    observed = TEXT_OBSERVATION.format(observation=text_observation(GRID, (row, col)))
    return f"{observed}\n" + NAVIGATE_STEP.format(row=row, col=col, goal_row=goal_row, goal_col=goal_col, steps_left=9)


def _turn(messages, tools=()) -> ScriptedTurn:
    return ScriptedTurn("observer", "observer", messages, list(tools), last_prompt(messages))


def _audit() -> ScriptedTurn:
    return _turn(audit_messages(GRID, (0, 0), INSTANCE.memory[:3], "text", "binary"))


def _hole() -> tuple[int, int]:
    return next((r, c) for r, row in enumerate(GRID) for c, kind in enumerate(row) if kind == HOLE)


def _question() -> ScriptedTurn:
    row, col = _hole()
    return _turn([ChatMessageUser(content=f"{_step_text()}\n{PROBE_EXPLICIT.format(row=row, col=col)}")])


def _move() -> ScriptedTurn:
    return _turn([ChatMessageUser(content=_step_text())], [MOVE_TOOL])


def _write_back() -> ScriptedTurn:
    text = WRITE_BACK.format(
        episode=1,
        episodes=2,
        outcome="success",
        steps=14,
        next_episode=NEXT_EPISODE.format(episode=2),
        max_memory_calls=5,
    )
    return _turn([ChatMessageUser(content=text)], [MEMORY])


def claims(turn: ScriptedTurn) -> set[str]:
    """The families whose hook answers ``turn``."""
    return {n for n, f in families().items() if f.scripted_reply and f.scripted_reply(turn) is not None}


def test_each_family_answers_its_own_turns_and_no_other() -> None:
    assert claims(_audit()) == {"detect", "navigate"}  # navigate's strategies audit as detect does
    assert claims(_question()) == {"probe"}
    assert claims(_move()) == {"navigate", "probe", "lifelong"}  # probe's implicit probe, lifelong's steps
    assert claims(_write_back()) == {"lifelong"}
    # turns that two families share in form get one reply, whoever answers first
    for turn in (_audit(), _move()):
        replies = {repr(_plain(f.scripted_reply(turn))) for f in families().values() if f.scripted_reply}
        assert len(replies - {"None"}) == 1
    verdicts = json.loads(families()["detect"].scripted_reply(_audit()))  # type: ignore[misc]
    assert [v["is_stale"] for v in verdicts] == [
        (e.claim == "DANGER") != (GRID[e.cell[0]][e.cell[1]] == HOLE) for e in INSTANCE.memory[:3]
    ]
    row, col = _hole()
    answer = json.loads(families()["probe"].scripted_reply(_question()))  # type: ignore[misc]
    assert answer["cell"] == [row, col] and answer["state"] == "DANGER"  # the observer sees the hole
    assert families()["lifelong"].scripted_reply(_write_back()) == NO_NOTES  # type: ignore[misc]


def _plain(reply: object) -> object:
    if isinstance(reply, ModelOutput):
        return [(c.function, c.arguments, c.id) for c in reply.message.tool_calls or []]
    return reply


@pytest.fixture
def painter():
    def reply(turn: ScriptedTurn) -> ModelOutput | None:
        if not turn.offers("paint"):
            return None
        return ModelOutput.for_tool_call(turn.model, "paint", {"policy": turn.policy}, tool_call_id="p1", content="")

    family = register_family(TaskFamily(name="toy_painter", scorer="match", scripted_reply=reply))
    yield family
    unregister_family(family.name)


def test_a_family_registered_outside_the_package_serves_the_built_in_policies(painter) -> None:
    messages = [ChatMessageUser(content="Paint something.")]
    out = asyncio.run(ScriptedAPI("mixed").generate(messages, [PAINT], "auto", GenerateConfig()))
    [call] = out.message.tool_calls or []
    assert (call.function, call.arguments) == ("paint", {"policy": "mixed"}) and out.model == "mixed"
    assert out.usage is not None and out.usage.output_tokens == math.ceil(len('paint{"policy": "mixed"}') / 4)
    unregister_family(painter.name)  # without it, the turn is no family's: the policy ends it
    out = asyncio.run(ScriptedAPI("mixed").generate(messages, [PAINT], "auto", GenerateConfig()))
    assert out.message.text == NO_NOTES and not out.message.tool_calls


def test_a_prompt_is_what_the_last_user_turn_shows() -> None:
    assert _question().prompt == Prompt(_question().messages[-1].text)
