"""Memory policies: how each navigation strategy builds the navigator's memory view.

A strategy is one small class, registered in ``STRATEGIES`` under its name
(the navigate task's ``strategy``). The navigation loop and the run matrix's
cost estimate ask a policy the same questions and never test a strategy's
name:

- ``shows_memory``: does the prompt have a memory section at all?
- ``judges(moment, instance, epoch)``: does it judge the store at this moment
  of the episode: ``start`` (before the first step), ``event`` (after an L3
  event fired) or ``view`` (before each step, when cells come into view under
  partial observability)? ``epoch`` is the step the world last changed at
  (0 before any event): a model audit judges only while a detection window
  is open, i.e. when ``epoch`` is a window's step;
- ``judge(request)``: a verdict on some entries (``keep``, ``contradicted``,
  ``unverified``) and its cost: nobody judges, the shared model audit judges
  (``ModelAudit``; its batch size is ``audit_batch_size``), the ground truth
  (``Oracle``) or the runtime resolver's ledger of observations (``Resolve``);
- ``removes_entries``: whether judged entries leave the view (then the task's
  ``filter_mode`` says how they read instead, ``harness/memory_view.py``);
- ``corrects(output)``: whether its verdicts also propose what a contradicted
  entry should say (``filter_mode="correct"``): a model audit asked for
  ``output="edit"``, the ground truth, the resolver's sightings;
- ``paper``: whether the paper ran it (the run matrix's default set).

Adding a strategy is one class here with ``@register_strategy`` and its name in
``StrategyName`` (and its row in the strategy table of docs/tasks.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from inspect_ai.model import Model

from spatialstale_evals.harness.audit import FORMATS, audit_entries
from spatialstale_evals.harness.memory_view import Authority, Decision, FilterMode, Note, build_view
from spatialstale_evals.harness.observe import Observation
from spatialstale_evals.world.grid import Cell, Grid
from spatialstale_evals.world.instance import Instance
from spatialstale_evals.world.memory import DANGER, MemoryEntry, claim_of
from spatialstale_evals.world.staleness import hazard

#: The built-in strategies, the vocabulary of the navigate task's ``strategy``.
StrategyName = Literal["no_memory", "no_filter", "self_verify", "omcd", "oracle", "resolve"]
#: When a policy may judge: before the first step, after an event fired, or
#: before a step (cells in view).
Moment = Literal["start", "event", "view"]
MOMENTS: tuple[Moment, ...] = ("start", "event", "view")


@dataclass(frozen=True)
class JudgeRequest:
    """What a judgement sees: the world now and as the agent sees it, which
    entries are due (in view, not yet judged since the world last changed),
    what the agent has observed, which model may be asked, in which verdict
    format (``output``, flagged at ``threshold`` when it is ``continuous``)
    and whether with its schema (``structured``); all passed on to
    ``audit_entries``."""

    instance: Instance
    grid: Grid
    seen: Grid
    agent: Cell
    auditor: Model
    modality: str | Observation
    batch_size: int
    structured: bool
    output: str
    threshold: float
    reason: str
    step: int
    epoch: int
    due: tuple[MemoryEntry, ...]
    ledger: Mapping[Cell, tuple[str, int]] = field(default_factory=dict)
    decisions: Mapping[str, Decision] = field(default_factory=dict)


@dataclass
class Verdict:
    """Decisions on the entries judged now (others keep theirs), the step of
    the evidence per contradicted entry (for the ``history`` label), the claim
    proposed for a contradicted entry (for ``correct``), what it cost, and the
    resolutions to log (the runtime resolver's record: every entry resolved
    against a sighting for the first time or differently than before, with
    its evidence)."""

    decisions: dict[str, Decision] = field(default_factory=dict)
    steps: dict[str, int] = field(default_factory=dict)
    corrections: dict[str, str] = field(default_factory=dict)
    calls: int = 0
    tokens: int = 0
    resolutions: list[dict[str, Any]] = field(default_factory=list)


class MemoryPolicy:
    """A strategy that shows the whole store and never judges it."""

    name: ClassVar[str]
    summary: ClassVar[str]
    shows_memory: ClassVar[bool] = True
    removes_entries: ClassVar[bool] = False
    paper: ClassVar[bool] = True
    #: What its judgements rest on, as a ``history`` label says: what the agent observed, or the ground truth.
    authority: ClassVar[Authority] = "observation"

    def judges(self, moment: Moment, instance: Instance, epoch: int) -> bool:
        """Whether to judge at ``moment``, the world having last changed at step ``epoch``."""
        return False

    def audit_batch_size(self, n_entries: int, batch_size: int) -> int | None:
        """Entries per model audit call, or None when the policy calls no model."""
        return None

    @property
    def calls_model(self) -> bool:
        """Whether its judgements ask the auditor model (an audit batch size at all)."""
        return self.audit_batch_size(1, 1) is not None

    @property
    def batch_size_matters(self) -> bool:
        """Whether the task's ``batch_size`` changes its audit calls: it calls a
        model and splits the store by it (``self_verify`` audits every entry in
        one call, whatever the batch size)."""
        return self.audit_batch_size(1000, 1) != self.audit_batch_size(1000, 2)

    def label(self, reason: str) -> str:
        """How the transcript names a judgement made for ``reason`` (``start``,
        ``event at step 5``, ``in view at step 3``)."""
        return f"{self.name} ({reason})"

    def corrects(self, output: str) -> bool:
        """Whether its verdicts, with the audits in format ``output``, propose
        the claim of each contradicted entry (``filter_mode="correct"``)."""
        return False

    async def judge(self, request: JudgeRequest) -> Verdict | None:
        """The verdict, or None when there was nothing to judge."""
        return None

    def view(
        self,
        memory: Sequence[MemoryEntry],
        decisions: Mapping[str, Decision],
        mode: FilterMode = "delete",
        steps: Mapping[str, int] | None = None,
        corrections: Mapping[str, str] | None = None,
    ) -> list[Note]:
        """The navigator's memory view, or nothing when memory is not shown."""
        if not self.shows_memory:
            return []
        return build_view(memory, decisions, mode, steps, corrections, self.authority)


