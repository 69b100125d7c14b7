"""``spatialstale-local/<model>``: the Inspect provider for the local server,
with tool calls a small model can make.

SmolLM2's chat template has no tool syntax, so llama.cpp's server ignores an
OpenAI ``tools`` list for it (its chat parser reports ``supports_tools:
false``: the prompt goes out without the tools, and no grammar is set); with
a Hermes-style tool template the parser does recognise ``<tool_call>``, but
its grammar lets free text come first, also with ``tool_choice: required``,
and SmolLM2 never gets past its prose ("1. 1. 1. ..." to the token cap).
This provider makes the calls with two things llama.cpp does do:

- Inspect's own tool emulation (``emulate_tools=True`` of its OpenAI-compatible
  provider): the tools go into a system message as JSON schemas, each call is
  asked for as ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``,
  earlier calls and results are written back as text, and Inspect parses the
  reply into ``ToolCall``s (a malformed one gets a ``parse_error``, as from
  any provider);
- a grammar (llama.cpp's LLGuidance syntax, ``extra_body.grammar``) that holds
  the reply to that shape, with the arguments matching the tool's JSON schema.

``tool_choice`` keeps its meaning: ``"auto"`` lets the model choose, at its
first token, between a call and a plain reply opened by ``message:`` (the
choice llama-cpp-python's ``chatml-function-calling`` format offered; that
opening is removed from the reply); ``"any"`` or a named function forces one
call; ``"none"`` sends no grammar. A request with a ``response_schema`` keeps
it and gets no tool grammar (llama.cpp takes one constraint per request).

Image parts become a text placeholder: SmolLM2 reads text only, and the server
answers an image with HTTP 500 ("image input is not supported"), which
Inspect would retry.

Only Inspect's public API is used: the request goes through
``get_model("openai-api/...", emulate_tools=True)``'s provider.
"""

from __future__ import annotations

import json
import os
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ContentImage,
    ContentText,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    get_model,
)
from inspect_ai.tool import ToolChoice, ToolFunction, ToolInfo

from spatialstale_evals.local_model.config import BASE_URL_VAR, PROVIDER
from spatialstale_evals.local_model.config import base_url as default_base_url

IMAGE_PLACEHOLDER = "[image omitted: this model reads text only]"
#: How a reply that is not a call opens when ``tool_choice`` is ``"auto"``.
MESSAGE_OPENING = "message:"
#: Inspect's tool emulation asks for each call between these tags.
CALL_OPEN, CALL_CLOSE = "<tool_call>", "</tool_call>"


def call_schema(tool: ToolInfo) -> dict[str, Any]:
    """The JSON schema of one call of ``tool``, as Inspect's emulation parses it."""
    return {
        "type": "object",
        "properties": {"name": {"const": tool.name}, "arguments": tool.parameters.model_dump(exclude_none=True)},
        "required": ["name", "arguments"],
        "additionalProperties": False,
    }


def tool_call_grammar(tools: list[ToolInfo], tool_choice: ToolChoice) -> str | None:
    """The grammar for a reply to a request offering ``tools``: exactly one
    call, or (``"auto"``) one call or a plain reply opened by ``message:``;
    None when no call may be made."""
    if isinstance(tool_choice, ToolFunction):
        tools = [tool for tool in tools if tool.name == tool_choice.name]
    if not tools or tool_choice == "none":
        return None
    schemas = [call_schema(tool) for tool in tools]
    schema = schemas[0] if len(schemas) == 1 else {"anyOf": schemas}
    start = f"call | {json.dumps(MESSAGE_OPENING)} /(.|\\n)*/" if tool_choice == "auto" else "call"
    return "\n".join(
        [
            "%llguidance {}",
            f"start: {start}",
            f"call: {json.dumps(CALL_OPEN)} %json {json.dumps(schema)} {json.dumps(CALL_CLOSE)}",
        ]
    )


def text_only(messages: list[ChatMessage]) -> list[ChatMessage]:
    """``messages`` with every image part replaced by :data:`IMAGE_PLACEHOLDER`
    (messages without images are passed as they are)."""
    out = []
    for message in messages:
        if isinstance(message.content, list) and any(isinstance(p, ContentImage) for p in message.content):
            parts = [ContentText(text=IMAGE_PLACEHOLDER) if isinstance(p, ContentImage) else p for p in message.content]
            message = message.model_copy(update={"content": parts})
        out.append(message)
    return out


def without_message_opening(output: ModelOutput) -> ModelOutput:
    """Remove the ``message:`` opening the ``"auto"`` grammar puts before a reply that is not a call."""
    for choice in output.choices:
        text = choice.message.text
        if not choice.message.tool_calls and text.startswith(MESSAGE_OPENING):
            choice.message.content = text[len(MESSAGE_OPENING) :].lstrip()
    return output


class LocalModelAPI(ModelAPI):
    """An OpenAI-compatible llama.cpp server whose tool calls are emulated and grammar-constrained.

    ``--model spatialstale-local/smollm2 --model-base-url http://127.0.0.1:PORT/v1`` (or
    ``$SPATIALSTALE_LOCAL_BASE_URL``; default: port 8765); ``-M`` arguments go to Inspect's
    OpenAI-compatible provider underneath.
    """

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig | None = None,
        **model_args: Any,
    ) -> None:
        base_url = base_url or os.environ.get(BASE_URL_VAR) or default_base_url()
        config = config or GenerateConfig()
        super().__init__(model_name=model_name, base_url=base_url, api_key=api_key, config=config)
        self.inner = get_model(  # inspect-evals-lint: ignore[IEBP001] -- the provider's own OpenAI-compatible client
            f"openai-api/{PROVIDER}/{model_name}",
            config=config,
            base_url=base_url,
            api_key=api_key or "none",  # the local server has no API key
            memoize=False,
            emulate_tools=True,
            **model_args,
        ).api

    async def generate(
        self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice, config: GenerateConfig
    ) -> Any:
        grammar = tool_call_grammar(tools, tool_choice) if config.response_schema is None else None
        if grammar is not None and "grammar" not in (config.extra_body or {}):
            config = config.merge(GenerateConfig(extra_body={**(config.extra_body or {}), "grammar": grammar}))
        result = await self.inner.generate(text_only(input), tools, tool_choice, config)
        output = result[0] if isinstance(result, tuple) else result
        if isinstance(output, ModelOutput) and tool_choice == "auto":
            without_message_opening(output)
        return result

    # What Inspect asks the provider about retries and connections: the answers of the one underneath.
    def should_retry(self, ex: Exception) -> Any:
        return self.inner.should_retry(ex)

    def is_auth_failure(self, ex: Exception) -> bool:
        return self.inner.is_auth_failure(ex)

    def connection_key(self) -> str:
        return self.inner.connection_key()

    def max_connections(self) -> int:
        return self.inner.max_connections()

    async def aclose(self) -> None:
        await self.inner.aclose()
