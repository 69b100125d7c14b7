"""What a navigate episode counts (the keys of its ``Score.metadata["counts"]``),
as the navigation metrics and the report's tables sum it."""

from __future__ import annotations

from dataclasses import dataclass

from spatialstale_evals.harness.counts import Counts


@dataclass(frozen=True)
class NavigationCounts(Counts):
    success: float = 0
    death: float = 0
    timeout: float = 0
    steps: float = 0
    steps_if_success: float = 0
    steps_if_death: float = 0
    steps_if_timeout: float = 0
    fallbacks: float = 0
    death_on_stale: float = 0
