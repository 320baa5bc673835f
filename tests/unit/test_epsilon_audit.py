"""Measured epsilon (issue 32): ROC lower bounds on mechanisms with known epsilon, a broken
mechanism flagged, and the one-run canary bound on hand-checkable cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from recprivacy.metrics.epsilon import (
    canary_inclusion,
    judge_claim,
    largest_roc_epsilon,
    one_run_bound,
    one_run_epsilon,
    roc_epsilon,
)
from recprivacy.privacy.mechanisms import LaplaceMechanism, RandomizedResponse


def _rr_trial(eps: float, n: int, seed: int) -> float:
    """Lower bound from an attack that reads a binary randomized response of the member bit."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2, n)
    reports = RandomizedResponse(eps, 2).perturb(bits, rng)
    return roc_epsilon(bits, reports).low


@pytest.mark.parametrize("eps", [1.0, 2.0, 4.0])
def test_roc_lower_bound_of_randomized_response_holds_in_95_percent_of_trials(eps):
    below = sum(_rr_trial(eps, 2000, seed) <= eps for seed in range(100))
    assert below >= 95


@pytest.mark.parametrize("eps", [1.0, 2.0, 4.0])
def test_roc_lower_bound_is_tight_at_1e5_samples(eps):
    low = _rr_trial(eps, 100_000, 7)
    assert 0.7 * eps <= low <= eps


def test_noise_ten_times_too_small_is_flagged_as_a_broken_guarantee():
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2, 20_000)
    broken = LaplaceMechanism(epsilon=1.0, sensitivity=0.1)  # claims 1-DP for sensitivity 1, noise 10x too small
    out = broken.perturb(bits.astype(float), rng)
    check = judge_claim(1.0, roc_epsilon(bits, out).low, "ROC")
    assert check.label == "broken guarantee" and check.text.startswith("BROKEN GUARANTEE")
    honest = LaplaceMechanism(epsilon=1.0).perturb(bits.astype(float), rng)
    assert judge_claim(1.0, roc_epsilon(bits, honest).low, "ROC").label == "consistent"
    # the same broken mechanism caught in one run: 2000 canaries, one release each
    included = canary_inclusion(2000, seed=3)
    scores = broken.perturb(included.astype(float), rng)
    audit = one_run_epsilon(included, scores, 200, 200)
    assert judge_claim(1.0, audit.epsilon, audit.method).label == "broken guarantee"


def test_one_run_bound_hand_computed():
    # 10 guesses, all right: P[Bin(10, p) >= 10] = p^10 <= 0.05 <=> p <= 0.05^(1/10)
    p = 0.05 ** 0.1
    assert one_run_bound(10, 10) == pytest.approx(math.log(p / (1 - p)), abs=1e-5)
    # 5 of 10 right is what a coin achieves: no evidence
    assert one_run_bound(10, 5) == 0.0
    assert one_run_bound(0, 0) == 0.0


def test_one_run_epsilon_counts_top_and_bottom_guesses():
    included = np.array([1, 1, 0, 1, 0, 0, 1, 0], dtype=bool)
    scores = np.array([9, 8, 7, 1, 2, 0, 5, 3], dtype=float)
    audit = one_run_epsilon(included, scores, 2, 2)  # top: 9, 8 (both in); bottom: 0, 1 (out, in)
    assert (audit.guesses, audit.correct, audit.canaries) == (4, 3, 8)
    assert audit.epsilon == one_run_bound(4, 3) == 0.0


def test_one_run_bound_holds_for_randomized_response_canaries():
    eps, misses = 2.0, 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        included = canary_inclusion(1000, seed)
        scores = RandomizedResponse(eps, 2).perturb(included.astype(int), rng) + 1e-3 * rng.random(1000)
        misses += one_run_epsilon(included, scores, 100, 100).epsilon > eps
    assert misses <= 4


def test_canary_inclusion_is_seeded_and_fair():
    a, b = canary_inclusion(10_000, 1), canary_inclusion(10_000, 1)
    assert (a == b).all() and abs(a.mean() - 0.5) < 0.02


def test_a_claim_above_what_the_sample_can_show_is_untestable():
    limit = largest_roc_epsilon(1000, 1000)
    assert 5.0 < limit < math.log(1000)  # a perfect attack on 1000 + 1000 samples
    assert judge_claim(40.0, limit, "ROC", limit).label == "untestable"
    assert judge_claim(2.0, 1.0, "ROC", limit).label == "consistent"
    assert judge_claim(math.inf, 1.0, "ROC").label == "no formal claim"
