"""The per-release audit of F-GERAI's feature LDP (``experiments.matrix.mechanisms``): k-RR on
one two-class block claims eps_x per report, a claim small enough to test with 20,000 reports."""

from __future__ import annotations

import pytest

from recprivacy.defenses.federated_dp import FunctionalMechanism, ItemObjectiveNoise
from recprivacy.experiments.matrix.mechanisms import audit_feature_ldp, audit_functional_mechanism, audit_item_objective


@pytest.mark.parametrize("eps_x", [1.0, 2.0])
def test_the_feature_ldp_bound_comes_close_to_the_claim_and_stays_below_it(eps_x):
    name, claimed, delta, accountant, unit, measured, limit, reading = audit_feature_ldp(20000, 0, eps_x)
    assert (claimed, delta, accountant) == (eps_x, 0.0, "k-RR, k = 2") and name.startswith("fgerai")
    # k-RR's ROC point is exactly (e^eps / (1 + e^eps), 1 / (1 + e^eps)); its 95% lower bound sits just below eps
    assert 0.85 * eps_x < measured <= eps_x < limit
    assert reading.startswith("consistent: lower bound")


def test_the_functional_mechanism_bound_comes_close_to_its_claim():
    """One label's clipped slope ``1/2 - r + Lap(1)`` is exactly post-processed Laplace with
    sensitivity 1: the bound sits just below eps_f = 1."""
    name, claimed, _, _, unit, measured, limit, reading = audit_functional_mechanism(20000, 0)
    assert (name, claimed, unit) == ("fgerai (functional mechanism)", 1.0, "one training label, one local step")
    assert 0.85 < measured <= 1.0 < limit and reading.startswith("consistent")


def test_a_functional_mechanism_with_ten_times_too_little_noise_is_flagged():
    broken = FunctionalMechanism(epsilon=1.0, sensitivity=0.1)  # Lap(0.1) where sensitivity 1 needs Lap(1)
    *_, measured, limit, reading = audit_functional_mechanism(20000, 0, broken)
    assert 1.0 < measured < limit and reading.startswith("BROKEN")


def test_f_dpmf_claims_more_than_the_sample_can_test_and_a_small_claim_holds():
    """F-DPMF's own ε = 40 lies beyond what 20,000 draws can show; at ε = 2 its noise (density
    ∝ exp(-ε‖η‖/Δ), Δ = 2, a neighbour moving the gradient by ‖p‖ = 1) keeps the bound below 2."""
    *_, claimed, _, _, _, measured, limit, reading = audit_item_objective(20000, 0)
    assert claimed == 40.0 > limit and reading.startswith("untestable")
    *_, measured, limit, reading = audit_item_objective(20000, 0, ItemObjectiveNoise(epsilon=2.0))
    assert 0.3 < measured <= 2.0 and reading.startswith("consistent")
