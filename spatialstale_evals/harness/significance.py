"""The statistics of the report: paired Wilcoxon signed-rank tests on exact
per-seed differences with a matched-pairs rank-biserial effect size, Holm's
adjustment within a family of tests, and Pearson/Spearman correlations.

The tests are scipy's; this module pairs the data, decides the method and
says which, adds the effect size and handles the degenerate cases (no pairs,
no non-zero difference, constant input) by returning NaN with a note instead
of raising.

Exact differences. A seed's rate over its epochs is a fraction (3 of 5
episodes); subtracting two such rates in floating point makes equal
differences unequal (0.6 - 0.4 != 0.8 - 0.6), which breaks ties and changes
ranks, W and p. The rates are therefore passed as ``Fraction``s, differenced
exactly, and only then converted (equal fractions give equal floats).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from types import ModuleType

#: Largest number of non-zero differences scipy's exact null distribution is used for (no ties).
EXACT_MAX = 50
#: Largest number with ties for which every sign assignment is enumerated (2^13 = 8192).
PERMUTATION_MAX = 13
#: What each method means (the report's note on the tests says the same).
METHOD_NOTES = {
    "exact": f"the exact null distribution (no ties, at most {EXACT_MAX} non-zero pairs)",
    "permutation": f"exact given the ties: every sign assignment enumerated (ties, at most {PERMUTATION_MAX} pairs)",
    "asymptotic": (
        "the normal approximation with tie-corrected variance and no continuity correction "
        f"(ties and more than {PERMUTATION_MAX} pairs, or more than {EXACT_MAX})"
    ),
}


@dataclass(frozen=True)
class PairedTest:
    n_pairs: int
    n_nonzero: int
    mean_a: float
    mean_b: float
    statistic: float
    pvalue: float
    rank_biserial: float
    method: str = ""
    note: str = ""

    @property
    def mean_diff(self) -> float:
        return self.mean_a - self.mean_b


def _sps() -> ModuleType:
    """``scipy.stats``, imported at the first test that needs it: every
    interpreter that reads the family registry (each task, each CLI command)
    imports this module through the report tables, and most never test anything."""
    from scipy import stats

    return stats


def exact_differences(a: Sequence[Fraction | int], b: Sequence[Fraction | int]) -> list[Fraction]:
    if len(a) != len(b):
        raise ValueError(f"paired vectors differ in length: {len(a)} vs {len(b)}")
    return [Fraction(x) - Fraction(y) for x, y in zip(a, b)]


def rank_biserial(d: Sequence[Fraction | float]) -> float:
    """Matched-pairs rank-biserial correlation (Kerby 2014) of the differences
    ``d``: (sum of ranks of positive differences - sum of ranks of negative
    ones) / total rank sum, over the non-zero differences (those the test
    keeps). +1: ``a`` higher in every pair; 0: no tendency; NaN when every
    difference is zero."""
    nonzero = np.array([float(x) for x in d if x != 0])
    if nonzero.size == 0:
        return math.nan
    ranks = _sps().rankdata(np.abs(nonzero))
    return float((ranks[nonzero > 0].sum() - ranks[nonzero < 0].sum()) / ranks.sum())


def wilcoxon_method(nonzero: Sequence[Fraction]) -> str:
    """Which p-value: exact without ties up to EXACT_MAX pairs; with ties, an
    exhaustive permutation up to PERMUTATION_MAX; else the normal approximation."""
    ties = len({abs(x) for x in nonzero}) < len(nonzero)
    if not ties and len(nonzero) <= EXACT_MAX:
        return "exact"
    return "permutation" if len(nonzero) <= PERMUTATION_MAX else "asymptotic"


def _positive_rank_sum(d: np.ndarray, axis: int = -1) -> np.ndarray:
    """The sum of the ranks of ``|d|`` (ties at their mid-rank) over the positive entries, along ``axis``."""
    ranks = _sps().rankdata(np.abs(d), axis=axis)
    return np.sum(ranks * (d > 0), axis=axis)


def _permutation_pvalue(x: np.ndarray) -> float:
    """The two-sided p-value of ``scipy.stats.wilcoxon(x, method=PermutationMethod(n_resamples=inf))``:
    its permutation test over every sign assignment, with the statistic (the sum of
    positive ranks) computed on all assignments at once (``vectorized``) where scipy's
    wilcoxon calls it once per assignment (2^13 Python calls at 13 pairs). The null
    distribution is the same set of rank sums, each a multiple of 1/2 and so exact
    in floating point in any order of summation: the p-value is the same number."""
    test = _sps().permutation_test(
        (x,), _positive_rank_sum, permutation_type="samples", vectorized=True, n_resamples=np.inf,
        alternative="two-sided", axis=-1,
    )  # fmt: skip
    return float(test.pvalue)


def paired_wilcoxon(a: Sequence[Fraction | int], b: Sequence[Fraction | int]) -> PairedTest:
    """Two-sided Wilcoxon signed-rank test of paired ``a`` and ``b`` (exact
    rationals: per-seed rates as ``Fraction``s, or counts) on their exact
    differences, zero differences dropped (Wilcoxon's convention), with the
    rank-biserial effect size and the method used."""
    d = exact_differences(a, b)
    n = len(d)
    mean_a = float(sum(map(Fraction, a)) / n) if n else math.nan
    mean_b = float(sum(map(Fraction, b)) / n) if n else math.nan
    nonzero = [x for x in d if x != 0]
    base = {"n_pairs": n, "n_nonzero": len(nonzero), "mean_a": mean_a, "mean_b": mean_b}
    if not nonzero:  # no information: the test is undefined, and not counted in a Holm family
        note = "no shared seeds" if n == 0 else "all differences zero"
        return PairedTest(**base, statistic=math.nan, pvalue=math.nan, rank_biserial=math.nan, note=note)
    method = wilcoxon_method(nonzero)
    values = np.array([float(x) for x in nonzero])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # the statistic does not depend on the method; the permutation p-value is computed apart
        result = _sps().wilcoxon(values, method="asymptotic" if method == "permutation" else method)
        pvalue = _permutation_pvalue(values) if method == "permutation" else float(result.pvalue)
    return PairedTest(
        **base,
        statistic=float(result.statistic),
        pvalue=pvalue,
        rank_biserial=rank_biserial(nonzero),
        method=method,
    )


def exact_signed_rank(a: Sequence[Fraction | int], b: Sequence[Fraction | int]) -> PairedTest:
    """Two-sided Wilcoxon signed-rank test of paired ``a`` and ``b`` with its
    exact null distribution at any number of pairs, ties included: the
    non-zero exact differences ranked by size (ties at their mid-rank), and
    every one of the 2^n sign assignments' sums of positive ranks counted (by
    convolution, so 50 pairs cost nothing); p is the share of assignments at
    least as far from the mean as the observed one. Method ``exact``; the
    statistic is the smaller of the positive and negative rank sums, as
    scipy's. Degenerate cases as ``paired_wilcoxon``."""
    d = exact_differences(a, b)
    nonzero = [x for x in d if x != 0]
    if not nonzero:
        return paired_wilcoxon(a, b)
    n = len(d)
    doubled = [round(2 * r) for r in _sps().rankdata([abs(float(x)) for x in nonzero])]  # mid-ranks: halves
    total = sum(doubled)
    positive = sum(r for r, x in zip(doubled, nonzero) if x > 0)
    dist = np.zeros(total + 1)
    dist[0] = 1.0
    for r in doubled:  # P(sum of positive doubled ranks = s), one difference's sign at a time
        dist = 0.5 * (dist + np.concatenate([np.zeros(r), dist[: total + 1 - r]]))
    sums = np.arange(total + 1)
    pvalue = float(min(1.0, dist[np.abs(2 * sums - total) >= abs(2 * positive - total)].sum()))
    return PairedTest(
        n_pairs=n,
        n_nonzero=len(nonzero),
        mean_a=float(sum(map(Fraction, a)) / n),
        mean_b=float(sum(map(Fraction, b)) / n),
        statistic=min(positive, total - positive) / 2,
        pvalue=pvalue,
        rank_biserial=rank_biserial(nonzero),
        method="exact",
    )


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment (family-wise error rate), in input order;
    NaN p-values (undefined tests) stay NaN and do not count in the family."""
    order = sorted((p, i) for i, p in enumerate(pvalues) if not math.isnan(p))
    adjusted = [math.nan] * len(pvalues)
    m, running = len(order), 0.0
    for rank, (p, i) in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[i] = running
    return adjusted


@dataclass(frozen=True)
class Correlation:
    n: int
    pearson_r: float
    pearson_p: float
    spearman_rho: float
    spearman_p: float
    note: str = ""


def correlate(x: Sequence[float], y: Sequence[float]) -> Correlation:
    """Pearson and Spearman correlation (scipy); NaN with a note when fewer than
    three pairs or either side is constant (a correlation is then undefined)."""
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n = int(a.size)
    if n < 3:
        return Correlation(n, math.nan, math.nan, math.nan, math.nan, "fewer than 3 seeds")
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        side = "detection F1" if np.ptp(a) == 0 else "success"
        return Correlation(n, math.nan, math.nan, math.nan, math.nan, f"{side} constant over seeds")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pr = _sps().pearsonr(a, b)
        sr = _sps().spearmanr(a, b)
    return Correlation(n, float(pr.statistic), float(pr.pvalue), float(sr.statistic), float(sr.pvalue))
