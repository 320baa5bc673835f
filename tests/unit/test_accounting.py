"""Accounting: DIPSGNN Theorem 4.2 reference values (worked out by hand), composition, statements."""

from __future__ import annotations

import json
import math
import sys

import numpy as np
import pytest
from scipy import optimize

from recprivacy.errors import ConfigError
from recprivacy.privacy import (
    PLDAccountant,
    PrivacyStatement,
    RDPAccountant,
    StatementContext,
    ZCDPAccountant,
    basic_composition,
    check_delta,
    compose_gaussian,
    compose_laplace,
    dipsgnn_composed_statement,
    dipsgnn_epsilon,
    dipsgnn_nominal_statement,
    dipsgnn_sigma,
    dpsgd_epsilon,
    dpsgd_noise_multiplier,
    gaussian_epsilon,
    gaussian_event,
    gaussian_sigma,
    make_accountant,
    poisson_sampled_event,
)

DELTA = 2.5e-7

# Theorem 4.2's closed form evaluated by hand: (T, C, eps2, sigma) at delta = 2.5e-7
THEOREM_4_2 = [
    (1, 0.5, 4, 0.731938),
    (1, 0.5, 5, 0.593517),
    (1, 0.2, 5, 0.237407),
    (1, 0.1, 5, 0.118703),
    (1, 0.3, 5, 0.356110),
    (1, 1.0, 5, 1.187033),
    (1, 1.0, 4, 1.463876),
    (1, 1.0, 3, 1.924581),
    (1, 0.2, 4, 0.292775),
    (1, 0.2, 3, 0.384916),
    (2, 0.2, 5, 0.335744),
    (3, 0.2, 5, 0.411200),
    (4, 0.2, 5, 0.474813),
    (5, 0.2, 5, 0.530857),
]


# --------------------------------------------------------------------------- Theorem 4.2


@pytest.mark.parametrize("T, C, eps, sigma", THEOREM_4_2)
def test_theorem_4_2_reference_values(T: int, C: float, eps: float, sigma: float) -> None:
    got = dipsgnn_sigma(eps, DELTA, C, T)
    assert got == pytest.approx(sigma, abs=6e-7)
    assert dipsgnn_epsilon(got, DELTA, C, T) == pytest.approx(eps, abs=1e-9)


def test_theorem_4_2_numerical_solver_and_optimal_order_agree() -> None:
    T, C, eps = 3, 0.4, 4.0
    sigma = dipsgnn_sigma(eps, DELTA, C, T)
    solved = optimize.brentq(lambda s: dipsgnn_epsilon(s, DELTA, C, T) - eps, 1e-3, 100.0,
                             xtol=1e-14)
    assert solved == pytest.approx(sigma, rel=1e-10)
    # RDP (alpha, T C^2 alpha / 2 sigma^2) + Mironov Prop. 3, minimised at alpha*
    big_l = math.log(1 / DELTA)

    def eps_at(alpha: np.ndarray) -> np.ndarray:
        return T * C**2 * alpha / (2 * sigma**2) + big_l / (alpha - 1)

    alpha_star = 1 + math.sqrt(2 * sigma**2 * big_l / (T * C**2))
    assert eps_at(np.array(alpha_star)) == pytest.approx(eps, rel=1e-12)
    grid = np.linspace(1.01, 200, 20_000)
    assert eps_at(grid).min() >= eps - 1e-12


def test_theorem_4_2_monotonicity_and_limits() -> None:
    base = dipsgnn_sigma(5, DELTA, 0.2, 1)
    assert dipsgnn_sigma(5, DELTA, 0.2, 4) == pytest.approx(2 * base)  # grows as sqrt(T)
    assert dipsgnn_sigma(5, DELTA, 0.6, 1) == pytest.approx(3 * base)  # linear in C
    assert dipsgnn_sigma(3, DELTA, 0.2, 1) > base > dipsgnn_sigma(8, DELTA, 0.2, 1)
    assert dipsgnn_sigma(5, 1e-9, 0.2, 1) > base > dipsgnn_sigma(5, 1e-4, 0.2, 1)
    assert dipsgnn_sigma(math.inf, DELTA, 0.2, 1) == 0.0
    assert dipsgnn_epsilon(0.0, DELTA, 0.2, 1) == math.inf


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(epsilon=0.0, delta=DELTA, C=0.2, T=1),
        dict(epsilon=5.0, delta=1.0, C=0.2, T=1),
        dict(epsilon=5.0, delta=0.0, C=0.2, T=1),
        dict(epsilon=5.0, delta=DELTA, C=-0.2, T=1),
        dict(epsilon=5.0, delta=DELTA, C=0.2, T=0),
        dict(epsilon=5.0, delta=DELTA, C=0.2, T=1.5),
    ],
)
def test_theorem_4_2_rejects_bad_parameters(kwargs: dict) -> None:
    with pytest.raises(ConfigError):
        dipsgnn_sigma(**kwargs)


