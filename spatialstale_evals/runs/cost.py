"""The run matrix's cost model: what a planned task costs, counted from the
very prompts the tasks build, without calling a model.

Each family's estimate is its own (``TaskFamily.estimate``: ``detection/cost.py``,
``navigation/cost.py``, ``probing/cost.py``); this module fills in the task's
defaults, supplies the model that stands in for the agent (the scripted
``observer``, counted as the scripted provider counts tokens: ceil(characters
/ 4), 255 per image) and keeps the calls that benchmarks and tests use by name.
Detection is exact, probing exact for replies as long as the observer's,
navigation two bounds (``navigation/cost.py``). The stale task's estimate runs
its own probe loop and judge prompt on a corpus file (``estimate_stale``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput
from inspect_ai.tool import ToolInfo, memory

from spatialstale_evals.harness.belief import audit_reply
from spatialstale_evals.harness.cost import Cost, audit_cost
from spatialstale_evals.harness.family import ScriptedAgent, families
from spatialstale_evals.harness.memory_tool import primed
from spatialstale_evals.harness.params import defaults
from spatialstale_evals.navigation.cost import MOVE_OUTPUT_TOKENS, step_prompt_tokens
from spatialstale_evals.scripted.api import ScriptedAPI, conform, last_prompt
from spatialstale_evals.stale_corpus.asking import StaleSettings, ask
from spatialstale_evals.stale_corpus.corpus import load_corpus
from spatialstale_evals.stale_corpus.memory_access import ask_from_memory, memory_files
from spatialstale_evals.stale_corpus.scoring import judge, judge_messages
from spatialstale_evals.stale_corpus.scripted import BOUND_READERS
from spatialstale_evals.world.instance import Instance

__all__ = [
    "MOVE_OUTPUT_TOKENS",
    "Cost",
    "ScriptedStandIn",
    "audit_cost",
    "estimate",
    "estimate_detect",
    "estimate_navigate",
    "estimate_probe",
    "estimate_stale",
    "step_prompt_tokens",
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


def full_args(family: str, args: dict[str, Any]) -> dict[str, Any]:
    """``args`` over the family's task defaults (read off its signature)."""
    return defaults(families()[family].task_function()) | args


def estimate(family: str, instances: Sequence[Instance], **args: Any) -> tuple[Cost, Cost]:
    """(low, high) of the ``family`` task of ``args`` over ``instances``, against
    the scripted ``observer``; (0, 0) for a family without an estimate."""
    entry = families()[family]
    if entry.estimate is None:
        return Cost(), Cost()
    return entry.estimate(instances, full_args(family, args), ScriptedStandIn("observer"))


def task_settings(family: str, **args: Any) -> Any:
    """The settings object of the ``family`` task of these arguments (the rest
    at the task's defaults), as its registry entry builds it (``TaskFamily.settings``)."""
    build = families()[family].settings
    if build is None:
        raise ValueError(f"the {family} family registers no settings")
    return build(full_args(family, args))


def detect_settings(**args: Any) -> Any:
    """The settings of the detect task of these arguments (``DetectionSettings``)."""
    return task_settings("detect", **args)


def navigate_settings(**args: Any) -> Any:
    """The settings of the navigate task of these arguments (``NavigationSettings``;
    ``max_steps`` None: each instance's budget)."""
    return task_settings("navigate", **args)


def probe_settings(**args: Any) -> Any:
    """The settings of the probe task of these arguments (``ProbeSettings``)."""
    return task_settings("probe", **args)


# The three below are the matrix's estimate of one family by keyword
# arguments (one Cost, or the bounds); each family's own ``cost.estimate``
# is its registry entry's contract: (instances, every argument, stand-in) -> (low, high).


def estimate_detect(instances: Sequence[Instance], **args: Any) -> Cost:
    """Exact: every window of every instance, audited in batches, for the
    detect task of these arguments (``modality``, ``batch_size``, its factors)."""
    return estimate("detect", instances, **args)[1]


def estimate_navigate(instances: Sequence[Instance], *, epochs: int, **args: Any) -> tuple[Cost, Cost]:
    """(low, high) for ``epochs`` episodes per instance of the navigate task of these arguments."""
    return estimate("navigate", instances, epochs=epochs, **args)


def estimate_probe(instances: Sequence[Instance], **args: Any) -> Cost:
    """Exact for the ``observer`` agent (and any agent whose replies are as long)."""
    return estimate("probe", instances, **args)[1]


def estimate_stale(bound: str | None = None, **args: Any) -> tuple[int, Cost, Cost]:
    """(scenarios, agent cost, judge cost) of the stale task of these arguments
    (its ``path`` required): its own samples (validated and trimmed) and its own
    probe loop and judge prompt, against ``stale-aware`` and ``judge``. Input
    tokens are exact for any agent in ``independent`` mode (the prompts do not
    depend on the answers); output tokens, the judge's input and ``shared``
    mode grow with the answers, which a real model writes longer.

    With ``memory_access=tool`` the loop reads the memory tool's own answers on
    each record's primed files: ``stale-aware``'s reads by default, or a bound
    (``bound``): ``low``, one view of the folder in every conversation; ``high``,
    the folder and every session file read once in every conversation (each
    probe's in ``independent`` mode, the scenario's in ``shared``), within no cap
    (``stale_corpus.scripted.BOUND_READERS``)."""
    task = families()["stale"].task_function()(**args)
    meta = task.metadata or {}
    tool = meta.get("memory_access") == "tool"
    if bound is not None and not tool:
        raise ValueError("the cost bounds are the memory-tool setting's (memory_access=tool): the prompt's is exact")
    cap = meta.get("max_memory_calls") if bound is None else 10**6
    settings = StaleSettings(tuple(meta["dimensions"]), meta["conversation"], cap)
    reader = BOUND_READERS[bound] if bound else None
    agent = ScriptedStandIn("stale-aware", (lambda m, t, seed: reader(m, t)) if reader else None)
    grader = ScriptedStandIn("judge")
    records = {r.uid: r for r in load_corpus(task.dataset.location or "").records} if tool else {}

    async def ask_all() -> None:
        for sample in task.dataset:
            history = sample.input if isinstance(sample.input, list) else []
            answers: dict[str, dict[str, Any]] = {}
            if tool:
                record = records[str(sample.id)]
                with primed(memory_files(record)):
                    await ask_from_memory(agent, history, record, settings, answers, memory())  # type: ignore[arg-type]
            else:
                await ask(agent, history, (sample.metadata or {})["queries"], settings, answers)  # type: ignore[arg-type]
            await judge(grader, judge_messages(sample.metadata or {}, answers), list(answers))  # type: ignore[arg-type]

    asyncio.run(ask_all())
    return len(task.dataset), agent.cost, grader.cost
