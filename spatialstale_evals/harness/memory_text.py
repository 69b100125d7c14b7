"""How memory is written and framed (docs/specification.md#how-memory-is-written-and-framed): the factors of the Memory
Trust Gap study, one at a time on the same seeds.

- ``memory_style``: ``plain`` (the paper's exact text), ``detailed`` (each
  entry adds its provenance, from the real exploration of the instance: how
  often and on which walks its cell was seen, or that it was filled in
  without a visit), ``confident`` (adds an assertion of certainty). Ids,
  claims and order never change; only a suffix.
- ``distractors``: that many non-spatial notes mixed into the store, drawn
  from the seed (``Instance.with_notes``): never stale, so a flag on one is a
  false positive.
- ``memory_framing`` (navigate): the system message's line about memory:
  ``none`` (the paper), ``warn`` (memory may be out of date), ``prefer_current``
  (the production rule: trust the observation over a conflicting note).
- ``memory_position`` (navigate): the memory section ``before`` the
  observation (prefix-cache friendly) or ``after`` it.

The strings are in ``harness/prompts.py``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Literal, get_args

from spatialstale_evals.harness import prompts
from spatialstale_evals.harness.params import check_choice, check_positive_int
from spatialstale_evals.world.instance import Instance
from spatialstale_evals.world.memory import NOTE_TEXTS, WALKS, MemoryEntry

MemoryStyle = Literal["plain", "detailed", "confident"]
MemoryFraming = Literal["none", "warn", "prefer_current"]
MemoryPosition = Literal["before", "after"]
POSITIONS: tuple[MemoryPosition, ...] = get_args(MemoryPosition)
MAX_DISTRACTORS = len(NOTE_TEXTS)
#: The navigate task's parameters this module implements, the factors of the
#: report's trust-gap view; and those that act on the memory section only (a
#: strategy that shows no memory has them at their defaults: the framing line
#: is in every strategy's system message).
FACTORS = ("memory_style", "memory_framing", "memory_position", "distractors")
SECTION_FACTORS = ("memory_style", "memory_position", "distractors")


def check_memory(style: object, distractors: object) -> None:
    """The checks of the memory factors both tasks have."""
    check_choice("memory_style", style, prompts.STYLE_SUFFIXES)
    check_positive_int("distractors", distractors, allow_zero=True)
    if distractors > MAX_DISTRACTORS:  # type: ignore[operator]
        raise ValueError(f"distractors must be at most {MAX_DISTRACTORS} (the notes written for it); got {distractors}")


def check_framing(framing: object, position: object) -> None:
    """The checks of the navigator's prompt factors."""
    check_choice("memory_framing", framing, prompts.FRAMINGS)
    check_choice("memory_position", position, POSITIONS)


def suffix(entry: MemoryEntry, visits: list[tuple[int, int]], style: MemoryStyle) -> str:
    """What ``style`` appends to an entry whose cell the exploration stood on at
    ``visits`` ((walk, step) pairs, in order); nothing to a note."""
    if entry.is_note:
        return ""
    visited, filled = prompts.STYLE_SUFFIXES[style]
    if not visits:
        return filled
    walk, step = visits[0]
    walks = len({w for w, _ in visits})
    return visited.format(times=len(visits), walks=walks, total=WALKS, walk=walk, step=step)


def written(instance: Instance, style: MemoryStyle = "plain", distractors: int = 0) -> Instance:
    """The instance as its store is written for this run: ``distractors``
    notes mixed in and every entry in ``style``. Its truth is the instance's:
    only the texts (and the notes) differ."""
    store = instance.with_notes(distractors)
    if not any(prompts.STYLE_SUFFIXES[style]):
        # A style that adds nothing (plain) needs neither the exploration's
        # visits (random walks replayed per instance) nor a copy of the store.
        return store
    memory = tuple(replace(e, text=e.text + suffix(e, instance.visits.get(e.cell, []), style)) for e in store.memory)
    return store if memory == store.memory else replace(store, memory=memory)  # plain: the stored instance itself


def system_prompt(framing: MemoryFraming = "none") -> str:
    """The navigator's system message with the framing line, if any."""
    line = prompts.FRAMINGS[framing]
    return "\n".join(part for part in (prompts.NAVIGATE_RULES, line, prompts.NAVIGATE_TURN) if part)
