"""``spatialstale/<policy>``: the scripted reference agents as an Inspect
model provider, so they run from the CLI, in ``eval_set`` and under
``inspect eval-retry`` like any model.

    inspect eval spatialstale_evals/navigate.py --model spatialstale/observer
    inspect eval spatialstale_evals/detect.py --model spatialstale/random -M seed=7
    inspect eval spatialstale_evals/navigate.py --model spatialstale/observer -M latency_ms=500 --max-connections 50

A task family's own scripted agents (``TaskFamily.scripted_agents``: the stale
task's ``stale-aware``, ``stale-naive`` and ``judge``, from
``stale_corpus/scripted.py``; the lifelong task's ``diligent``, ``write_once``,
``amnesiac`` and ``credulous``, from ``lifetime/scripted.py``) are served here too, by name.

With the memory tool offered (``navigate -T memory_access=tool``) the
policies that use memory (``memory``, ``mixed``) view ``/memories/lake.md``
whenever the request holds no answer to such a view, and read their entries
there (``navigation.memory_access.fetch_or_read``); ``-M read_memory=false``
makes them never read (so they play as with ``no_memory``).

``-M latency_ms=L`` makes every call wait L milliseconds (an ``asyncio``
sleep, not a busy wait) before it answers, as a remote API does: what the
harness does with a slow provider (how busy it keeps its connections) is then
measurable without one (``benchmarks/latency.py``). The answers and the counted
tokens do not change.

Token usage is counted the same way for every policy (and is what the docs'
token tables report for scripted runs): ``harness/tokens.py`` over every
message and tool definition sent; output tokens likewise over the reply text
and tool-call arguments.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageUser,
    ContentImage,
    ContentText,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.tool import ToolChoice, ToolInfo
from inspect_ai.util import store

from spatialstale_evals.harness.family import scripted_agents
from spatialstale_evals.harness.observe import Prompt
from spatialstale_evals.harness.samples import EPISODE_KEY
from spatialstale_evals.harness.schemas import VERDICTS
from spatialstale_evals.harness.tokens import count_input_tokens, count_text_tokens
from spatialstale_evals.navigation.memory_access import fetch_or_read
from spatialstale_evals.scripted.agents import POLICIES, audit_reply, move_choice, probe_reply

#: What a built-in policy replies to a turn whose tools it does not use.
NO_NOTES = "Nothing to note."
#: The built-in policies that use memory, so read it when it is behind the memory tool.
READS_MEMORY = ("memory", "mixed")


def family_agents() -> dict[str, Any]:
    """The task families' own scripted agents (``TaskFamily.scripted_agents``), in
    one namespace with the built-in policies: a name may mean one agent only."""
    agents = scripted_agents()
    if set(POLICIES) & set(agents):
        raise RuntimeError(f"scripted agents named twice: {sorted(set(POLICIES) & set(agents))}")
    return agents


def last_prompt(messages: list[ChatMessage]) -> Prompt:
    user = next((m for m in reversed(messages) if isinstance(m, ChatMessageUser)), None)
    if user is None:
        return Prompt("", ())
    if isinstance(user.content, str):
        return Prompt(user.content, ())
    texts = [p.text for p in user.content if isinstance(p, ContentText)]
    images = [p.image for p in user.content if isinstance(p, ContentImage)]
    return Prompt("\n".join(texts), tuple(images))


def _with_usage(output: ModelOutput, usage_in: int, out_tokens: int) -> ModelOutput:
    output.usage = ModelUsage(input_tokens=usage_in, output_tokens=out_tokens, total_tokens=usage_in + out_tokens)
    return output


def move_output(model: str, direction: str, call_id: str, usage_in: int) -> ModelOutput:
    """One ``move(direction)`` call, with tokens counted as documented above."""
    output = ModelOutput.for_tool_call(model, "move", {"direction": direction}, tool_call_id=call_id, content="")
    return _with_usage(output, usage_in, count_text_tokens("move" + json.dumps({"direction": direction})))


def text_output(model: str, text: str, usage_in: int) -> ModelOutput:
    """A plain reply, with tokens counted as documented above."""
    return _with_usage(ModelOutput.from_content(model, text), usage_in, count_text_tokens(text))


def conform(reply: str, config: GenerateConfig) -> str:
    """The reply in the shape of the request's ``response_schema``, as a provider
    that constrains replies gives it: an audit's verdict list under ``verdicts``."""
    schema = config.response_schema
    if schema is not None and VERDICTS in (schema.json_schema.properties or {}) and reply.lstrip().startswith("["):
        return json.dumps({VERDICTS: json.loads(reply)})
    return reply


