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

The built-in policies (``observer``, ``memory``, ``mixed``, ``random``: their
belief and route in ``harness/belief.py``) answer each family's turns as the
family says (``TaskFamily.scripted_reply``, its ``scripted.py``): the
provider asks the registered families in turn and takes the first reply; a
turn none claims gets ``harness.scripted_turn.unclaimed``. With the memory
tool offered (``navigate -T memory_access=tool``, ``lifelong``) the policies
that use memory (``memory``, ``mixed``) view ``/memories/lake.md`` whenever
the request holds no answer to such a view, and read their entries there
(``harness.scripted_turn.move``); ``-M read_memory=false`` makes them never
read (so they play as with ``no_memory``).

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

from spatialstale_evals.harness.belief import POLICIES, READS_MEMORY
from spatialstale_evals.harness.family import families, scripted_agents
from spatialstale_evals.harness.observe import Prompt
from spatialstale_evals.harness.samples import EPISODE_KEY
from spatialstale_evals.harness.schemas import VERDICTS
from spatialstale_evals.harness.scripted_turn import NO_NOTES, ScriptedTurn, unclaimed
from spatialstale_evals.harness.tokens import count_input_tokens, count_text_tokens

__all__ = ["NO_NOTES", "ScriptedAPI", "family_reply", "last_prompt", "move_output", "text_output"]


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


def family_reply(turn: ScriptedTurn) -> str | ModelOutput:
    """A built-in policy's reply to ``turn``: the first family's that claims it
    (``TaskFamily.scripted_reply``, in registration order), else ``unclaimed``."""
    for family in families().values():
        if family.scripted_reply is not None and (reply := family.scripted_reply(turn)) is not None:
            return reply
    return unclaimed(turn)


def tool_output(model: str, output: ModelOutput, usage_in: int, with_text: bool = True) -> ModelOutput:
    """A reply with tool calls, under ``model``, with tokens counted as documented
    above (when its maker counted none): each call's function and arguments, and
    (``with_text``) its text; a built-in policy's calls carry none of their own
    (Inspect's ``for_tool_call`` puts a placeholder beside a call), so theirs is not counted."""
    output.model = model
    if output.usage:
        return output
    calls = sum(count_text_tokens(c.function + json.dumps(c.arguments)) for c in output.message.tool_calls or [])
    return _with_usage(output, usage_in, calls + (count_text_tokens(output.message.text) if with_text else 0))


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
    """Serves a family's own scripted agent by name, or a built-in policy
    through the families' replies (``family_reply``)."""

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
        else:
            prompt, salt = last_prompt(input), episode_salt()
            turn = ScriptedTurn(self.policy, self.model_name, input, tools, prompt, self.seed, salt, self.read_memory)
            reply = family_reply(turn)
            if isinstance(reply, str):
                reply = conform(reply, config)
        if isinstance(reply, str):
            return text_output(self.model_name, reply, usage_in)
        return tool_output(self.model_name, reply, usage_in, with_text=self.agent is not None)
