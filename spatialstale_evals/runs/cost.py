"""The run matrix's cost model: what a planned task costs, counted from the
very prompts the tasks build, without calling a model.

Each family's estimate is its own (``TaskFamily.estimate``: ``detection/cost.py``,
``navigation/cost.py``, ``probing/cost.py``, ``stale_corpus/cost.py``, ...);
this module reads the registry only: it fills in the task's defaults,
supplies the models that stand in for the agent and the task's model roles
(the scripted agents the family names, ``TaskFamily.cost_agents``: the
``observer`` by default, counted as the scripted provider counts tokens:
ceil(characters / 4), 255 per image). Its calls name the family, never a
family's function: ``estimate_cost(family, instances, **args)`` is (low,
high) for every family, ``task_settings(family, **args)`` its settings
object. Detection is exact, probing exact for replies as long as
the observer's, navigation two bounds (``navigation/cost.py``); the stale
task runs its own probe loop and judge prompt on its corpus file.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput
from inspect_ai.tool import ToolInfo

from spatialstale_evals.harness.belief import audit_reply
from spatialstale_evals.harness.cost import Cost, audit_cost
from spatialstale_evals.harness.family import ScriptedAgent, families
from spatialstale_evals.harness.params import defaults
from spatialstale_evals.scripted.api import ScriptedAPI, conform, last_prompt
from spatialstale_evals.world.instance import Instance

__all__ = [
    "Cost",
    "ScriptedStandIn",
    "audit_cost",
    "estimate_cost",
    "stand_ins",
    "task_settings",
]


class ScriptedStandIn:
    """A stand-in for the model in a task's own loop (``probing.probe_target``,
    ``stale_corpus.asking.ask``, ``stale_corpus.scoring.judge``) and in the
    audits an estimate counts: the scripted agent ``spatialstale/<policy>``
    answering exactly as its provider does, its calls and tokens summed."""

    def __init__(self, policy: str = "observer", agent: ScriptedAgent | None = None) -> None:
        self.policy, self.api, self.cost = policy, ScriptedAPI(policy), Cost()
        if agent is not None:  # another agent of the family, not served by the provider (a cost bound's)
            self.api.agent = agent

    async def generate(
        self,
        input: list[ChatMessage],
        tools: Sequence[ToolInfo] = (),
        config: GenerateConfig | None = None,
        tool_choice: Any = "auto",
        **_: Any,
    ) -> ModelOutput:
        tools = [] if tool_choice == "none" else tools  # as Inspect sends a request that asks for no tool call
        output = await self.api.generate(list(input), list(tools), "auto", config or GenerateConfig())
        usage = output.usage
        self.cost += Cost(1, usage.input_tokens if usage else 0, usage.output_tokens if usage else 0)
        return output

    def reply_text(self, messages: list[ChatMessage], config: GenerateConfig) -> str:
        return conform(audit_reply(self.policy, last_prompt(messages)), config)

    def answering(self, agent: ScriptedAgent) -> ScriptedStandIn:
        return ScriptedStandIn(self.policy, agent)


def full_args(family: str, args: dict[str, Any]) -> dict[str, Any]:
    """``args`` over the family's task defaults (read off its signature)."""
    return defaults(families()[family].task_function()) | args


def stand_ins(family: str) -> tuple[ScriptedStandIn, dict[str, ScriptedStandIn]]:
    """The stand-ins of the ``family`` task's agent and of each of its model
    roles: the scripted agents its entry names (``TaskFamily.cost_agents``)."""
    agents = dict(families()[family].cost_agents)
    model = ScriptedStandIn(agents.pop("model", "observer"))
    return model, {role: ScriptedStandIn(policy) for role, policy in agents.items()}


def estimate_cost(family: str, instances: Sequence[Instance], **args: Any) -> tuple[Cost, Cost]:
    """(low, high) of the ``family`` task of ``args`` over ``instances``, its
    agent and model roles together, against the scripted agents its entry
    names (``stand_ins``); (0, 0) for a family without an estimate. Exact
    estimates (detect; probe for the observer) give low == high. The one
    estimate of ``runs/``: the family's ``TaskFamily.estimate`` (each
    family's ``cost.estimate``: instances, every argument, stand-ins) with
    the task's defaults filled in and the stand-ins supplied."""
    entry = families()[family]
    if entry.estimate is None:
        return Cost(), Cost()
    model, roles = stand_ins(family)
    return entry.estimate(instances, full_args(family, args), model, roles)


def task_settings(family: str, **args: Any) -> Any:
    """The settings object of the ``family`` task of these arguments (the rest
    at the task's defaults), as its registry entry builds it (``TaskFamily.settings``)."""
    build = families()[family].settings
    if build is None:
        raise ValueError(f"the {family} family registers no settings")
    return build(full_args(family, args))
