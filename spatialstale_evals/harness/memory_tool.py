"""Memory the agent must fetch: what two families share when they hand the
agent its memory through Inspect's ``memory()`` tool instead of the prompt
(``stale -T memory_access=tool``, ``navigate -T memory_access=tool``;
docs/memory.md, "Memory the agent fetches").

- :class:`MemoryStore`: the memory tool's per-sample files, read and written
  through Inspect's public ``StoreModel`` API; :func:`prime` makes the store
  hold exactly a family's files (and their folders) before the agent's first
  turn, :func:`write_file` rewrites one (navigate's view after an L3 refresh).
- :func:`run_memory_calls`: a reply's memory calls run by Inspect's own
  ``execute_tools`` (so the transcript shows every file operation) within a
  cap, the calls past it refused with the family's text and counted; a
  failure the tool does not report itself is an error answer, never a
  sample error.
- :class:`MemoryUse`: the retrieval evidence, exact: every call, what it
  viewed (a folder, or a file with the lines asked for), the bytes its
  answers put in the agent's context, and whether Inspect cut an answer at
  its tool-output limit (``--max-tool-output``, 16 KiB by default).
- :func:`fetch_replies`: the capped loop both families run: replies until one
  makes no memory call, or one also does something else (navigate's ``move``),
  or the cap is used up.
"""

from __future__ import annotations

import posixpath
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool, execute_tools
from inspect_ai.tool import Tool, ToolCall, ToolDef, ToolInfo
from inspect_ai.util import LimitExceededError, StoreModel, store_as
from inspect_ai.util import store as sample_store
from pydantic import Field

from spatialstale_evals.harness.numbers import MAX_DIGITS

#: Where the agent's memory is: in the prompt (the paper's and STALE's protocol) or in the memory store.
MemoryAccess = Literal["prompt", "tool"]
MEMORY_ACCESS: tuple[MemoryAccess, ...] = get_args(MemoryAccess)
#: The parameters of this setting, navigate's and stale's alike: memory factors of the report
#: (``navigation/family.py``); a configuration without them is the same runs in the other setting.
ACCESS_FACTORS = ("memory_access", "max_memory_calls")
#: The report's section that shows the families' runs in either setting side by side (``harness/access_tables.py``).
ACCESS_SECTION = "Memory in the prompt or fetched with the memory tool"
#: The memory tool's root folder and its name in tool calls.
ROOT, TOOL_NAME = "/memories", "memory"
#: The answer to a call the tool failed on without reporting it (``{error}``: the exception's type).
CALL_FAILED = "Error: the memory call failed ({error})."
#: Where the memory quota (``memory_quota.py``) keeps the store's size at the agent's first call; priming clears it.
QUOTA_BASE_KEY = "memory_quota_base"
#: How Inspect starts an answer it cut at its tool-output limit (``model/_call_tools.py``).
CUT_MARKER = "was too long to be displayed"


class MemoryStore(StoreModel):
    """The memory tool's files, read and seeded through Inspect's public
    ``StoreModel`` API: a store model's keys are its class name and field
    names, so this class, named and shaped as Inspect's memory tool's own
    (``memory()`` keeps its files in ``MemoryStore.files``), reads and writes
    the very same per-sample entries (a test checks that it sees what the
    tool wrote)."""

    seeding_complete: bool = Field(default=False)
    files: dict[str, str] = Field(default_factory=dict)
    dirs: list[str] = Field(default_factory=list)


def folders(path: str) -> list[str]:
    """The folders above ``path`` inside the root, outermost first (``/memories/a/b.md`` -> ``/memories/a``)."""
    parts = path.split("/")[1:-1]
    return [p for p in ("/" + "/".join(parts[: k + 1]) for k in range(len(parts))) if p != ROOT]


