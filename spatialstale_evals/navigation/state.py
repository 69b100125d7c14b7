"""What the navigation loop leaves for its scorer in the sample's store."""

from __future__ import annotations

from typing import Any

from inspect_ai.util import StoreModel


class NavigationState(StoreModel):
    """Attributes:
    episode: The episode's record (``episode.episode_record``): outcome, trajectory, decisions, death cause.
    """

    episode: dict[str, Any] | None = None
