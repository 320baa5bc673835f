"""The verdict rule as the audit sections apply it (issue 32), on hand-made cases."""

from __future__ import annotations

import numpy as np
import pytest

from recprivacy.experiments.audit import SectionWriter
from recprivacy.experiments.federated.classes import class_metric, judge_classes
from recprivacy.experiments.results import Results
from recprivacy.metrics.intervals import paired_difference_interval, weighted_mean


def _writer() -> SectionWriter:
    return SectionWriter("s", Results(name="t", study="audit", config={}))


def test_a_constant_margin_has_a_point_interval_and_the_attack_its_bootstrap():
    a = np.array([0.2, 0.4, 0.6, 0.8])
    value, base, margin = paired_difference_interval(weighted_mean(a), weighted_mean(a - 0.1), np.arange(4))
    assert (value.value, base) == pytest.approx((0.5, 0.4))
    assert (margin.value, margin.low, margin.high) == pytest.approx((0.1, 0.1, 0.1))
    assert 0.2 <= value.low < 0.5 < value.high <= 0.8


def test_a_users_targets_are_resampled_together():
    # two users, each with many identical targets: only 2 clusters, so the interval stays wide
    a = np.repeat([0.0, 1.0], 50)
    value, _, _ = paired_difference_interval(weighted_mean(a), weighted_mean(np.zeros(100)), np.repeat([0, 1], 50))
    assert value.low == 0.0 and value.high == 1.0


def test_an_attack_below_the_same_k_baseline_reads_no_leak():
    rng = np.random.default_rng(0)
    attack, guess = rng.binomial(1, 0.10, 2000), rng.binomial(1, 0.25, 2000)
    out = _writer()
    value, blind, margin = paired_difference_interval(weighted_mean(attack), weighted_mean(guess), np.arange(2000))
    verdict = out.judge("exposure", "Recall@10", value, blind, "popularity guess, 10 items", margin)
    assert verdict.label == "no leak measured"
    (risk,) = out.risks
    assert risk.row()[3] == f"{blind:.4f} (popularity guess, 10 items)" and risk.row()[5].startswith("no leak measured:")


def test_a_straddling_interval_reads_inconclusive_and_a_clear_margin_leaks():
    rng = np.random.default_rng(1)
    base = rng.binomial(1, 0.3, 300).astype(float)
    same = rng.permutation(base)  # the same mean, other targets: margin 0 with a spread
    better = np.maximum(base, rng.binomial(1, 0.5, 300))
    for attack, label in ((same, "inconclusive"), (better, "leaks")):
        value, blind, margin = paired_difference_interval(weighted_mean(attack), weighted_mean(base), np.arange(300))
        assert _writer().judge("a", "m", value, blind, "guess", margin).label == label


def test_class_metrics_hand_computed():
    truth, pred = np.array([0, 0, 0, 1]), np.array([1, 1, 0, 1])
    rows = np.arange(4)
    assert class_metric("accuracy", rows, truth, pred, 2)(None) == 0.5
    assert class_metric("majority_accuracy", rows, truth, pred, 2)(None) == 0.75
    # majority guess: F1 of class 0 = 2*0.75/(1.75) = 6/7, class 1 = 0 -> weighted 0.75 * 6/7
    # uniform guess: sum p_c 2 p_c / (2 p_c + 1) = 0.75 * 1.5/2.5 + 0.25 * 0.5/1.5
    assert class_metric("blind_weighted_f1", rows, truth, pred, 2)(None) == pytest.approx(max(0.75 * 6 / 7, 0.45 + 1 / 12))
    w = np.array([1.0, 1.0, 1.0, 3.0])  # class 1 now the weighted half; majority class stays 0 (full-sample)
    assert class_metric("accuracy", rows, truth, pred, 2)(w) == pytest.approx(4 / 6)


def test_attribute_accuracy_below_the_majority_guess_never_reads_leaks():
    rng = np.random.default_rng(2)
    truth = (rng.random(600) < 0.3).astype(int)  # majority class 0 at ~70%
    pred = rng.integers(0, 2, 600)  # coin flips: ~50% accuracy, high "recall" of class 1
    out = _writer()
    judge_classes(out, "attribute", np.arange(600), truth, pred, 2, "coin")
    accuracy, f1 = out.risks
    assert accuracy.verdict.startswith("no leak measured") and "majority-class" in accuracy.baseline_name
    assert not f1.verdict.startswith("leaks")