def episode_salt() -> tuple[Any, ...] | None:
    """(sample id, epoch) of the episode being served, as its solver recorded it."""
    key = store().get(EPISODE_KEY)
    return tuple(key) if key else None


def _latency_seconds(value: int | float | str) -> float:
    """``latency_ms`` as seconds; a clear error for anything but a finite number >= 0."""
    try:
        ms = float(value)
    except (TypeError, ValueError):
        ms = float("nan")
    if isinstance(value, bool) or not 0 <= ms < float("inf"):
        raise ValueError(f"latency_ms must be a number of milliseconds >= 0; got {value!r}")
    return ms / 1000


class ScriptedAPI(ModelAPI):
    """Answers audits with JSON verdicts, probe questions with a JSON answer
    and navigation prompts (and implicit probes) with one ``move`` call."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig | None = None,
        seed: int | str = 0,
        latency_ms: int | float | str = 0,
        read_memory: bool = True,
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())
        self.agent = family_agents().get(model_name)
        if model_name not in POLICIES and self.agent is None:
            names = "|".join((*POLICIES, *family_agents()))
            raise ValueError(f"unknown scripted policy {model_name!r}; expected spatialstale/<{names}>")
        if model_args:
            raise ValueError(f"unknown model args for spatialstale/{model_name}: {sorted(model_args)}")
        self.policy = model_name
        self.seed = int(seed)
        self.latency = _latency_seconds(latency_ms)
        if not isinstance(read_memory, bool):
            raise ValueError(f"read_memory must be true or false; got {read_memory!r}")
        self.read_memory = read_memory and model_name in READS_MEMORY

    def max_connections(self) -> int:
        return 64

    async def count_tokens(self, input: str | list[ChatMessage], config: GenerateConfig | None = None) -> int:
        """Tokens as this provider's usage counts them (``harness/tokens.py``), so
        Inspect's compaction handler counts a request as its usage reports it."""
        return count_text_tokens(input) if isinstance(input, str) else count_input_tokens(input, [])

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        if self.latency:
            await asyncio.sleep(self.latency)
        usage_in = count_input_tokens(input, tools)
        if self.agent is not None:
            reply = self.agent(input, tools, self.seed)
            if isinstance(reply, str):
                return text_output(self.model_name, reply, usage_in)
            out_tokens = sum(
                count_text_tokens(c.function + json.dumps(c.arguments)) for c in reply.message.tool_calls or []
            )
            reply.model = self.model_name
            return (
                reply
                if reply.usage
                else _with_usage(reply, usage_in, out_tokens + count_text_tokens(reply.message.text))
            )
        prompt = last_prompt(input)
        salt = episode_salt()
        if any(t.name == "move" for t in tools):
            fetched = fetch_or_read(self.model_name, input, tools) if self.read_memory else None
            if isinstance(fetched, ModelOutput):
                call = fetched.message.tool_calls[0]  # type: ignore[index]
                return _with_usage(fetched, usage_in, count_text_tokens(call.function + json.dumps(call.arguments)))
            prompt = Prompt(f"{prompt.text}\n{fetched}", prompt.images) if fetched else prompt
            direction = move_choice(self.policy, prompt, self.seed, salt)
            call_id = "call_" + hashlib.sha256(prompt.text.encode()).hexdigest()[:12]
            return move_output(self.model_name, direction, call_id, usage_in)
        if tools:
            # A turn that offers only other tools (lifelong's write-back offers the
            # memory tool): the built-in policies keep no notes, so they end the turn.
            return text_output(self.model_name, NO_NOTES, usage_in)
        reply = probe_reply(self.policy, prompt, self.seed, salt) or audit_reply(self.policy, prompt, self.seed, salt)
        return text_output(self.model_name, conform(reply, config), usage_in)