def prime(files: Mapping[str, str]) -> None:
    """Make the sample's memory store hold exactly ``files`` (path -> text,
    paths under ``/memories``) and their folders, as the memory tool's
    ``create`` would leave them, seeded: the tool seeds nothing more."""
    store = store_as(MemoryStore)
    store.files = dict(files)
    store.dirs = list(dict.fromkeys(d for path in files for d in folders(path)))
    store.seeding_complete = True
    if QUOTA_BASE_KEY in sample_store():  # the quota's baseline is the store as primed
        sample_store().delete(QUOTA_BASE_KEY)


def write_file(path: str, text: str) -> None:
    """Write (or rewrite) one file of the sample's memory store, its folders too."""
    store = store_as(MemoryStore)
    files = dict(store.files)
    files[path] = text
    store.files = files
    store.dirs = [*store.dirs, *(d for d in folders(path) if d not in store.dirs)]


def stored_files() -> dict[str, str]:
    """The sample's memory store as it is now (path -> text)."""
    return dict(store_as(MemoryStore).files)


@contextmanager
def primed(files: Mapping[str, str]) -> Iterator[None]:
    """The memory store primed with ``files`` within the block, emptied after it:
    for a cost estimate, which runs the memory tool outside any sample (in the
    store Inspect keeps for code outside a sample)."""
    prime(files)
    try:
        yield
    finally:
        prime({})


async def tool_answer(tool: Tool, files: Mapping[str, str], **arguments: Any) -> str:
    """The memory tool's own answer to one call on a store of ``files`` (outside a sample)."""
    with primed(files):
        return str(await tool(**arguments))


def tool_info(tool: Tool) -> ToolInfo:
    """A tool's definition as the model is sent it (the memory tool's: Claude 4+
    models bind it to Anthropic's native memory tool unless it is read-only)."""
    tdef = ToolDef(tool)
    return ToolInfo(name=tdef.name, description=tdef.description, parameters=tdef.parameters)


def canonical(path: Any) -> str | None:
    """A path as the memory tool resolves it (``/memories/a/../b`` is ``/memories/b``); None when it is not one."""
    if not isinstance(path, str) or not path.startswith(ROOT):
        return None
    return posixpath.normpath(path.replace("\\", "/"))


@dataclass(frozen=True)
class MemoryRead:
    """One answered ``view`` of a file: its path, the lines asked for (None: all), the
    answer's bytes, and whether Inspect cut the answer at its tool-output limit."""

    path: str
    lines: tuple[int, int] | None
    bytes: int
    cut: bool

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "lines": list(self.lines) if self.lines else None, "bytes": self.bytes,
                "cut": self.cut}  # fmt: skip


