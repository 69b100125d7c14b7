"""Memory policies: how each navigation strategy builds the navigator's memory view.

A strategy is one small class, registered in ``STRATEGIES`` under its name
(the navigate task's ``strategy``). The navigation loop and the run matrix's
cost estimate ask a policy the same four questions and never test a
strategy's name:

- ``shows_memory``: does the prompt have a memory section at all?
- ``judges(moment, instance)``: does it judge the store at this moment of the
  episode: ``start`` (before the first step) or ``event`` (after an L3 event
  fired, while the episode runs)?
- ``judge(request)``: which entries to remove, and at what cost: nobody
  judges, the shared model audit judges (``ModelAudit``; its batch size is
  ``audit_batch_size``), or the ground truth does (``Oracle``);
- ``view(memory, removed)``: the entries the navigator is shown.

Adding a strategy is one class here with ``@register_strategy`` (and its row
in the README's strategy table).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from inspect_ai.model import Model

from spatialstale_evals.harness.audit import audit_entries
from spatialstale_evals.world.grid import Cell, Grid
from spatialstale_evals.world.instance import Instance
from spatialstale_evals.world.memory import MemoryEntry
from spatialstale_evals.world.staleness import stale_labels

#: The built-in strategies, the vocabulary of the navigate task's ``strategy``.
StrategyName = Literal["no_memory", "no_filter", "self_verify", "omcd", "oracle"]
#: When a policy may judge: before the first step, or after an event fired.
Moment = Literal["start", "event"]
MOMENTS: tuple[Moment, ...] = ("start", "event")


@dataclass(frozen=True)
class JudgeRequest:
    """What a judgement sees: the world now, and who (which model) may be asked."""

    instance: Instance
    grid: Grid
    agent: Cell
    auditor: Model
    modality: str
    batch_size: int
    reason: str


@dataclass
class Verdict:
    """The entries a judgement removes, and what it cost."""

    removed: set[str] = field(default_factory=set)
    calls: int = 0
    tokens: int = 0


class MemoryPolicy:
    """A strategy that shows the whole store and never judges it."""

    name: ClassVar[str]
    summary: ClassVar[str]
    shows_memory: ClassVar[bool] = True

    def judges(self, moment: Moment, instance: Instance) -> bool:
        return False

    def audit_batch_size(self, n_entries: int, batch_size: int) -> int | None:
        """Entries per model audit call, or None when the policy calls no model."""
        return None

    async def judge(self, request: JudgeRequest) -> Verdict:
        return Verdict()

    def view(self, memory: Sequence[MemoryEntry], removed: set[str]) -> list[MemoryEntry]:
        """The navigator's memory view: the store without the removed entries
        (the paper's deletion), or nothing when memory is not shown."""
        return [e for e in memory if e.id not in removed] if self.shows_memory else []


STRATEGIES: dict[str, MemoryPolicy] = {}


def register_strategy(cls: type[MemoryPolicy]) -> type[MemoryPolicy]:
    """Class decorator: register one instance of ``cls`` under ``cls.name``."""
    if cls.name in STRATEGIES:
        raise ValueError(f"strategy {cls.name!r} is already registered")
    STRATEGIES[cls.name] = cls()
    return cls


def judges_at_windows(moment: Moment, instance: Instance) -> bool:
    """Judge at each detection window: before the first step when the regime
    has a window there (the pre-game changes), and after every event."""
    return moment == "event" or any(w.step == 0 for w in instance.windows)


class ModelAudit(MemoryPolicy):
    """Removes what the shared audit (``harness/audit.py``, the ``detect``
    task's own) flags, asked of the ``auditor`` model role."""

    def audit_batch_size(self, n_entries: int, batch_size: int) -> int | None:
        return batch_size

    async def judge(self, request: JudgeRequest) -> Verdict:
        memory = request.instance.memory
        result = await audit_entries(
            request.auditor,
            request.grid,
            request.agent,
            memory,
            modality=request.modality,
            batch_size=self.audit_batch_size(len(memory), request.batch_size),  # type: ignore[arg-type]
            label=f"{self.name} audit ({request.reason})",
        )
        return Verdict(result.flagged, result.calls, result.tokens)


@register_strategy
class NoMemory(MemoryPolicy):
    name = "no_memory"
    summary = "no memory section at all"
    shows_memory = False


@register_strategy
class NoFilter(MemoryPolicy):
    name = "no_filter"
    summary = "every entry as written"


@register_strategy
class SelfVerify(ModelAudit):
    name = "self_verify"
    summary = "one audit of the whole store in a single call before the first step; fixed for the episode"

    def judges(self, moment: Moment, instance: Instance) -> bool:
        return moment == "start"

    def audit_batch_size(self, n_entries: int, batch_size: int) -> int | None:
        return n_entries


@register_strategy
class Omcd(ModelAudit):
    name = "omcd"
    summary = "the batched audit at each detection window (before the first step; after each L3 event)"

    def judges(self, moment: Moment, instance: Instance) -> bool:
        return judges_at_windows(moment, instance)


@register_strategy
class Oracle(MemoryPolicy):
    name = "oracle"
    summary = "the ground-truth stale entries removed at each detection window"

    def judges(self, moment: Moment, instance: Instance) -> bool:
        return judges_at_windows(moment, instance)

    async def judge(self, request: JudgeRequest) -> Verdict:
        labels = stale_labels(request.instance.memory, request.instance.g0, request.grid)
        return Verdict({eid for eid, kind in labels.items() if kind})
