"""The statistics of the report: paired Wilcoxon signed-rank tests with a
matched-pairs rank-biserial effect size, and Pearson/Spearman correlations.

All tests are scipy's; this module only pairs the data, adds the effect size
and handles the degenerate cases (no pairs, no non-zero difference, constant
input) by returning NaN with a note instead of raising.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from spatialstale_evals.analysis.paper import ALPHA


@dataclass(frozen=True)
class PairedTest:
    n_pairs: int
    n_nonzero: int
    mean_a: float
    mean_b: float
    statistic: float
    pvalue: float
    rank_biserial: float
    significant: bool
    note: str = ""

    @property
    def mean_diff(self) -> float:
        return self.mean_a - self.mean_b


def rank_biserial(a: Sequence[float], b: Sequence[float]) -> float:
    """Matched-pairs rank-biserial correlation (Kerby 2014) of ``a - b``:
    (sum of ranks of positive differences - sum of ranks of negative ones) /
    total rank sum, over the non-zero differences (the pairs scipy's default
    ``zero_method="wilcox"`` keeps). +1: ``a`` higher in every pair; 0: no
    tendency; NaN when every difference is zero."""
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    d = d[d != 0]
    if d.size == 0:
        return math.nan
    ranks = sps.rankdata(np.abs(d))
    return float((ranks[d > 0].sum() - ranks[d < 0].sum()) / ranks.sum())


def paired_wilcoxon(a: Sequence[float], b: Sequence[float], alpha: float = ALPHA) -> PairedTest:
    """Two-sided Wilcoxon signed-rank test of paired ``a`` and ``b`` (scipy's
    defaults) with the rank-biserial effect size."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape:
        raise ValueError(f"paired vectors differ in length: {x.size} vs {y.size}")
    n = int(x.size)
    nonzero = int(np.count_nonzero(x - y))
    mean_a = float(x.mean()) if n else math.nan
    mean_b = float(y.mean()) if n else math.nan
    if n == 0:
        return PairedTest(0, 0, mean_a, mean_b, math.nan, math.nan, math.nan, False, "no shared seeds")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = sps.wilcoxon(x, y)
            statistic, pvalue = float(result.statistic), float(result.pvalue)
            note = "" if nonzero else "all differences zero"
        except ValueError as exc:
            statistic, pvalue, note = math.nan, math.nan, str(exc)
    return PairedTest(
        n_pairs=n,
        n_nonzero=nonzero,
        mean_a=mean_a,
        mean_b=mean_b,
        statistic=statistic,
        pvalue=pvalue,
        rank_biserial=rank_biserial(x, y),
        significant=bool(pvalue < alpha) if not math.isnan(pvalue) else False,
        note=note,
    )


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
        pr = sps.pearsonr(a, b)
        sr = sps.spearmanr(a, b)
    return Correlation(n, float(pr.statistic), float(pr.pvalue), float(sr.statistic), float(sr.pvalue))
