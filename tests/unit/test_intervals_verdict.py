"""Confidence intervals of attack metrics (the verdict rule: ``test_verdict_rule.py``)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from recprivacy.metrics.attack import roc_auc
from recprivacy.metrics.intervals import (
    Estimate,
    _auc_replicates,
    auc_difference_interval,
    auc_interval,
    clopper_pearson,
    mean_interval,
    tpr_at_fpr_interval,
)


def test_auc_interval_point_equals_sklearn_and_hand_value():
    # positives 0.9, 0.4; negatives 0.5, 0.1, 0.4 -> pairs won: 3 + 1 + 0.5 (tie) = 4.5 of 6
    y = np.array([1, 1, 0, 0, 0])
    s = np.array([0.9, 0.4, 0.5, 0.1, 0.4])
    est = auc_interval(y, s, n_boot=200)
    assert est.value == pytest.approx(4.5 / 6)
    assert est.value == pytest.approx(roc_auc(y, s))
    assert est.low <= est.value <= est.high


def test_every_replicate_auc_is_the_resampled_targets_roc_auc_ties_included():
    # replicate 0 draws positives (0.9, 0.4) and negatives (0.4, 0.4, 0.1): 3 + (0.5 + 0.5 + 1) = 5 of 6
    s = np.array([0.9, 0.4, 0.5, 0.1, 0.4])
    pos, neg = np.array([[0, 1], [1, 1]]), np.array([[4, 4, 3], [2, 2, 2]])
    assert _auc_replicates(s, pos, neg)[0] == pytest.approx(5 / 6)
    assert _auc_replicates(s, pos, neg)[1] == 0.0  # 0.4 against 0.5 three times
    rng = np.random.default_rng(3)
    scores = rng.integers(0, 6, 300).astype(float)  # many ties
    y = rng.random(300) < 0.3
    pos = rng.choice(np.flatnonzero(y), (40, y.sum()))
    neg = rng.choice(np.flatnonzero(~y), (40, (~y).sum()))
    expected = [roc_auc(np.r_[np.ones(pos.shape[1]), np.zeros(neg.shape[1])], np.r_[scores[p], scores[n]])
                for p, n in zip(pos, neg, strict=True)]
    np.testing.assert_allclose(_auc_replicates(scores, pos, neg), expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(_auc_replicates(scores, pos, neg, cells=50), expected, rtol=0, atol=1e-12)  # in chunks


def test_auc_bootstrap_covers_known_auc():
    """Scores N(d, 1) for members and N(0, 1) for non-members have AUC Phi(d / sqrt(2))."""
    d = 1.0
    true_auc = float(stats.norm.cdf(d / np.sqrt(2)))
    rng = np.random.default_rng(7)
    covered = 0
    for draw in range(200):
        s = np.concatenate([rng.normal(d, 1.0, 100), rng.normal(0.0, 1.0, 100)])
        y = np.repeat([1, 0], 100)
        est = auc_interval(y, s, n_boot=300, seed=draw)
        covered += est.low <= true_auc <= est.high
    assert covered >= 180  # >= 90% of 200 draws


def test_auc_difference_of_identical_scores_is_exactly_zero():
    rng = np.random.default_rng(0)
    y = np.repeat([1, 0], 50)
    s = rng.normal(size=100) + y
    est = auc_difference_interval(y, s, s, n_boot=200)
    assert (est.value, est.low, est.high) == (0.0, 0.0, 0.0)


def test_auc_difference_detects_a_better_attack():
    rng = np.random.default_rng(1)
    y = np.repeat([1, 0], 300)
    strong = rng.normal(size=600) + 1.5 * y
    weak = rng.normal(size=600) + 0.2 * y
    est = auc_difference_interval(y, strong, weak, n_boot=300)
    assert est.low > 0.2
    assert est.value == pytest.approx(roc_auc(y, strong) - roc_auc(y, weak))


def test_tpr_below_one_over_n_is_not_resolvable():
    y = np.repeat([1, 0], [94, 94])
    s = np.arange(188, dtype=float)
    est = tpr_at_fpr_interval(y, s, 0.001)
    assert not est.resolvable
    assert str(est) == "not resolvable with n = 94"
    assert est.to_dict()["value"] is None
    assert tpr_at_fpr_interval(y, s, 0.02).resolvable  # 0.02 * 94 >= 1


def test_tpr_interval_is_clopper_pearson_of_the_hand_count():
    # 10 positives, 10 negatives; at FPR <= 10% one negative may be above the threshold
    y = np.repeat([1, 0], 10)
    s = np.array([10, 9, 8, 7, 6, 1, 1, 1, 1, 1, 6.5, 3, 0, 0, 0, 0, 0, 0, 0, 0], dtype=float)
    est = tpr_at_fpr_interval(y, s, 0.1)
    assert est.value == pytest.approx(0.5)  # a second negative at 3 caps the threshold above 3: 5 positives
    low, high = clopper_pearson(5, 10)
    assert (est.low, est.high) == (pytest.approx(low), pytest.approx(high))
    assert low == pytest.approx(stats.beta.ppf(0.025, 5, 6))


def test_clopper_pearson_edges():
    assert clopper_pearson(0, 20)[0] == 0.0
    assert clopper_pearson(20, 20)[1] == 1.0
    assert clopper_pearson(0, 20)[1] == pytest.approx(1 - 0.025 ** (1 / 20))


def test_mean_interval_uses_sample_sd():
    est = mean_interval([1.0, 2.0, 3.0])
    half = stats.t.ppf(0.975, 2) * 1.0 / np.sqrt(3)  # sample sd of 1, 2, 3 is 1
    assert (est.value, est.low, est.high) == (2.0, pytest.approx(2 - half), pytest.approx(2 + half))
    single = mean_interval([0.7])
    assert (single.low, single.high) == (0.7, 0.7)


def test_mean_interval_of_values_not_all_finite_is_a_point_when_equal_and_undefined_otherwise():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's inf - inf would warn
        same, mixed = mean_interval([math.inf] * 3), mean_interval([1.0, math.inf])
    assert (same.value, same.low, same.high, same.n) == (math.inf, math.inf, math.inf, 3)
    assert mixed.value == math.inf and math.isnan(mixed.low) and math.isnan(mixed.high)
    assert "not finite" in same.method


def test_mean_interval_is_clipped_to_the_metric_range():
    est = mean_interval([0.99, 1.0, 0.96], bounds=(0.0, 1.0))
    assert est.high == 1.0 and est.low < est.value
    assert mean_interval([0.99, 1.0, 0.96]).high > 1.0  # what an unbounded t interval would claim