@dataclass
class MemoryUse:
    """What an agent did with the memory tool in one conversation (a probe, a step):
    calls run, refused past the cap and failed (an error answer: a bad path, a bad
    argument, a write to a read-only store), writes that succeeded, views of a
    folder, and every file it read, in order."""

    calls: int = 0
    refused: int = 0
    failed: int = 0
    writes: int = 0
    folder_views: int = 0
    reads: list[MemoryRead] = field(default_factory=list)

    def add(self, other: MemoryUse) -> None:
        """Add the use of another conversation to this one (an episode's steps)."""
        for name in ("calls", "refused", "failed", "writes", "folder_views"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.reads += other.reads

    @property
    def bytes_read(self) -> int:
        return sum(r.bytes for r in self.reads)

    @property
    def files_read(self) -> list[str]:
        """The files read, each once, in the order first read."""
        return list(dict.fromkeys(r.path for r in self.reads))

    def to_json(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "refused": self.refused,
            "failed": self.failed,
            "writes": self.writes,
            "folder_views": self.folder_views,
            "files_read": self.files_read,
            "bytes_read": self.bytes_read,
            "reads": [r.to_json() for r in self.reads],
        }


def _view_lines(arguments: Mapping[str, Any]) -> tuple[int, int] | None:
    """The lines a ``view`` asked for: two integers within ``numbers.MAX_DIGITS`` digits, else None (all)."""
    asked = arguments.get("view_range")
    if not isinstance(asked, list) or len(asked) != 2:
        return None
    if not all(isinstance(n, int) and not isinstance(n, bool) and abs(n) < 10**MAX_DIGITS for n in asked):
        return None
    return asked[0], asked[1]


def record_answer(use: MemoryUse, call: ToolCall, answer: ChatMessageTool, files: Mapping[str, str]) -> None:
    """Add one answered call to ``use``: a failure, a write, a folder view or a file read."""
    arguments = call.arguments if isinstance(call.arguments, dict) else {}
    if answer.error is not None or call.parse_error:
        use.failed += 1
        return
    command, path = arguments.get("command"), canonical(arguments.get("path"))
    if command != "view":
        use.writes += 1
    elif path in files:
        text = answer.text
        use.reads.append(MemoryRead(path, _view_lines(arguments), len(text.encode("utf-8")), CUT_MARKER in text))
    else:
        use.folder_views += 1


async def run_memory_calls(
    tool: Tool, calls: Sequence[ToolCall], use: MemoryUse, cap: int, refusal: str
) -> tuple[list[ChatMessage], bool]:
    """Answers to ``calls`` (memory calls), in order: those within the cap
    (``cap`` calls per conversation, ``use.calls`` already made) run by
    Inspect's ``execute_tools``, the rest answered with ``refusal`` (formatted
    with ``cap``); the evidence added to ``use``. Returns the answers and
    whether any call was refused."""
    allowed = list(calls[: max(0, cap - use.calls)])
    answers: list[ChatMessage] = []
    if allowed:
        try:
            result = await execute_tools([ChatMessageAssistant(content="", tool_calls=allowed)], [tool])
            answered = {m.tool_call_id: m for m in result.messages if isinstance(m, ChatMessageTool)}
        except LimitExceededError:
            raise
        except Exception as exc:  # noqa: BLE001 - bad model output never crashes a sample
            answered, error = {}, type(exc).__name__
        else:
            error = "no answer"
        files = store_as(MemoryStore).files
        for call in allowed:
            answer = answered.get(call.id)
            if answer is None:
                use.failed += 1
                answer = ChatMessageTool(content=CALL_FAILED.format(error=error), tool_call_id=call.id,
                                         function=TOOL_NAME)  # fmt: skip
            else:
                record_answer(use, call, answer, files)
            answers.append(answer)
    refused = list(calls[len(allowed) :])
    answers += [
        ChatMessageTool(content=refusal.format(cap=cap), tool_call_id=c.id, function=TOOL_NAME) for c in refused
    ]
    use.calls += len(allowed)
    use.refused += len(refused)
    return answers, bool(refused)


#: The family's model call: (the conversation, whether memory calls are still allowed) -> the reply.
Generate = Callable[[list[ChatMessage], bool], Awaitable[ChatMessageAssistant]]


async def fetch_replies(
    generate: Generate, conversation: Sequence[ChatMessage], tool: Tool, use: MemoryUse, cap: int, refusal: str
) -> tuple[list[ChatMessage], ChatMessageAssistant]:
    """Replies after ``conversation`` until one makes no memory call, or makes
    another call too (navigate's ``move``), or is made with the cap used up
    (``generate``'s second argument False: the family asks for its answer
    without the tool); its memory calls are answered (``run_memory_calls``).
    Returns the new messages (replies and answers, in order) and the last reply,
    whose other calls the family answers."""
    new: list[ChatMessage] = []
    while True:
        allowed = use.calls < cap
        reply = await generate([*conversation, *new], allowed)
        new.append(reply)
        calls = list(reply.tool_calls or [])
        memory_calls = [c for c in calls if c.function == TOOL_NAME]
        if not memory_calls:
            return new, reply
        answers, _ = await run_memory_calls(tool, memory_calls, use, cap, refusal)
        new += answers
        if len(memory_calls) < len(calls) or not allowed:
            return new, reply
