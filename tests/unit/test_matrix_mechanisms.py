"""The per-release audit of F-GERAI's feature LDP (``experiments.matrix.mechanisms``): k-RR on
one two-class block claims eps_x per report, a claim small enough to test with 20,000 reports."""

from __future__ import annotations

import pytest

from recprivacy.experiments.matrix.mechanisms import audit_feature_ldp


@pytest.mark.parametrize("eps_x", [1.0, 2.0])
def test_the_feature_ldp_bound_comes_close_to_the_claim_and_stays_below_it(eps_x):
    name, claimed, delta, accountant, unit, measured, limit, reading = audit_feature_ldp(20000, 0, eps_x)
    assert (claimed, delta, accountant) == (eps_x, 0.0, "k-RR, k = 2") and name.startswith("fgerai")
    # k-RR's ROC point is exactly (e^eps / (1 + e^eps), 1 / (1 + e^eps)); its 95% lower bound sits just below eps
    assert 0.85 * eps_x < measured <= eps_x < limit
    assert reading.startswith("consistent: lower bound")
