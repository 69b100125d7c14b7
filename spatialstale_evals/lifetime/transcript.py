"""``memory=transcript``: one conversation across a lifetime, never reset,
compacted by Inspect's own strategies.

The lifetime's conversation (``Transcript``) is the system message and every
turn of every episode so far; each later episode's first prompt says the
agent is back at the start and the lake may have changed
(``prompts.TRANSCRIPT_EPISODE_START``). With ``compaction`` other than
``none`` every request of the default loop goes through the handler of
``inspect_ai.model.compaction(strategy, prefix, tools)``: ``compact_input``
before the call (a summary it returns is appended to the conversation, as
``react()`` does), ``record_output`` after it; under ``agent=react`` the
strategy is ``react(compaction=...)``'s. The strategy is one of the installed
Inspect's (``STRATEGIES``: ``CompactionSummary``, ``CompactionEdit``,
``CompactionTrim``, ``CompactionNative``, ``CompactionAuto``), built with
``threshold=compaction_threshold`` tokens, so a run compacts at the same
place on every model that counts tokens alike.

What each compaction kept is scored (``compactions.compaction_record``): the
strategy is wrapped (``observed``) so the messages it was given and those it
returned are seen exactly, with the lake and the agent's sightings of that
moment; the record is completed with Inspect's own ``CompactionEvent``
(tokens before and after) and shown right after it as an info event. A
compaction Inspect finds insufficient (a strategy that cannot bring the
conversation under the threshold: ``edit`` clears tool results, and the
default loop's views are user turns) is an info event and counted
(``compaction_failures``); that request is sent whole.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

import inspect_ai.model as inspect_model
from inspect_ai.event import CompactionEvent
from inspect_ai.log import transcript
from inspect_ai.model import (
    ChatMessage,
    ChatMessageUser,
    Compact,
    CompactionResult,
    CompactionStrategy,
    Model,
    ModelOutput,
    compaction,
)
from inspect_ai.tool import ToolInfo
from inspect_ai.util import store_as

from spatialstale_evals.lifetime.compactions import CompactionLog, compaction_record

#: The task's ``compaction`` values: ``none`` and the installed Inspect's strategies.
CompactionName = Literal["none", "auto", "edit", "native", "summary", "trim"]
#: Inspect's strategies by the name the task gives them (``CompactionTrim`` -> ``trim``).
STRATEGIES: dict[str, type[CompactionStrategy]] = {
    name.removeprefix("Compaction").lower(): cls
    for name, cls in sorted(vars(inspect_model).items())
    if isinstance(cls, type) and issubclass(cls, CompactionStrategy) and cls is not CompactionStrategy
}
COMPACTIONS = ("none", *STRATEGIES)
if set(get_args(CompactionName)) != set(COMPACTIONS):
    raise RuntimeError(f"CompactionName {get_args(CompactionName)} and Inspect's strategies {COMPACTIONS} differ")
#: The default ``compaction_threshold``, in tokens: crossed within a default 5-episode lifetime.
DEFAULT_THRESHOLD = 8000

#: How Inspect's error begins when a strategy cannot bring the conversation under the threshold.
INSUFFICIENT = "Compaction insufficient"
#: What the loop knows at a compaction: (the lake now, each cell the agent has seen as last seen, where it happened).
Moment = Callable[[], tuple[Any, dict[Any, str], dict[str, Any]]]


class ObservedCompaction(CompactionStrategy):
    """An Inspect strategy, unchanged, whose every compaction is seen: the
    messages it was given (its first pass) and those it returned (its last),
    with the moment's lake and sightings, queued until Inspect's event."""

    def __init__(self, inner: CompactionStrategy, moment: Moment) -> None:
        super().__init__(type=inner.type, threshold=inner.threshold, memory=inner.memory)
        self.inner = inner
        self.moment = moment
        self.pending: list[dict[str, Any]] = []

    @property
    def memory(self) -> bool:  # the inner strategy's (``CompactionAuto`` computes its own)
        return self.inner.memory

    @property
    def preserve_prefix(self) -> bool:
        return self.inner.preserve_prefix

    async def compact(
        self, model: Model, messages: list[ChatMessage], tools: list[ToolInfo]
    ) -> tuple[list[ChatMessage], ChatMessageUser | None]:
        outcome = await self.compact_outcome(model, messages, tools)
        return outcome.input, outcome.message

    async def compact_outcome(
        self, model: Model, messages: list[ChatMessage], tools: list[ToolInfo]
    ) -> CompactionResult:
        outcome = await self.inner.compact_outcome(model, messages, tools)
        last = self.pending[-1] if self.pending else None
        if last is not None and [m.id for m in messages] == [m.id for m in last["after"]]:
            last["after"] = list(outcome.input)  # another pass of the same compaction (Inspect iterates)
        else:
            grid, seen, when = self.moment()
            self.pending.append({"before": list(messages), "after": list(outcome.input), "grid": grid,
                                 "seen": dict(seen), "when": when})  # fmt: skip
        return outcome

    def finish(self, events: Sequence[CompactionEvent]) -> None:
        """Score the queued compactions against Inspect's events (in order) and record them."""
        log = store_as(CompactionLog)
        for pending, event in zip(self.pending, events):
            fields = {
                "strategy": (event.metadata or {}).get("strategy_applied") or type(self.inner).__name__,
                "type": event.type,
                "tokens_before": event.tokens_before,
                "tokens_after": event.tokens_after,
            }
            when = {"compaction": len(log.records) + 1, **pending["when"]}
            record = compaction_record(pending["before"], pending["after"], pending["grid"], pending["seen"],
                                       fields, when)  # fmt: skip
            log.records.append(record)
            transcript().info(record, source=f"compaction {record['compaction']}: what it kept, scored as notes")
        self.pending = self.pending[len(events) :]


