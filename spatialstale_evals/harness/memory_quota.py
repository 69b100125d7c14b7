"""Bounds on what an agent may do with the memory tool in one sample.

Inspect records a store event after every tool call by comparing the whole
sample store before and after it, so each memory call costs time in
proportion to the store's size, and N writes cost time quadratic in N
(measured with Inspect 0.3.285: 1,000 creates in one turn took 4.6 s, 10,000
took 190 s and 694 MB). Two bounds keep a hostile or looping agent's
cost linear and small (docs/memory.md, "Bounds"):

- :data:`MAX_MEMORY_CALLS`: the most memory calls a task's
  ``max_memory_calls`` may allow per turn (a step, a probe); a larger value is
  refused with the task's other bad parameters, before any model call.
- :class:`MemoryQuota`: the most files and bytes the agent's writes may add to
  the store beyond what it held at the agent's first memory call (what the
  task seeded: a STALE conversation, the paper's notes). A write past it is
  not made: the model gets a tool error saying so (:data:`OVER_QUOTA`), and
  the refusal is counted in the sample's store and metadata
  (:data:`QUOTA_KEY`, only when there was one). The defaults
  (:data:`QUOTA_FILES`, :data:`QUOTA_BYTES`) are far beyond what any agent of
  these tasks writes (a lifetime's notes are a few kilobytes in a few files).

:func:`bounded_memory` is Inspect's ``memory()`` tool (same name, description
and parameters, so a provider's native binding is unchanged) with the quota
checked before each write; a read-only tool writes nothing and is returned
as it is.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from inspect_ai.tool import Tool, ToolDef, ToolError, memory
from inspect_ai.util import store, store_as

from spatialstale_evals.harness.loggable import count, register_tally
from spatialstale_evals.harness.memory_tool import QUOTA_BASE_KEY as _BASE_KEY
from spatialstale_evals.harness.memory_tool import ROOT, MemoryStore

#: The most memory calls a task's ``max_memory_calls`` may allow per turn.
MAX_MEMORY_CALLS = 100
#: The default quota: files the agent may add to the store in one sample ...
QUOTA_FILES = 1_000
#: ... and bytes (UTF-8) it may add, over all its files.
QUOTA_BYTES = 4 * 1024 * 1024
#: The sample store key and metadata key of the count of writes refused by the quota.
QUOTA_KEY = register_tally("memory_quota_refused")
#: The tool error a write past the quota gets (the model sees it).
OVER_QUOTA = (
    "Not written: this write would take the memory directory past its quota of {files:,} more files "
    "and {bytes:,} more bytes than it started with ({reason}). Delete or shorten files first."
)


@dataclass(frozen=True)
class MemoryQuota:
    """How much the agent's writes may add to the memory store in one sample."""

    files: int = QUOTA_FILES
    bytes: int = QUOTA_BYTES


def _size(text: Any) -> int:
    return len(text.encode("utf-8", "surrogatepass")) if isinstance(text, str) else 0


def store_size(files: Mapping[str, str]) -> tuple[int, int]:
    """The store's files and bytes (UTF-8)."""
    return len(files), sum(_size(t) for t in files.values())


def _path(value: Any) -> str | None:
    return posixpath.normpath(value.replace("\\", "/")) if isinstance(value, str) and value.startswith(ROOT) else None


def growth(files: Mapping[str, str], arguments: Mapping[str, Any]) -> tuple[int, int]:
    """The files and bytes a memory call would add to ``files`` at most (an
    estimate that never undercounts: a call the tool then refuses adds nothing)."""
    command, path = arguments.get("command"), _path(arguments.get("path"))
    if command == "create":
        old = files.get(path) if path is not None else None
        return int(old is None), _size(arguments.get("file_text")) - _size(old)
    if command == "str_replace":
        return 0, _size(arguments.get("new_str")) - _size(arguments.get("old_str"))
    if command == "insert":
        return 0, _size(arguments.get("insert_text")) + 1
    return 0, 0


def over_quota(arguments: Mapping[str, Any], quota: MemoryQuota) -> str | None:
    """The refusal of a call that would take the sample's store past ``quota``, else None."""
    files = store_as(MemoryStore).files
    base = store().get(_BASE_KEY)
    if base is None:  # the agent's first memory call: the store as the task seeded it
        base = list(store_size(files))
        store().set(_BASE_KEY, base)
    more_files, more_bytes = growth(files, arguments)
    if more_files <= 0 and more_bytes <= 0:
        return None
    now_files, now_bytes = store_size(files)
    if now_files + more_files > base[0] + quota.files:
        reason = f"{now_files - base[0]:,} files added so far"
    elif now_bytes + more_bytes > base[1] + quota.bytes:
        reason = f"{now_bytes - base[1]:,} bytes added so far, this write adds {more_bytes:,}"
    else:
        return None
    return OVER_QUOTA.format(files=quota.files, bytes=quota.bytes, reason=reason)


def bounded_memory(readonly: bool = False, quota: MemoryQuota | None = None) -> Tool:
    """Inspect's ``memory()`` tool with ``quota`` (default: ``MemoryQuota()``) checked before each write."""
    inner = memory(readonly=readonly)
    if readonly:
        return inner
    limits = quota or MemoryQuota()
    tdef = ToolDef(inner)

    async def execute(**kwargs: Any) -> Any:
        refusal = over_quota(kwargs, limits)
        if refusal is not None:
            count(QUOTA_KEY, 1)
            raise ToolError(refusal)
        return await inner(**kwargs)

    return ToolDef(
        execute,
        name=tdef.name,
        description=tdef.description,
        parameters=tdef.parameters,
        parallel=tdef.parallel,
        viewer=tdef.viewer,
        model_input=tdef.model_input,
        options=tdef.options,
    ).as_tool()
