"""The one "mean ± sd over seeds" convention (``metrics.summary``): sample sd, ddof = 1."""

from __future__ import annotations

import math
import warnings

import pytest

from recprivacy.metrics.summary import NO_SD, format_mean_sd, mean_sd


def test_sample_sd_by_hand():
    # values 1, 2, 4: mean 7/3; squared deviations 16/9 + 1/9 + 25/9 = 42/9; / (n - 1) = 7/3
    s = mean_sd([1.0, 2.0, 4.0])
    assert s.mean == pytest.approx(7 / 3) and s.n == 3
    assert s.sd == pytest.approx(math.sqrt(7 / 3))  # 1.5275, not the population 1.2472
    assert s.format(2) == "2.33 ± 1.53"


def test_two_seeds_sd_is_the_half_range_times_root_two():
    # 0.6 and 0.8: deviations ±0.1, sum of squares 0.02, / 1 -> sd 0.1414 (population: 0.1)
    assert mean_sd((0.6, 0.8)).sd == pytest.approx(0.141421, abs=1e-6)


def test_one_seed_has_no_sd_and_prints_a_dash():
    s = mean_sd([0.25])
    assert s.mean == 0.25 and math.isnan(s.sd) and s.sd_or_none is None
    assert s.format() == f"0.250 ± {NO_SD}" == "0.250 ± —"
    assert format_mean_sd(0.5, None, 1) == "0.5 ± —"


def test_no_values_give_nan():
    s = mean_sd(iter([]))
    assert math.isnan(s.mean) and math.isnan(s.sd) and s.n == 0


def test_infinite_values_have_no_sd_and_warn_nothing():
    # a non-private method's epsilon over two seeds: inf - inf has no spread (numpy would warn and give NaN)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = mean_sd([math.inf, math.inf])
        mixed = mean_sd([1.0, math.inf])
    assert s.mean == math.inf and math.isnan(s.sd) and s.n == 2
    assert mixed.mean == math.inf and mixed.sd_or_none is None
