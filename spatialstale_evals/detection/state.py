"""What the detect solver leaves for its scorer in the sample's store."""

from __future__ import annotations

from typing import Any

from inspect_ai.util import StoreModel
from pydantic import Field


class DetectionState(StoreModel):
    """Attributes:
    windows: One record per detection window audited (its flags, verdicts, parse counts).
    """

    windows: list[dict[str, Any]] = Field(default_factory=list)
