"""The staleness audit shared by the ``detect`` task and the ``omcd`` and
``self_verify`` navigation strategies: one mechanism, so a detection score
and the audit inside navigation are the same measurement."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, get_args

from inspect_ai.log import transcript
from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ContentText,
    Model,
    ModelOutput,
)
from inspect_ai.util import JSONSchema

from spatialstale_evals.harness import prompts
from spatialstale_evals.harness.observe import Observation, observation_parts, user_message
from spatialstale_evals.harness.parsing import Judgement, parse_audit_reply
from spatialstale_evals.harness.schemas import flag, number, response_config, text, verdict_list
from spatialstale_evals.world.grid import UNSEEN, Cell
from spatialstale_evals.world.memory import MemoryEntry

#: The verdict formats (the tasks' ``output``): ``is_stale`` true/false, or a
#: ``staleness`` score in [0, 1] flagged at a threshold.
AuditOutput = Literal["binary", "continuous"]
#: The request that asks for each output format.
REQUESTS: dict[str, str] = {"binary": prompts.AUDIT_BINARY, "continuous": prompts.AUDIT_CONTINUOUS}
#: The verdict schema of each output format (``structured_output``; ``harness/schemas.py``).
SCHEMAS: dict[str, JSONSchema] = {
    "binary": verdict_list({"memory_id": text(), "is_stale": flag(), "confidence": number(), "reasoning": text()}),
    "continuous": verdict_list({"memory_id": text(), "staleness": number(), "reasoning": text()}),
}
if SCHEMAS.keys() != REQUESTS.keys() or set(REQUESTS) != set(get_args(AuditOutput)):
    raise RuntimeError("harness.audit: every AuditOutput needs its request and its schema")


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
) -> AuditResult:
    """Audit ``entries`` against the current ``grid`` in batches of ``batch_size``.

    Each batch is one model call holding the observation and the batch's
    entries (and, when ``structured``, the output format's schema); replies
    are parsed leniently and every failure is counted. Entries without a
    usable verdict are not flagged.
    """
    result = AuditResult()
    config = response_config(f"audit_{output}", SCHEMAS[output], structured)
    for index, batch in enumerate(batches(entries, batch_size)):
        messages = audit_messages(grid, agent, batch, modality, output)
        reply = await model.generate(messages, config=config)
        ids = [e.id for e in batch]
        parsed = parse_audit_reply(reply.completion, ids, output, threshold, refused=_refused(reply))
        result.judgements.update(parsed.judgements)
        result.add_counts(parsed.counts())
        result.calls += 1
        result.tokens += reply.usage.total_tokens if reply.usage else 0
        transcript().info(
            {
                "batch": index,
                "entries": ids,
                "flagged": sorted(j.memory_id for j in parsed.judgements.values() if j.is_stale),
                "judgements": [j.to_json() for j in parsed.judgements.values()],
                **parsed.counts(),
            },
            source=label,
        )
    return result
