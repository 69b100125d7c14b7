"""With a Claude model, Inspect sends the lifelong task's memory tool as
Anthropic's native memory tool: the tool definitions the provider builds for
the two tools the loop passes (request inspection, no key, no call). Skipped
where the ``anthropic`` SDK is not installed."""

from __future__ import annotations

import pytest
from inspect_ai.model import GenerateConfig, get_model

from spatialstale_evals.harness.move import MOVE_TOOL
from spatialstale_evals.lifetime.cost import memory_info


@pytest.mark.parametrize("model,native", [("claude-sonnet-4-5", True), ("claude-3-5-haiku-latest", False)])
def test_claude_gets_the_native_memory_tool(monkeypatch, model, native):
    pytest.importorskip("anthropic")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-used")
    api = get_model(f"anthropic/{model}").api
    params = [p for tool in (MOVE_TOOL, memory_info()) for p in api.tool_params_for_tool_info(tool, GenerateConfig())]
    by_name = {p["name"]: p for p in params}
    assert by_name["move"]["input_schema"]["properties"]["direction"]["enum"] == ["UP", "DOWN", "LEFT", "RIGHT"]
    if native:
        assert by_name["memory"] == {"type": "memory_20250818", "name": "memory"}
    else:  # older models get it as a plain function tool with the same parameters
        assert "input_schema" in by_name["memory"] and "command" in by_name["memory"]["input_schema"]["properties"]