def test_check_delta_rule() -> None:
    assert check_delta(DELTA, 365_535) == DELTA  # ML-1M interactions (paper 002, Table 1)
    with pytest.raises(ConfigError, match="smaller than 1/n_records"):
        check_delta(1e-5, 365_535)


# --------------------------------------------------------------------------- composition


def test_dipsgnn_audit_accountant_reference_values() -> None:
    """Worked out by hand: 1 release -> 5.0000, 2 (in + out) -> 7.2789, 940 -> about 476.0."""
    sigma = dipsgnn_sigma(5, DELTA, 0.2, 1)
    one = dipsgnn_composed_statement(sigma, 0.2, 1, DELTA, epochs=1, prefix_reuse=1,
                                     count_in_out=False)
    two = dipsgnn_composed_statement(sigma, 0.2, 1, DELTA, epochs=1, prefix_reuse=1)
    run = dipsgnn_composed_statement(sigma, 0.2, 1, DELTA, epochs=10, prefix_reuse=47)
    assert one.epsilon == pytest.approx(5.0, abs=1e-9)
    assert one.epsilon == pytest.approx(dipsgnn_nominal_statement(sigma, 0.2, 1, DELTA).epsilon)
    assert two.epsilon == pytest.approx(7.2789, abs=5e-5)
    assert run.epsilon == pytest.approx(476.0, abs=0.05)
    assert "47 prefix" in run.scope and "A_in" in run.scope
    # the maintained accountants certify less (tighter conversions), still far above 5
    tighter = dipsgnn_composed_statement(sigma, 0.2, 1, DELTA, 10, 47, accountant="rdp")
    assert 400 < tighter.epsilon < run.epsilon


def test_rdp_accountant_matches_gaussian_rdp_closed_form() -> None:
    """k Gaussians of multiplier m have RDP k alpha / (2 m^2); dp-accounting converts with
    eps = rdp + log(1 - 1/alpha) - log(delta alpha) / (alpha - 1) (Balle et al. 2020)."""
    m, k, delta, alpha = 3.0, 25, 1e-5, 12.0
    acct = RDPAccountant(orders=[alpha]).compose(gaussian_event(m), k)
    rdp = k * alpha / (2 * m**2)
    expected = rdp + math.log1p(-1 / alpha) - math.log(delta * alpha) / (alpha - 1)
    assert acct.get_epsilon(delta) == pytest.approx(expected, rel=1e-12)


def test_gaussian_composition_orders_and_exact_value() -> None:
    """k-fold Gaussian composition = one Gaussian with multiplier m / sqrt(k): the PLD
    accountant reproduces that exact value; RDP and zCDP are looser; all beat naive k * eps."""
    m, k, delta = 2.0, 10, 1e-5
    exact = gaussian_epsilon(m / math.sqrt(k), delta)
    pld = compose_gaussian(m, k, delta, accountant="pld")
    rdp = compose_gaussian(m, k, delta, accountant="rdp")
    zcdp = compose_gaussian(m, k, delta, accountant="zcdp")
    assert pld == pytest.approx(exact, rel=1e-4)
    assert exact <= rdp <= zcdp
    assert zcdp < k * gaussian_epsilon(m, delta)
    assert zcdp == pytest.approx(k / (2 * m**2) + 2 * math.sqrt(k / (2 * m**2) * math.log(1e5)))


