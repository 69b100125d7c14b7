"""What a task costs, counted from the very prompts the tasks build, without
calling a model: the :class:`Cost` record, the model that stands in for the
agent while a family's estimate runs (:class:`StandIn`), and the cost of one
audit, which detection and the auditing navigation strategies share.

Each family's own estimate lives in its package (``detection/cost.py``, ...)
and is named by its registry entry (``harness/family.py``); ``runs/cost.py``
supplies the stand-in (a scripted agent) and calls them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput
from inspect_ai.tool import ToolInfo

from spatialstale_evals.harness.audit import SCHEMAS, audit_messages, batches
from spatialstale_evals.harness.observe import Observation
from spatialstale_evals.harness.schemas import response_config
from spatialstale_evals.harness.tokens import count_input_tokens, count_text_tokens
from spatialstale_evals.world.grid import Cell, Grid
from spatialstale_evals.world.memory import MemoryEntry


@dataclass(frozen=True)
class Cost:
    """Model calls and tokens; ``+`` adds, ``*`` scales (episodes, epochs)."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Cost) -> Cost:
        return Cost(
            self.calls + other.calls, self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens
        )

    def __mul__(self, k: int) -> Cost:
        return Cost(self.calls * k, self.input_tokens * k, self.output_tokens * k)


class StandIn(Protocol):
    """The model a family's estimate asks: a reference agent whose replies are
    as long as a terse, correct agent's, its calls and tokens summed in ``cost``."""

    cost: Cost

    async def generate(
        self, input: list[ChatMessage], tools: Sequence[ToolInfo] = (), config: GenerateConfig | None = None, **_: Any
    ) -> ModelOutput: ...

    def reply_text(self, messages: list[ChatMessage], config: GenerateConfig) -> str:
        """The text the agent would answer ``messages`` with, without counting a call."""
        ...

    def answering(self, agent: Callable[[list[Any], list[Any], int], Any]) -> StandIn:
        """A fresh stand-in (its own ``cost``) that answers with ``agent``, a
        family's own (messages, tools, seed) -> reply, served or not (a cost bound's reader)."""
        ...


def audit_cost(
    model: StandIn,
    grid: Grid,
    memory: Sequence[MemoryEntry],
    modality: str | Observation,
    batch_size: int,
    agent: Cell = (0, 0),
    output: str = "binary",
    structured: bool = False,
) -> Cost:
    """One audit of ``memory`` against ``grid`` in batches of ``batch_size``
    (the reply in the schema's shape when ``structured``, as a provider gives it)."""
    total, config = Cost(), response_config(f"audit_{output}", SCHEMAS[output], structured)
    for batch in batches(memory, batch_size):
        messages = audit_messages(grid, agent, batch, modality, output)
        reply = model.reply_text(messages, config)
        total += Cost(1, count_input_tokens(messages, []), count_text_tokens(reply))
    return total
