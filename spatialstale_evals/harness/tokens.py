"""How the suite counts tokens without a tokenizer (the scripted provider's
usage, the cost estimates and the stale task's history budget): one token per
4 characters of text, rounded up, over every message and tool definition sent,
plus 255 per image (one 512 px tile at OpenAI's high-detail rate). Machine- and
provider-independent, so a trimmed history is the same on every machine.
"""

from __future__ import annotations

import json
import math

from inspect_ai.model import ChatMessage, ContentImage, ContentText
from inspect_ai.tool import ToolInfo

IMAGE_TOKENS = 255
CHARS_PER_TOKEN = 4


def count_text_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def count_input_tokens(messages: list[ChatMessage], tools: list[ToolInfo]) -> int:
    total = 0
    for message in messages:
        if isinstance(message.content, str):
            total += count_text_tokens(message.content)
        else:
            for part in message.content:
                if isinstance(part, ContentImage):
                    total += IMAGE_TOKENS
                elif isinstance(part, ContentText):
                    total += count_text_tokens(part.text)
        for call in getattr(message, "tool_calls", None) or []:
            total += count_text_tokens(call.function + json.dumps(call.arguments))
    for tool in tools:
        total += count_text_tokens(tool.model_dump_json(exclude_none=True))
    return total