STRATEGIES: dict[str, MemoryPolicy] = {}


def register_strategy(cls: type[MemoryPolicy]) -> type[MemoryPolicy]:
    """Class decorator: register one instance of ``cls`` under ``cls.name``.
    That one instance serves every episode (concurrently), so a policy keeps
    no state: an episode's state is the ``Episode`` the loop passes it."""
    if not isinstance(getattr(cls, "name", None), str):
        raise ValueError(f"{cls.__name__} needs a class attribute `name` (the task's strategy value)")
    if cls.name in STRATEGIES:
        raise ValueError(f"strategy {cls.name!r} is already registered")
    STRATEGIES[cls.name] = cls()
    return cls


def window_open(instance: Instance, epoch: int) -> bool:
    """A detection window is open: the world last changed (or, at step 0, was
    last set up) at one of the regime's windows: step 0 on L0/L1/L2 (on L0
    nothing is stale there), each event on L3 (nothing before the first)."""
    return any(w.step == epoch for w in instance.windows)


class ModelAudit(MemoryPolicy):
    """Removes what the shared audit (``harness/audit.py``, the ``detect``
    task's own) flags, asked of the ``auditor`` model role. Under partial
    observability it audits only the entries of cells in view, each once per
    window (``due``)."""

    removes_entries = True

    def audit_batch_size(self, n_entries: int, batch_size: int) -> int:
        return batch_size

    def label(self, reason: str) -> str:
        return f"{self.name} audit ({reason})"

    def corrects(self, output: str) -> bool:
        return FORMATS[output].edits

    async def judge(self, request: JudgeRequest) -> Verdict | None:
        if not request.due:
            return None
        n = len(request.instance.memory)
        result = await audit_entries(
            request.auditor,
            request.seen,
            request.agent,
            request.due,
            modality=request.modality,
            batch_size=self.audit_batch_size(n, request.batch_size),
            output=request.output,
            threshold=request.threshold,
            label=self.label(request.reason),
            structured=request.structured,
        )
        flagged = result.flagged
        decisions: dict[str, Decision] = {e.id: "contradicted" if e.id in flagged else "keep" for e in request.due}
        steps = {eid: request.step for eid in flagged}
        return Verdict(decisions, steps, result.corrections, result.calls, result.tokens)


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
    summary = "one audit of the store in a single call before the first step; fixed for the episode"

    def judges(self, moment: Moment, instance: Instance, epoch: int) -> bool:
        return moment == "start"

    def audit_batch_size(self, n_entries: int, batch_size: int) -> int:
        return n_entries