def test_laplace_composition() -> None:
    eps, delta = 0.1, 1e-5
    one = compose_laplace(eps, 1, delta)
    assert one <= eps and one == pytest.approx(eps, rel=1e-3)  # delta > 0 buys a little
    k = 1000
    composed = compose_laplace(eps, k, delta)
    # advanced composition (Dwork, Rothblum & Vadhan 2010) is a valid but looser bound
    advanced = eps * math.sqrt(2 * k * math.log(1 / delta)) + k * eps * math.expm1(eps)
    assert composed < advanced < k * eps
    assert compose_laplace(eps, k, delta, accountant="rdp") < k * eps


def test_basic_composition_for_apm_budgets() -> None:
    assert basic_composition([30.0, 60.0], [2, 3]) == 240.0
    assert basic_composition([1.0, 2.5]) == 3.5
    with pytest.raises(ConfigError, match="counts"):
        basic_composition([1.0], [1, 2])


def test_dpsgd_calibration_meets_target() -> None:
    eps, delta, q, steps = 5.0, DELTA, 0.01, 1000
    m = dpsgd_noise_multiplier(eps, delta, q, steps)
    assert dpsgd_epsilon(m, q, steps, delta) <= eps
    assert dpsgd_epsilon(m * 0.99, q, steps, delta) > eps  # and it is the smallest such noise


def test_dpsgd_calibration_cache_returns_the_uncached_result() -> None:
    from recprivacy.privacy.accounting import _calibrated_noise_multiplier

    eps, delta, q, steps = 3.0, DELTA, 0.02, 200
    fresh = _calibrated_noise_multiplier.__wrapped__(eps, delta, q, steps, "rdp")
    first = dpsgd_noise_multiplier(eps, delta, q, steps)
    hits = _calibrated_noise_multiplier.cache_info().hits
    again = dpsgd_noise_multiplier(np.float64(eps), delta, q, np.int64(steps))  # same values, other types
    assert first == again == fresh
    assert _calibrated_noise_multiplier.cache_info().hits == hits + 1
    with pytest.raises(ConfigError):  # validation still runs on every call, cached or not
        dpsgd_noise_multiplier(eps, delta, q, 0)


def test_accountants_are_replaceable_and_reject_what_they_cannot_handle() -> None:
    for name, cls in (("rdp", RDPAccountant), ("pld", PLDAccountant), ("zcdp", ZCDPAccountant)):
        acct = make_accountant(name)
        assert isinstance(acct, cls)
        assert acct.compose(gaussian_event(1.0), 2) is acct
    with pytest.raises(ConfigError, match="accountant must be one of"):
        make_accountant("moments")
    with pytest.raises(ConfigError, match="cannot account"):
        ZCDPAccountant().compose(poisson_sampled_event(gaussian_event(1.0), 0.1))
    with pytest.raises(ConfigError, match="count"):
        RDPAccountant().compose(gaussian_event(1.0), 0)
    with pytest.raises(ConfigError, match="delta"):
        RDPAccountant().get_epsilon(0.0)


def test_gaussian_sigma_classical_and_errors() -> None:
    assert gaussian_sigma(0.5, 1e-5, 2.0, "classical") == pytest.approx(
        2.0 * math.sqrt(2 * math.log(1.25 / 1e-5)) / 0.5
    )
    with pytest.raises(ConfigError, match="method"):
        gaussian_sigma(0.5, 1e-5, method="fancy")


# --------------------------------------------------------------------------- statements


def test_privacy_statement_reads_and_serialises() -> None:
    sigma = dipsgnn_sigma(5, DELTA, 0.2, 1)
    statement = dipsgnn_nominal_statement(sigma, 0.2, 1, DELTA)
    text = str(statement)
    assert text.startswith("(5, 2.5e-07)-differential privacy")
    assert "transition count" in text and "one forward pass" in text and "Theorem 4.2" in text
    data = json.loads(json.dumps(statement.to_dict()))
    assert data["epsilon"] == pytest.approx(5.0) and data["formal"] is True
    assert data["scope"] == statement.scope and len(data["notes"]) == 3


