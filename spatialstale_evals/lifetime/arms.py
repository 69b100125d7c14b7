"""The ``memory`` parameter of ``lifelong``: what carries over from one
episode of a lifetime to the next, and how the agent is told of it.

Each value is a :class:`MemoryArm` in :data:`MEMORY_ARMS`, the one registry
the task's parameter check, its docs and the solver read (the
memory-architectures issue adds arms here: a transcript carried over, a
store shared between lifetimes):

- ``notes`` (the default): Inspect's ``memory`` tool and its per-sample
  ``/memories`` directory, kept across the episodes; the system prompt says
  so and recommends the note format; a write-back turn after every episode;
- ``none``: nothing carries over: no memory tool is offered, no prompt
  mentions notes or memory, there is no write-back turn. The same lifetimes
  otherwise: the no-memory baseline for any model, against which the
  report's memory gain of an arm is measured;
- ``transcript``: one conversation across the whole lifetime, never reset
  (``lifetime/transcript.py``): each later episode begins with a user turn
  saying the agent is back at the start and the lake may have changed; no
  memory tool unless ``memory_tool=true``; the conversation compacted by one
  of Inspect's strategies (``compaction``) past ``compaction_threshold`` tokens.
- ``shared``: two agents take the episodes in turns (the walker, the task's
  model, and the scout, the model role ``scout``), both with the memory tool
  on one ``/memories``; the runtime keeps who wrote what (``shared.py``);
- ``own``: the agent brings its own memory system (an Agents SDK agent
  keeping a ``MEMORY.md``, a vector store, anything): the harness offers no
  memory tool and plays no write-back turn, and reads the notes where the
  agent keeps them, through the reader given to ``lifelong_with_agent(...,
  notes=...)`` (so this arm exists only there: the command line refuses it).
  The system prompt is ``none``'s; the agent's own instructions tell it of
  its memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from spatialstale_evals.lifetime import prompts

#: The values of the task's ``memory`` parameter (the keys of ``MEMORY_ARMS``, in order).
MemoryName = Literal["notes", "none", "transcript", "shared", "own"]


@dataclass(frozen=True)
class MemoryArm:
    """One value of ``memory``: whether the memory tool is offered (and so the
    write-back turn played), the system prompt's template (``{episodes}``,
    ``{max_memory_calls}``), and where the harness reads the notes: ``store``,
    every memory store instance of the sample; ``agent``, the agent's own
    reader (``lifelong_with_agent(..., notes=...)``)."""

    name: str
    tool: bool
    system: str
    summary: str
    notes_from: Literal["store", "agent"] = "store"
    #: Whether the conversation carries over from one episode to the next (``transcript``).
    carries_conversation: bool = False

    @property
    def write_back(self) -> bool:
        """Whether the episode ends with a write-back turn (only with the tool to write with)."""
        return self.tool


MEMORY_ARMS: dict[str, MemoryArm] = {
    arm.name: arm
    for arm in (
        MemoryArm("notes", True, prompts.LIFELONG_SYSTEM, "the memory tool, its /memories kept across episodes"),
        MemoryArm("none", False, prompts.LIFELONG_SYSTEM_NO_MEMORY, "nothing kept between episodes, no memory tool"),
        MemoryArm(
            "transcript", False, prompts.LIFELONG_SYSTEM_TRANSCRIPT,
            "one conversation across the lifetime, compacted by Inspect past a threshold", carries_conversation=True,
        ),  # fmt: skip
        MemoryArm(
            "shared", True, prompts.LIFELONG_SYSTEM_SHARED,
            "two agents (walker, scout) in turns, one /memories written by both (lifetime/shared.py)",
        ),  # fmt: skip
        MemoryArm(
            "own", False, prompts.LIFELONG_SYSTEM_NO_MEMORY,
            "the agent's own memory system, its notes read where it keeps them (lifelong_with_agent only)", "agent",
        ),  # fmt: skip
    )
}
#: The task parameters that describe the memory architecture (beside ``memory``
#: itself): the report keys its architecture table by them and pairs a run with
#: its ``memory=none`` run on the others. A parameter an arm adds goes here.
MEMORY_PARAMETERS: tuple[str, ...] = (
    "memory", "memory_tool", "compaction", "compaction_threshold", "provenance", "scout_access",
)
#: The task's default ``memory`` (the first arm): its signature, its settings and the report's pairing read it here.
DEFAULT_MEMORY: MemoryName = "notes"
# one list: the registry and the parameter's type agree, the default first
if tuple(MEMORY_ARMS) != get_args(MemoryName) or DEFAULT_MEMORY != next(iter(MEMORY_ARMS)):
    raise RuntimeError(f"MemoryName {get_args(MemoryName)} and MEMORY_ARMS {tuple(MEMORY_ARMS)} differ")
