"""What a detect sample counts: its windows' confusion and edit counts
(``harness/counts.py``, shared with navigate's audits), the entries judged,
those without a usable verdict and the model calls, summed per sample."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from spatialstale_evals.harness.counts import (
    CONFUSION_KEYS,
    EDIT_KEYS,
    PARSE_KEYS,
    ConfusionCounts,
    EditCounts,
    f1_from_counts,
)


@dataclass(frozen=True)
class DetectionCounts(EditCounts, ConfusionCounts):
    """What the detection metrics and tables sum: the confusion, the proposed
    corrections, the entries judged, those without a usable verdict and the
    model calls."""

    entries: float = 0
    parse_failures: float = 0
    calls: float = 0


#: The counts of one detection window, as recorded and as summed per sample
#: (with ``EDIT_KEYS`` too when the output proposes edits).
DETECTION_KEYS = (*CONFUSION_KEYS, "entries", *PARSE_KEYS, "calls")


def detection_value(windows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """A detect sample's counts: every window's counts summed (the edit
    counts too when the windows have them), its F1 and the number of windows."""
    keys = (*DETECTION_KEYS, *(k for k in EDIT_KEYS if windows and k in windows[0]))
    totals: dict[str, float] = {key: sum(w.get(key, 0) for w in windows) for key in keys}
    totals["f1"] = f1_from_counts(totals["tp"], totals["fp"], totals["fn"])
    totals["windows"] = len(windows)
    return totals
