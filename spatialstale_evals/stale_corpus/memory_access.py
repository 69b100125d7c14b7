"""``stale -T memory_access=tool``: STALE's memory-agent setting (docs/tasks.md#stale,
"Memory in the store"). The record's history is not in the conversation: it is
primed into the sample's memory store before the first probe, one file per
session, and the agent reads it with Inspect's ``memory()`` tool (read-write,
so Claude 4+ models get Anthropic's native memory tool) while it answers.

- A session's file is ``/memories/conversations/<index>_<date>.md``: the
  session's index in the corpus (0-based, as ``relevant_session_index``
  counts, zero-padded so the names sort in order) and its date as
  ``YYYY-MM-DD`` read from its timestamp (left out when the corpus gives none
  or none can be read); the file holds the session's date line (the prompt
  mode's own, ``[Session date: ...]``) then one ``user: ...`` /
  ``assistant: ...`` line per turn, each turn's text as the corpus gives it.
  Every session is primed: nothing is trimmed (``context_tokens`` is the
  prompt mode's budget).
- The system message says the agent has a memory directory of its past
  conversations with this user, and nothing about staleness.
- Each probe is answered after up to ``max_memory_calls`` memory calls
  (``harness/memory_tool.py``: calls past the cap are refused and counted;
  then the agent is asked for its answer without the tool). ``independent``
  starts each probe from the system message alone and keeps the store (what
  the agent wrote stays); ``shared`` asks the three in one conversation.
- The retrieval evidence, per probe: the memory calls, the files read, the
  bytes read, which relevant sessions' files were read before the answer (in
  ``shared`` mode, anywhere in the conversation so far) and whether the
  newest relevant one, the session that holds the new state, was among them.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from inspect_ai.dataset import Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    Model,
    ModelOutput,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import Tool, ToolInfo, memory

from spatialstale_evals.harness.loggable import loggable_output
from spatialstale_evals.harness.memory_tool import TOOL_NAME, MemoryUse, fetch_replies, prime, tool_info
from spatialstale_evals.harness.tokens import count_text_tokens
from spatialstale_evals.stale_corpus import prompts
from spatialstale_evals.stale_corpus.asking import StaleSettings, answer_record, run_probes
from spatialstale_evals.stale_corpus.corpus import Record, sample_metadata

#: The folder of the session files.
SESSION_FOLDER = "/memories/conversations"
#: Memory calls per probe unless told: a view of the folder and up to nine sessions.
DEFAULT_MAX_MEMORY_CALLS = 10
#: The agent's system message in the memory-tool setting (like the prompt mode's, nothing about staleness).
STALE_TOOL_SYSTEM = """\
You are a personal assistant with a long-term memory of your past conversations with this user.
They are in your memory directory, /memories/conversations: one file per session, named by the
session's number and date. Read them with the memory tool. Reply to the user's newest message."""
#: The answer to a memory call past the cap of a probe.
STALE_MEMORY_LIMIT = "Not executed: at most {cap} memory calls per question. Answer the user now."
#: The answer to a call of a tool the task does not offer.
STALE_NO_SUCH_TOOL = "Not executed: there is no tool {function!r} here; only memory."
_DATE = re.compile(r"(\d{4})[/-](\d{1,2})[/-](\d{1,2})")


def session_name(record: Record, index: int) -> str:
    """The file name of session ``index``: its index, zero-padded, and its date (``017_2023-05-12.md``)."""
    width = max(3, len(str(len(record.sessions) - 1)))
    found = _DATE.search(record.timestamps[index] or "")
    date = f"_{found[1]}-{int(found[2]):02d}-{int(found[3]):02d}" if found else ""
    return f"{index:0{width}d}{date}.md"


def session_path(record: Record, index: int) -> str:
    return f"{SESSION_FOLDER}/{session_name(record, index)}"


def session_file(record: Record, index: int) -> str:
    """Session ``index`` as its file holds it: the date line, then a ``role: text`` line per turn."""
    date = record.timestamps[index]
    header = prompts.STALE_SESSION_DATE.format(timestamp=date) if date is not None else ""
    return header + "".join(f"{role}: {content}\n" for role, content in record.sessions[index])


def memory_files(record: Record) -> dict[str, str]:
    """Every session's file, in corpus order (path -> text)."""
    return {session_path(record, i): session_file(record, i) for i in range(len(record.sessions))}


