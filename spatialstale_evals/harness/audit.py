"""The staleness audit shared by the ``detect`` task and the ``omcd`` and
``self_verify`` navigation strategies: one mechanism, so a detection score
and the audit inside navigation are the same measurement."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from inspect_ai.log import transcript
from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ContentText,
    Model,
    ModelOutput,
)
from inspect_ai.util import JSONSchema, span

from spatialstale_evals.harness import prompts
from spatialstale_evals.harness.counts import f1_from_counts
from spatialstale_evals.harness.loggable import loggable_output
from spatialstale_evals.harness.observe import Observation, observation_parts, user_message
from spatialstale_evals.harness.params import NotApplicable, check_choice, check_unit_interval, defaults
from spatialstale_evals.harness.parsing import Judgement, parse_audit_reply
from spatialstale_evals.harness.schemas import flag, number, response_config, text, verdict_list
from spatialstale_evals.world.grid import UNSEEN, Cell
from spatialstale_evals.world.memory import DANGER, SAFE, MemoryEntry

#: The verdict formats (the tasks' ``output``): ``is_stale`` true/false, a
#: ``staleness`` score in [0, 1] flagged at a threshold, or ``is_stale`` with
#: the ``corrected`` claim (docs/specification.md#edit-proposals).
AuditOutput = Literal["binary", "continuous", "edit"]


@dataclass(frozen=True)
class AuditFormat:
    """One verdict format: the request that asks for it, its schema (for
    ``structured_output``, ``harness/schemas.py``), whether it is flagged at a
    ``threshold`` and whether its verdicts propose corrections (``edits``:
    scored by ``edit_accuracy``, usable by ``filter_mode="correct"``)."""

    request: str
    schema: JSONSchema
    thresholded: bool = False
    edits: bool = False


#: A corrected claim, or null (``edit``).
_CORRECTED = JSONSchema(anyOf=[JSONSchema(type="string", enum=[SAFE, DANGER]), JSONSchema(type="null")])
FORMATS: dict[str, AuditFormat] = {
    "binary": AuditFormat(
        prompts.AUDIT_BINARY,
        verdict_list({"memory_id": text(), "is_stale": flag(), "confidence": number(), "reasoning": text()}),
    ),
    "continuous": AuditFormat(
        prompts.AUDIT_CONTINUOUS,
        verdict_list({"memory_id": text(), "staleness": number(), "reasoning": text()}),
        thresholded=True,
    ),
    "edit": AuditFormat(
        prompts.AUDIT_EDIT,
        verdict_list(
            {
                "memory_id": text(),
                "is_stale": flag(),
                "corrected": _CORRECTED,
                "confidence": number(),
                "reasoning": text(),
            }
        ),
        edits=True,
    ),
}
#: The request and the schema of each format, as the cost estimate and tests read them.
REQUESTS: dict[str, str] = {name: f.request for name, f in FORMATS.items()}
SCHEMAS: dict[str, JSONSchema] = {name: f.schema for name, f in FORMATS.items()}
if set(FORMATS) != set(get_args(AuditOutput)):
    raise RuntimeError("harness.audit: every AuditOutput needs its format in FORMATS")


def check_output(task: Callable[..., Any], output: Any, threshold: Any) -> float:
    """Check a task's ``output`` and ``threshold``; the threshold as a float.
    A threshold other than the task's default with an output that is not
    flagged at one (``binary``, ``edit``) is an error (``NotApplicable``):
    it would be silently ignored."""
    check_choice("output", output, FORMATS)
    threshold = check_unit_interval("threshold", threshold)
    if not FORMATS[output].thresholded and threshold != defaults(task)["threshold"]:
        thresholded = ", ".join(name for name, f in FORMATS.items() if f.thresholded)
        raise NotApplicable(f"threshold={threshold} applies to output={thresholded} only; output is {output}")
    return threshold


@dataclass
class AuditResult:
    """Verdicts on a set of entries from one audit window."""

    judgements: dict[str, Judgement] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    calls: int = 0
    tokens: int = 0

    @property
    def flagged(self) -> set[str]:
        return {eid for eid, j in self.judgements.items() if j.is_stale}

    @property
    def corrections(self) -> dict[str, str]:
        """Flagged entry -> the claim its verdict proposes (``edit`` output)."""
        return {eid: j.corrected for eid, j in self.judgements.items() if j.is_stale and j.corrected is not None}

    def add_counts(self, counts: dict[str, int]) -> None:
        for key, value in counts.items():
            self.counts[key] = self.counts.get(key, 0) + value


def batches(entries: Sequence[MemoryEntry], batch_size: int) -> list[Sequence[MemoryEntry]]:
    return [entries[i : i + batch_size] for i in range(0, len(entries), batch_size)]


def audit_messages(
    grid: Sequence[str],
    agent: Cell,
    batch: Sequence[MemoryEntry],
    modality: str | Observation,
    output: str,
) -> list[ChatMessage]:
    parts = observation_parts(grid, agent, modality, "audit")
    if any(UNSEEN in row for row in grid):  # partial observability: only entries in view are audited
        parts.append(ContentText(text=prompts.AUDIT_PARTIAL))
    request = REQUESTS[output].format(count=len(batch), entries="\n".join(e.text for e in batch))
    return [
        ChatMessageSystem(content=prompts.AUDIT_SYSTEM),
        user_message([*parts, ContentText(text=request)]),
    ]


def _refused(output: ModelOutput) -> bool:
    return bool(output.choices) and output.choices[0].stop_reason == "content_filter"


async def audit_entries(
    model: Model,
    grid: Sequence[str],
    agent: Cell,
    entries: Sequence[MemoryEntry],
    *,
    modality: str | Observation,
    batch_size: int,
    output: str = "binary",
    threshold: float | None = None,
    label: str = "audit",
    structured: bool = False,
    conversation: list[ChatMessage] | None = None,
) -> AuditResult:
    """Audit ``entries`` against the current ``grid`` in batches of ``batch_size``.

    Each batch is one model call holding the observation and the batch's
    entries (and, when ``structured``, the output format's schema); replies
    are parsed leniently and every failure is counted. Entries without a
    usable verdict are not flagged. Each call is followed in the transcript
    by one line of what was read from its reply (``batch_line``). With
    ``conversation`` (the detect task's sample messages), the system message
    (once) and each batch's prompt and reply are appended to it as they are
    made, so an Inspect limit that stops the audit leaves the calls made.
    """
    result = AuditResult()
    config = response_config(f"audit_{output}", SCHEMAS[output], structured)
    todo = batches(entries, batch_size)
    for index, batch in enumerate(todo):
        messages = audit_messages(grid, agent, batch, modality, output)
        reply = loggable_output(await model.generate(messages, config=config))
        if conversation is not None:
            if not conversation:
                conversation.append(messages[0])  # the system message, the same in every batch
            conversation.extend([messages[-1], reply.message])
        ids = [e.id for e in batch]
        parsed = parse_audit_reply(reply.completion, ids, output, threshold, refused=_refused(reply))
        result.judgements.update(parsed.judgements)
        result.add_counts(parsed.counts())
        result.calls += 1
        result.tokens += reply.usage.total_tokens if reply.usage else 0
        flagged = sorted(j.memory_id for j in parsed.judgements.values() if j.is_stale)
        transcript().info(batch_line(index, len(todo), ids, flagged, parsed.counts()), source=label)
    return result


def _ids(ids: Sequence[str]) -> str:
    return ", ".join(ids) if ids else "none"


def batch_line(index: int, total: int, ids: Sequence[str], flagged: Sequence[str], counts: dict[str, int]) -> str:
    """One batch's transcript line: its entries, what its reply flagged, and
    every parse problem counted (``parsing.ParsedAudit.counts``)."""
    which = f"{ids[0]} .. {ids[-1]}" if len(ids) > 1 else _ids(ids)
    problems = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in counts.items() if v and k != "parse_failures")
    return f"batch {index + 1}/{total} ({len(ids)} entries, {which}): flagged {_ids(flagged)}" + (
        f"; {problems}" if problems else ""
    )


def audit_span(label: str) -> AbstractAsyncContextManager[None]:
    """The span one audit's model calls and lines sit in. ``inspect view``
    draws a span of type ``agent`` as a sub-agent named ``label`` with its
    own model calls; the auditor's calls outside one are folded away as
    "utility agents" of the navigator's loop (their system message differs)."""
    return span(label, type="agent")


def audit_summary(judged: int, calls: int, counts: dict[str, int], listed: str, ids: Sequence[str]) -> str:
    """The line that follows an audit's span (its ``source`` the audit's
    label): how much it judged and at what cost, the entries it ``listed``
    (``flagged`` in detect; ``removed`` from the navigator's view, the
    episode record's word), its F1 against the truth (``counts``: its
    confusion counts, ``counts.confusion``) and the entries left without a
    usable verdict, when counted."""
    tp, fp, fn = counts["tp"], counts["fp"], counts["fn"]
    failures = counts.get("parse_failures")
    return (
        f"{judged} entries judged in {calls} call(s); {listed} {len(ids)}: {_ids(ids)}; "
        f"F1 {f1_from_counts(tp, fp, fn):.3f} vs truth (tp {tp}, fp {fp}, fn {fn}, tn {counts['tn']})"
        + (f"; {failures} without a usable verdict" if failures is not None else "")
    )
