"""What a stale run costs without calling a model: its own samples
(validated and trimmed), its own probe loop and judge prompt, against stand-ins
for the agent and the grader (``runs/cost.py`` supplies scripted ones:
``stale-aware`` and ``judge``, the family's ``cost_agents``), their calls and
tokens counted as the scripted provider counts them.

Input tokens are exact for any agent in ``independent`` mode (the prompts do
not depend on the answers); output tokens, the judge's input and ``shared``
mode grow with the answers, which a real model writes longer. With
``memory_access=tool`` the loop reads the memory tool's own answers on each
record's primed files, as far as the agent reads: the stand-in's reads, or a
bound (``BOUND_READERS``): ``low``, one view of the folder in every
conversation; ``high``, the folder and every session file read once in every
conversation (each probe's in ``independent`` mode, the scenario's in
``shared``), within no cap.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from inspect_ai.tool import memory

from spatialstale_evals.harness.cost import Cost, StandIn
from spatialstale_evals.harness.family import families
from spatialstale_evals.harness.memory_tool import primed
from spatialstale_evals.stale_corpus.asking import StaleSettings, ask
from spatialstale_evals.stale_corpus.corpus import load_corpus
from spatialstale_evals.stale_corpus.memory_access import ask_from_memory, memory_files
from spatialstale_evals.stale_corpus.scoring import judge, judge_messages
from spatialstale_evals.stale_corpus.scripted import BOUND_READERS


def stale_cost(model: StandIn, grader: StandIn, bound: str | None = None, **args: Any) -> tuple[int, Cost, Cost]:
    """(scenarios, agent cost, judge cost) of the stale task of ``args`` (its
    ``path`` required), ``model`` answering (or, with ``bound``, the memory-tool
    setting's bound reader in its place) and ``grader`` judging."""
    task = families()["stale"].task_function()(**args)
    meta = task.metadata or {}
    tool = meta.get("memory_access") == "tool"
    if bound is not None and not tool:
        raise ValueError("the cost bounds are the memory-tool setting's (memory_access=tool): the prompt's is exact")
    cap = meta.get("max_memory_calls") if bound is None else 10**6
    settings = StaleSettings(tuple(meta["dimensions"]), meta["conversation"], cap)
    if bound is not None:
        reader = BOUND_READERS[bound]
        model = model.answering(lambda messages, tools, seed: reader(messages, tools))
    records = {r.uid: r for r in load_corpus(task.dataset.location or "").records} if tool else {}
    agent_before, judge_before = model.cost, grader.cost

    async def ask_all() -> None:
        for sample in task.dataset:
            history = sample.input if isinstance(sample.input, list) else []
            answers: dict[str, dict[str, Any]] = {}
            if tool:
                record = records[str(sample.id)]
                with primed(memory_files(record)):
                    await ask_from_memory(model, history, record, settings, answers, memory())  # type: ignore[arg-type]
            else:
                await ask(model, history, (sample.metadata or {})["queries"], settings, answers)  # type: ignore[arg-type]
            await judge(grader, judge_messages(sample.metadata or {}, answers), list(answers))  # type: ignore[arg-type]

    asyncio.run(ask_all())
    return len(task.dataset), _minus(model.cost, agent_before), _minus(grader.cost, judge_before)


def _minus(after: Cost, before: Cost) -> Cost:
    return Cost(after.calls - before.calls, after.input_tokens - before.input_tokens,
                after.output_tokens - before.output_tokens)  # fmt: skip


def estimate(
    instances: Sequence[Any], args: dict[str, Any], model: StandIn, roles: Mapping[str, StandIn]
) -> tuple[Cost, Cost]:
    """The registry's contract: (low, high) of the agent and the ``grader``
    together, for the stale task of ``args`` (its corpus; ``instances`` unused:
    the lake's seeds are not its samples). Exact for the stand-in with the
    history in the prompt; with ``memory_access=tool``, the bound readers'."""
    grader = roles["grader"]
    if args.get("memory_access") != "tool":
        _, agent, judged = stale_cost(model, grader, **args)
        return agent + judged, agent + judged
    bounds = [stale_cost(model, grader, bound, **args) for bound in ("low", "high")]
    low, high = ((agent + judged) for _, agent, judged in bounds)
    return low, high
