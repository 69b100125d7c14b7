"""The paired tests on exact data: the report's Wilcoxon W and p equal scipy's
on the integer differences of success counts; success and death (its
complement) give the same test; Holm's adjustment equals its definition."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.stats
from _reference import holm as holm_by_definition
from hypothesis import given, settings
from hypothesis import strategies as st

from spatialstale_evals.harness.significance import holm, paired_wilcoxon

EPOCHS = 5
COUNTS = st.lists(st.tuples(st.integers(0, EPOCHS), st.integers(0, EPOCHS)), min_size=1, max_size=50)


def _rates(counts: list[int]) -> list[Fraction]:
    return [Fraction(c, EPOCHS) for c in counts]


@settings(max_examples=200, deadline=None)
@given(COUNTS)
def test_wilcoxon_equals_scipy_on_integer_differences(pairs: list[tuple[int, int]]) -> None:
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    t = paired_wilcoxon(_rates(a), _rates(b))
    d = np.array(a) - np.array(b)
    d = d[d != 0]
    assert t.n_pairs == len(pairs) and t.n_nonzero == len(d)
    if len(d) == 0:
        assert math.isnan(t.pvalue) and t.note == "all differences zero"
        return
    ref = scipy.stats.wilcoxon(d)  # scipy's own choice of method, on integers
    assert t.statistic == ref.statistic
    assert t.pvalue == pytest.approx(ref.pvalue, rel=1e-12, abs=0)


@settings(max_examples=200, deadline=None)
@given(COUNTS)
def test_success_and_death_tests_agree_on_complementary_data(pairs: list[tuple[int, int]]) -> None:
    success_a, success_b = [x for x, _ in pairs], [y for _, y in pairs]
    death_a, death_b = [EPOCHS - x for x in success_a], [EPOCHS - y for y in success_b]
    s = paired_wilcoxon(_rates(success_a), _rates(success_b))
    d = paired_wilcoxon(_rates(death_a), _rates(death_b))
    assert (s.statistic, s.n_nonzero, s.method) == (d.statistic, d.n_nonzero, d.method) or math.isnan(s.pvalue)
    assert s.pvalue == d.pvalue or (math.isnan(s.pvalue) and math.isnan(d.pvalue))
    assert s.rank_biserial == -d.rank_biserial or math.isnan(s.rank_biserial)


def test_float_rates_would_break_ties_that_exact_ones_keep() -> None:
    """The bug this module exists to avoid: 0.6 - 0.4 and 0.8 - 0.6 are not equal
    in floating point, so scipy on float rates ranks tied differences apart."""
    a = [3, 4, 4, 5, 2, 3, 5, 4, 3, 5, 4, 2, 5, 4]
    b = [2, 3, 3, 4, 1, 2, 3, 2, 1, 2, 1, 0, 1, 0]
    exact = paired_wilcoxon(_rates(a), _rates(b))
    ints = scipy.stats.wilcoxon(np.array(a) - np.array(b))
    floats = scipy.stats.wilcoxon(np.array(a) / EPOCHS - np.array(b) / EPOCHS)
    assert exact.pvalue == pytest.approx(ints.pvalue, rel=1e-12)
    assert floats.pvalue != pytest.approx(ints.pvalue, rel=1e-6), "the float version differs: the test can fail"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.floats(0, 1), st.just(math.nan)), max_size=30))
def test_holm_equals_its_definition(p: list[float]) -> None:
    assert holm(p) == pytest.approx(holm_by_definition(p), nan_ok=True)


def test_the_method_is_named() -> None:
    assert paired_wilcoxon([1, 2, 3, 4, 5], [0, 0, 0, 0, 0]).method == "exact"
    assert paired_wilcoxon([1, 1, 2, 0, 3], [0, 0, 0, 1, 0]).method == "permutation"
    assert paired_wilcoxon([1] * 20, [0] * 20).method == "asymptotic"