@register_strategy
class Omcd(ModelAudit):
    name = "omcd"
    summary = "the batched audit at each detection window (before the first step; after each L3 event)"

    def judges(self, moment: Moment, instance: Instance, epoch: int) -> bool:
        return window_open(instance, epoch)


@register_strategy
class Oracle(MemoryPolicy):
    name = "oracle"
    summary = "the ground-truth stale entries removed at each detection window (omniscient: sees every cell)"
    removes_entries = True
    authority = "truth"

    def judges(self, moment: Moment, instance: Instance, epoch: int) -> bool:
        return moment != "view" and window_open(instance, epoch)

    def corrects(self, output: str) -> bool:
        return True

    async def judge(self, request: JudgeRequest) -> Verdict | None:
        labels = request.instance.labels_at(request.epoch)
        decisions: dict[str, Decision] = {eid: "contradicted" if kind else "keep" for eid, kind in labels.items()}
        stale = [e for e in request.instance.memory if labels.get(e.id)]
        corrections = {e.id: claim_of(request.grid[e.row][e.col]) for e in stale}
        return Verdict(decisions, {e.id: request.step for e in stale}, corrections)


def contradicts(entry: MemoryEntry, kind: str) -> bool:
    """Whether seeing ``kind`` at the entry's cell contradicts its claim (the hazard differs)."""
    return (entry.claim == DANGER) != bool(hazard(kind))


@register_strategy
class Resolve(MemoryPolicy):
    """The runtime resolver (docs/specification.md#the-runtime-resolver-and-filter-modes):
    no model call. The authority is the observation, the provenance the step it was made: an entry whose cell the
    agent has seen is resolved against the latest sighting; an entry whose
    cell it has not seen stays as written, labelled unverified. A
    distractor note is about no cell: nothing can resolve it, and nothing
    needs to (it makes no claim the lake can change); it stays as written."""

    name = "resolve"
    summary = "every entry resolved against what the agent has observed this episode (no model call)"
    removes_entries = True
    paper = False

    def judges(self, moment: Moment, instance: Instance, epoch: int) -> bool:
        return moment != "event"  # the next step's sighting shows the event's changes

    def corrects(self, output: str) -> bool:
        return True  # with what was seen

    async def judge(self, request: JudgeRequest) -> Verdict | None:
        verdict = Verdict()
        for entry in request.instance.memory:
            if entry.is_note:
                verdict.decisions[entry.id] = "keep"
                continue
            sighting = request.ledger.get(entry.cell)
            if sighting is None:
                decision: Decision = "unverified"
            elif contradicts(entry, sighting[0]):
                decision, verdict.steps[entry.id] = "contradicted", sighting[1]
                verdict.corrections[entry.id] = claim_of(sighting[0])
            else:
                decision = "keep"
            verdict.decisions[entry.id] = decision
            if decision != "unverified" and decision != request.decisions.get(entry.id):
                verdict.resolutions.append(resolution(entry, sighting, request.step, decision))
        return verdict


def resolution(entry: MemoryEntry, sighting: tuple[str, int] | None, step: int, decision: Decision) -> dict[str, Any]:
    """One logged resolution: the entry, what memory said, what was observed
    and when, the step it was resolved at, and the decision."""
    return {
        "entry": entry.id,
        "memory": entry.claim,
        "observed": sighting[0] if sighting else None,
        "seen_at": sighting[1] if sighting else None,
        "step": step,
        "decision": decision,
    }
