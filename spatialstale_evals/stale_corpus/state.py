"""What the stale task's solver leaves for its judge in the sample's store."""

from __future__ import annotations

from typing import Any

from inspect_ai.util import StoreModel
from pydantic import Field


class StaleState(StoreModel):
    """Attributes:
    asked: The dimensions the solver asked (None: not recorded, every answered one).
    answers: Per dimension, the agent's answer record (``asking.answer_record``).
    """

    asked: list[str] | None = None
    answers: dict[str, dict[str, Any]] = Field(default_factory=dict)
