"""The chat template: llama-cpp-python's ``chatml-function-calling`` format with
Inspect's messages made plain text first.

Why a wrapper: that template writes ``{{ message.content }}`` into the prompt
with HTML autoescaping on. Inspect sends every multi-part message as an OpenAI
content list, which would reach the model as a Python repr with ``&#39;`` for
each quote, and every ``"`` in a plain string would become ``&#34;``; the
template also drops ``tool`` results. :func:`text_messages` fixes all three
before the stock handler renders the prompt.

The wrapped format exists only inside the server process: llama-cpp-python
looks chat formats up in a per-process registry, so ``python -m
spatialstale_evals.local_model`` (see ``__main__.py``) calls
:func:`register_chat_format` before the server reads its arguments.
``markupsafe`` and ``llama_cpp`` are imported where they are used, so this
module imports without the [local] extra.
"""

from __future__ import annotations

from typing import Any

# llama-cpp-python's ``chatml-function-calling`` format, with the messages
# made plain text first (see ``text_messages``). The stock format is still
# available (``start(chat_format=STOCK_CHAT_FORMAT)``) for comparison.
STOCK_CHAT_FORMAT = "chatml-function-calling"
CHAT_FORMAT = "spatialstale-chatml-function-calling"
IMAGE_PLACEHOLDER = "[image omitted: this model reads text only]"


def _plain(content: Any) -> Any:
    """A content list as its text parts joined by newlines (images as a
    placeholder), and any string marked safe so the template does not escape it."""
    from markupsafe import Markup

    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text":
                texts.append(str(part.get("text", "")))
            elif isinstance(part, dict) and part.get("type") in ("image_url", "input_image", "image"):
                texts.append(IMAGE_PLACEHOLDER)
            else:
                texts.append(str(part))
        content = "\n".join(texts)
    return Markup(content) if isinstance(content, str) else content


def _plain_tool_calls(tool_calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Copies of ``tool_calls`` whose string ``arguments`` are marked safe."""
    from markupsafe import Markup

    calls = []
    for call in tool_calls:
        call = dict(call)
        function = dict(call.get("function") or {})
        if isinstance(function.get("arguments"), str):
            function["arguments"] = Markup(function["arguments"])
        call["function"] = function
        calls.append(call)
    return calls


def text_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat messages as the ``chatml-function-calling`` template can render them.

    A content list becomes its text parts joined by newlines (images become a
    placeholder: SmolLM2 reads text only), every string is marked safe so it
    is not escaped, and ``tool`` results (which the template drops) become a
    user turn. The input messages are not modified.
    """
    out = []
    for message in messages:
        message = dict(message)
        if message.get("role") == "tool":
            name = message.get("name") or "tool"
            message = {"role": "user", "content": f"Result of {name}: {_plain(message.get('content')) or ''}"}
        if "content" in message:
            message["content"] = _plain(message["content"])
        if message.get("tool_calls"):
            message["tool_calls"] = _plain_tool_calls(message["tool_calls"])
        out.append(message)
    return out


def register_chat_format() -> None:
    """Register :data:`CHAT_FORMAT` with llama-cpp-python (in the server process)."""
    # llama_cpp is llama-cpp-python's import name, declared in the [local] extra. inspect-evals-lint
    # maps import names to distributions only through installed metadata (and has no setting to add
    # one), so without the extra it takes this for an undeclared package "llama-cpp" (IECQ004).
    from llama_cpp import llama_chat_format  # inspect-evals-lint: ignore[IECQ004] -- llama-cpp-python, [local] extra

    stock = llama_chat_format.get_chat_completion_handler(STOCK_CHAT_FORMAT)

    def handler(*args: Any, messages: list[dict[str, Any]], **kwargs: Any) -> Any:
        return stock(*args, messages=text_messages(messages), **kwargs)

    registry = llama_chat_format.LlamaChatCompletionHandlerRegistry()
    registry.register_chat_completion_handler(CHAT_FORMAT, handler, overwrite=True)