def tool_sample(record: Record) -> Sample:
    """The record as a sample of the memory-tool setting: its input the system
    message alone (the history is in the store), its metadata naming the files
    and which hold the relevant sessions."""
    files = memory_files(record)
    shown = {
        "memory_access": "tool",
        "memory": {
            "files": list(files),
            "relevant_files": [session_path(record, i) for i in record.relevant],
            "file_tokens": sum(count_text_tokens(text) for text in files.values()),
        },
    }
    return Sample(
        id=record.uid,
        input=[ChatMessageSystem(content=STALE_TOOL_SYSTEM, id=f"{record.uid}/system")],
        target=record.m_new,
        metadata=sample_metadata(record, shown),
    )


@dataclass(frozen=True)
class Haystacks:
    """The records a tool-mode task primes, by uid (Inspect logs a solver argument by its ``name``)."""

    name: str
    by_uid: Mapping[str, Record]


def retrieval(record: Record, in_context: Sequence[str]) -> dict[str, Any]:
    """Which relevant sessions' files are among ``in_context``, and whether the
    newest of them (the session that holds the new state) is."""
    read = [i for i in record.relevant if session_path(record, i) in in_context]
    return {"relevant_read": read, "new_state_read": max(record.relevant) in read}


def probe_record(query: str, outputs: Sequence[ModelOutput], use: MemoryUse, context: dict[str, Any]) -> dict[str, Any]:
    """One probe's answer record: the last reply's (``asking.answer_record``) with the
    tokens of every call of the probe, the calls, and the memory evidence."""
    found = answer_record(query, outputs[-1])
    found["input_tokens"] = sum(o.usage.input_tokens if o.usage else 0 for o in outputs)
    found["output_tokens"] = sum(o.usage.output_tokens if o.usage else 0 for o in outputs)
    return {**found, "model_calls": len(outputs), "memory": {**use.to_json(), **context}}


def other_tool_answers(reply: Any) -> list[ChatMessage]:
    """Answers to the calls of the final reply that are not memory calls (a tool not offered)."""
    return [
        ChatMessageTool(content=STALE_NO_SUCH_TOOL.format(function=c.function), tool_call_id=c.id, function=c.function)
        for c in reply.tool_calls or []
        if c.function != TOOL_NAME
    ]


async def answer_probe(
    model: Model, info: ToolInfo, before: list[ChatMessage], tool: Tool, cap: int
) -> tuple[list[ChatMessage], list[ModelOutput], MemoryUse]:
    """One probe's replies after ``before`` (memory calls, then the answer): the new
    messages, every call's output (the last is the answer) and the memory evidence."""
    use, outputs = MemoryUse(), list[ModelOutput]()

    async def reply(messages: list[ChatMessage], allowed: bool) -> Any:
        choice = "auto" if allowed else "none"  # "none": Inspect sends no tool, the agent must answer
        outputs.append(loggable_output(await model.generate(messages, tools=[info], tool_choice=choice)))
        return outputs[-1].message

    new, last = await fetch_replies(reply, before, tool, use, cap, STALE_MEMORY_LIMIT)
    return [*new, *other_tool_answers(last)], outputs, use


async def ask_from_memory(
    model: Model,
    system: Sequence[ChatMessage],
    record: Record,
    settings: StaleSettings,
    answers: dict[str, dict[str, Any]],
    tool: Tool,
) -> list[ChatMessage]:
    """Every asked probe after ``system``, each answered with the memory tool
    available (``settings.max_memory_calls`` calls a probe), in the settings'
    conversation mode; each answer's record put in ``answers`` as it comes. The
    messages as the sample shows them: the system message, then each probe, its
    memory calls and their answers, and its answer."""
    info, cap = tool_info(tool), settings.max_memory_calls or 0
    conversation, shown, in_context = list(system), list(system), list[str]()
    for dimension in settings.dimensions:
        query = record.queries[dimension]
        probe = ChatMessageUser(content=query, metadata={"dimension": dimension})
        before = [*(conversation if settings.conversation == "shared" else system), probe]
        new, outputs, use = await answer_probe(model, info, before, tool, cap)
        in_context = [*(in_context if settings.conversation == "shared" else []), *use.files_read]
        context = {"in_context": list(dict.fromkeys(in_context)), **retrieval(record, in_context)}
        answers[dimension] = probe_record(query, outputs, use, context)
        conversation = [*before, *new]
        shown += [probe, *new]
    return shown


@solver
def stale_memory_probes(settings: StaleSettings, haystacks: Haystacks) -> Solver:
    """Prime the record's sessions into the memory store, then ask its probes
    with the memory tool; keep each answer and its evidence for the judge."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        record = haystacks.by_uid[str(state.sample_id)]
        prime(memory_files(record))
        system = state.messages[:1]

        def asking(answers: dict[str, dict[str, Any]]) -> Awaitable[list[ChatMessage]]:
            return ask_from_memory(get_model(), system, record, settings, answers, memory())

        return await run_probes(state, settings, asking)

    return solve