def test_privacy_statement_without_guarantee_and_local_setting() -> None:
    none = PrivacyStatement.no_guarantee("one user's interactions", "recommendation lists",
                                         "randomisation has no formal DP analysis")
    assert str(none).startswith("No formal differential-privacy guarantee")
    assert none.to_dict()["epsilon"] is None and none.to_dict()["formal"] is False
    local = PrivacyStatement(20.0, 0.0, "basic composition (eps1/k per feature)",
                             "one user's feature vector", "once, before training", "local")
    assert str(local).startswith("20-local differential privacy")
    nonprivate = dipsgnn_composed_statement(0.0, 0.2, 1, DELTA, 10, 47)
    assert not nonprivate.formal


def test_a_statement_of_several_guarantees_leads_with_one_and_lists_them_all() -> None:
    features = PrivacyStatement(20.0, 0.0, "basic", "one user's features", "once", "local")
    run = PrivacyStatement(8.0, 1e-6, "rdp", "one edge", "whole run", notes=("gradients not privatised",))
    statement = PrivacyStatement.of_parts({"features": features, "run": run}, "run")
    assert (statement.epsilon, statement.delta, statement.notes) == (8.0, 1e-6, ("gradients not privatised",))
    assert statement.part("features") is features and statement.part("run") is run
    with pytest.raises(KeyError, match=r"'edges'.*\['features', 'run'\]"):
        statement.part("edges")
    with pytest.raises(ConfigError, match="headline"):
        PrivacyStatement.of_parts({"features": features}, "run")
    text = str(statement).splitlines()
    assert text[0] == "(8, 1e-06)-differential privacy"
    assert text[text.index("  part:       features") + 1] == "    20-local differential privacy"
    assert statement.sentence() == ("ε = 8, δ = 1e-06, differential privacy; by guarantee: "
                                    "features: ε = 20, local differential privacy: no meaningful guarantee at this ε; "
                                    "run: ε = 8, δ = 1e-06, differential privacy")
    data = json.loads(json.dumps(statement.to_dict()))
    assert data["epsilon"] == 8.0 and [p["name"] for p in data["parts"]] == ["features", "run"]
    assert data["parts"][0] == {"name": "features", **features.to_dict()}
    assert "parts" not in run.to_dict() and run.sentence() == "ε = 8, δ = 1e-06, differential privacy"


def test_statement_context_defaults_and_checks() -> None:
    context = StatementContext()
    assert (context.rounds, context.local_epochs, context.n_columns, dict(context.counts), context.delta) == (1, 5, 0, {}, 1e-5)
    counts = {"user": 3}
    given = StatementContext(counts=counts)
    counts["user"] = 4
    assert given.counts["user"] == 3  # a copy, read-only
    with pytest.raises(TypeError):
        given.counts["item"] = 1  # type: ignore[index]
    for bad in ({"rounds": 0}, {"local_epochs": 1.5}, {"n_columns": -1}, {"counts": {"item": -2}}, {"delta": 1.0}):
        with pytest.raises(ConfigError):
            StatementContext(**bad)


def test_accounting_without_dp_accounting_is_a_one_line_install_hint(monkeypatch) -> None:
    """dp-accounting is imported on first use (not with ``recprivacy.privacy``), and a missing
    install says how to get it."""
    from recprivacy.errors import RecPrivacyError

    monkeypatch.setitem(sys.modules, "dp_accounting", None)  # import now fails
    with pytest.raises(RecPrivacyError, match=r"^privacy accounting needs the optional package dp-accounting: pip"):
        gaussian_event(1.0)


def test_an_unconverged_rdp_order_is_left_out_without_a_warning_per_order(caplog):
    """At sampling rate 0.68 dp-accounting cannot converge the fractional orders' series and warns once per
    order; the orders are left out of the minimum (still an upper bound), and the warning is dropped."""
    import logging

    import dp_accounting

    from recprivacy.privacy.accounting import RDPAccountant

    event = dp_accounting.PoissonSampledDpEvent(0.678146, dp_accounting.GaussianDpEvent(3.079866))
    with caplog.at_level(logging.WARNING, logger="absl"):
        eps = RDPAccountant().compose(event, 40).get_epsilon(1e-6)
    assert math.isfinite(eps) and eps > 0
    assert not [r for r in caplog.records if "failed to converge" in r.getMessage()]
    whole = RDPAccountant(orders=[2.0, 4.0, 8.0, 16.0, 32.0, 64.0]).compose(event, 40).get_epsilon(1e-6)
    assert eps <= whole + 1e-9  # the orders left out only loosen the bound the others give
