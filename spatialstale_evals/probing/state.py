"""What the probe solver leaves for its scorer in the sample's store."""

from __future__ import annotations

from typing import Any

from inspect_ai.util import StoreModel
from pydantic import Field


class ProbeState(StoreModel):
    """Attributes:
    records: One record per probe asked (its target, dimension, answer and verdict).
    """

    records: list[dict[str, Any]] = Field(default_factory=list)
