"""Bring your own memory system: an OpenAI Agents SDK agent that keeps its
own ``MEMORY.md``, playing ``lifelong``'s lifetimes through Inspect's
``agent_bridge()``.

The agent is the SDK's own (``agents.Agent`` run by ``agents.Runner``); its
model calls go to the task's model through the bridge, so any provider
plays it and every call is a model event in the log. It keeps its notes in a
``MEMORY.md`` of its own, one folder per sample, through two function tools
of its own (``read_memory``, ``write_memory``): the harness offers it no
memory tool and plays no write-back turn (``memory="own"``), and reads the
notes where the agent keeps them through ``memory_md``, at every episode's
start and end. Its run ends with the episode, so it writes as it goes.

    pip install openai-agents
    python examples/agents_sdk_memory.py --model openai/gpt-4o --regime L1 --limit 5

or from Python::

    from inspect_ai import eval
    from spatialstale_evals.lifelong import lifelong_with_agent
    from examples.agents_sdk_memory import memory_md, sdk_walker

    eval(lifelong_with_agent(sdk_walker(), memory="own", notes=memory_md, regime="L1"), model="openai/gpt-4o")
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from agents import Agent as SdkAgent
from agents import Runner, function_tool, set_default_openai_key, set_tracing_disabled
from inspect_ai.agent import Agent, AgentState, agent, agent_bridge
from inspect_ai.model import messages_to_openai_responses
from inspect_ai.tool import Tool
from inspect_ai.util import store

#: The agent's notes file, in its folder of the sample.
MEMORY_FILE = "MEMORY.md"
#: The sample's store key that remembers the folder (one per sample and epoch, never shared).
FOLDER_KEY = "agents_sdk_memory:folder"

INSTRUCTIONS = """

You keep your own notes in MEMORY.md, which persists across episodes: call
read_memory at the start of an episode, and write_memory (the whole file,
one line per cell: SAFE at (r,c) or HOLE at (r,c)) whenever you learn
something, before you move: your run ends when the episode does."""


def memory_folder() -> Path:
    """The sample's own folder for MEMORY.md (made on first use, remembered in the sample's store)."""
    folder = store().get(FOLDER_KEY)
    if folder is None:
        folder = tempfile.mkdtemp(prefix="agents-sdk-memory-")
        store().set(FOLDER_KEY, folder)
    return Path(folder)


def memory_md() -> dict[str, str]:
    """The notes reader ``lifelong_with_agent(notes=...)`` calls: MEMORY.md as it is now."""
    path = memory_folder() / MEMORY_FILE
    return {MEMORY_FILE: path.read_text(encoding="utf-8")} if path.exists() else {}


def sdk_walker(max_turns: int = 200):  # noqa: ANN201 - an AgentFactory
    """An ``AgentFactory`` for ``lifelong_with_agent``: per episode, an Agents
    SDK agent with ``move`` (the episode's own tool) and its MEMORY.md tools."""
    set_tracing_disabled(True)  # the SDK's tracing would call OpenAI's servers
    set_default_openai_key("unused: the bridge sends every call to the task's model", use_for_tracing=False)

    def factory(tools: list[Tool]) -> Agent:
        (move,) = tools  # memory="own": the harness offers only move

        @agent(name="agents_sdk_walker")
        def walker() -> Agent:
            async def execute(state: AgentState) -> AgentState:
                folder = memory_folder()

                @function_tool(name_override="move")
                async def move_one(direction: str) -> str:
                    """Move one cell: UP, DOWN, LEFT or RIGHT. Call it exactly once per turn."""
                    return str(await move(direction=direction))

                @function_tool
                def read_memory() -> str:
                    """Your notes file MEMORY.md as it is now ('' if you have written none)."""
                    path = folder / MEMORY_FILE
                    return path.read_text(encoding="utf-8") if path.exists() else ""

                @function_tool
                def write_memory(text: str) -> str:
                    """Replace MEMORY.md with `text` (the whole file)."""
                    (folder / MEMORY_FILE).write_text(text, encoding="utf-8")
                    return f"MEMORY.md written ({len(text)} characters)"

                walker = SdkAgent(
                    name="walker",
                    instructions=state.messages[0].text + INSTRUCTIONS,
                    model="inspect",
                    tools=[move_one, read_memory, write_memory],
                )
                async with agent_bridge(state) as bridge:
                    conversation = await messages_to_openai_responses(state.messages[1:])
                    await Runner.run(walker, input=conversation, max_turns=max_turns)  # type: ignore[arg-type]
                    return bridge.state

            return execute

        return walker()

    return factory


def main() -> None:
    """Run the SDK agent on lifelong's lifetimes (``memory=own``)."""
    from inspect_ai import eval as inspect_eval

    from spatialstale_evals.lifelong import lifelong_with_agent

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--regime", default="L1")
    parser.add_argument("--episodes", type=int, default=5)
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    task = lifelong_with_agent(sdk_walker(), memory="own", notes=memory_md, regime=args.regime, episodes=args.episodes)
    inspect_eval(task, model=args.model, limit=args.limit)


if __name__ == "__main__":
    main()