def new_compaction_events(start: int) -> list[CompactionEvent]:
    """Inspect's compaction events in the transcript from event ``start`` on."""
    return [e for e in transcript().history.events_from(start) if isinstance(e, CompactionEvent)]


def strategy_for(name: str, threshold: int, moment: Moment) -> ObservedCompaction | None:
    """The named Inspect strategy at ``threshold`` tokens, observed; None for ``none``."""
    if name == "none":
        return None
    inner = STRATEGIES[name]
    # named as the strategy it wraps, so Inspect's compaction event names that one (``metadata.strategy``)
    observed = type(inner.__name__, (ObservedCompaction,), {"__doc__": ObservedCompaction.__doc__})
    return observed(inner(threshold=threshold), moment)


@dataclass
class Transcript:
    """The lifetime's one conversation: the system message, every turn so far
    (all episodes), and, under compaction, Inspect's handler and what it was
    last given (``input``) and sent (``sent``)."""

    system: ChatMessage
    turns: list[list[ChatMessage]] = field(default_factory=list)
    strategy: ObservedCompaction | None = None
    handler: Compact | None = None
    #: Where the current episode's turns begin in ``turns`` (what the sample's messages get next).
    episode_start: int = 0

    async def input(
        self, messages: list[ChatMessage], current: list[ChatMessage], tools: list[Any]
    ) -> list[ChatMessage]:
        """The input to send for the request ``messages`` (the whole
        conversation and the turn under way): through the handler when
        compacting (a summary it returns joins ``current``), else as it is."""
        if self.strategy is None:
            return messages
        if self.handler is None:  # the prefix: the system message and the first prompt (as ``react()`` keeps it)
            self.handler = compaction(self.strategy, prefix=messages[:2], tools=tools)
        start = transcript().history.event_count
        try:
            sent, summary = await self.handler.compact_input(messages)
        except RuntimeError as error:  # the strategy could not get under the threshold (Inspect's own check)
            if not str(error).startswith(INSUFFICIENT):
                raise
            self.strategy.pending.clear()
            log = store_as(CompactionLog)
            log.failures += 1
            transcript().info({"error": str(error), "failures": log.failures}, source="compaction insufficient")
            return messages
        if summary is not None:
            current.append(summary)
        events = new_compaction_events(start)
        if events:
            self.strategy.finish(events)
        return sent

    async def record(self, sent: list[ChatMessage], output: ModelOutput) -> None:
        """Calibrate the handler's token count on the call's usage."""
        if self.handler is not None:
            await self.handler.record_output(sent, output)
