"""The lifelong task's per-episode measures that are not plain ratios of
counts: SPL (success weighted by path length) and the balanced note score.

SPL (Anderson et al. 2018, "On evaluation of embodied navigation agents"):
an episode's ``success x shortest / max(shortest, steps)``, with ``shortest``
the safe shortest path from start to goal on the lake the episode starts on;
1 for a success along a shortest path, 0 for any failure. Excess steps are the
steps a successful episode took beyond that path (none for a failure).

The balanced note score is the mean, over the classes present, of the share
of a class's knowable cells the notes tell right (``records.knowable_counts``):
one constant claim for every cell scores exactly 0.5 wherever both classes
are present, no notes 0, and NaN where no cell is knowable (episode 1).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from fractions import Fraction

#: The classes of knowable cells (``records.KNOWABLE_KEYS``' suffixes).
CLASSES = ("safe", "hole")


def spl_fraction(success: bool, steps: int, shortest: int | None) -> Fraction | None:
    """An episode's SPL as an exact fraction; None when it has no safe path
    (every lifetime keeps one, so only a hand-made lake lacks it)."""
    if shortest is None:
        return None
    if not success:
        return Fraction(0)
    return Fraction(shortest, max(shortest, steps)) if shortest else Fraction(1)


def excess_steps(success: bool, steps: int, shortest: int | None) -> int | None:
    """Steps a successful episode took beyond the shortest path; None for a failure."""
    return steps - shortest if success and shortest is not None else None


def balanced(pairs: Iterable[tuple[float, float]]) -> float:
    """The mean of ``told / knowable`` over the (told, knowable) pairs whose
    ``knowable`` is not 0; NaN when none is."""
    shares = [told / knowable for told, knowable in pairs if knowable]
    return sum(shares) / len(shares) if shares else math.nan
