"""Mechanisms: hand-computed constants (PM and OUE of paper 002's Algorithms 1-2), Monte-Carlo moments,
exact DP ratios."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from recprivacy.errors import ConfigError, DataError
from recprivacy.privacy import (
    GaussianMechanism,
    LaplaceMechanism,
    OptimizedUnaryEncoding,
    PiecewiseMechanism,
    RandomizedResponse,
    encode_features,
    multi_feature_budget,
    perturb_features,
)

N = 200_000
Z = 5.0  # tolerance in standard errors


def assert_moments(samples: np.ndarray, mean: float, var: float) -> None:
    """Sample mean and variance within Z standard errors of the theory.

    SE(mean) = sqrt(var/n); SE(variance) = sqrt((mu4 - var^2)/n), mu4 from the sample.
    """
    n = samples.size
    assert abs(samples.mean() - mean) <= Z * math.sqrt(var / n)
    mu4 = np.mean((samples - samples.mean()) ** 4)
    assert abs(samples.var() - var) <= Z * math.sqrt((mu4 - var**2) / n)


# --------------------------------------------------------------------------- Laplace / Gaussian


@pytest.mark.parametrize("x", [-3.0, 0.0, 0.7])
def test_laplace_moments(x: float) -> None:
    mech = LaplaceMechanism(epsilon=0.5, sensitivity=2.0)
    assert mech.scale == 4.0
    out = mech.perturb(np.full(N, x), np.random.default_rng(1))
    assert_moments(out, float(mech.mean(x)), float(mech.variance(x)))
    assert float(mech.variance(x)) == 2 * 4.0**2


def test_laplace_density_ratio_bounded_and_tight() -> None:
    mech = LaplaceMechanism(epsilon=0.8, sensitivity=1.5)
    y = np.linspace(-20, 20, 4001)
    ratio = mech.density(y, 0.0) / mech.density(y, 1.5)  # neighbours differ by the sensitivity
    assert ratio.max() <= math.exp(0.8) * (1 + 1e-12)
    assert ratio.max() == pytest.approx(math.exp(0.8))


def test_laplace_density_by_hand() -> None:
    """b = 2: the density is 1/(2b) = 0.25 at the input, e^-1 / 4 one scale away on either side,
    integrates to 1 and broadcasts outputs against inputs."""
    mech = LaplaceMechanism(epsilon=0.5, sensitivity=1.0)
    assert mech.density(1.0, 1.0) == 0.25
    assert mech.density(np.array([-1.0, 3.0]), 1.0) == pytest.approx([0.25 / math.e, 0.25 / math.e], rel=1e-15)
    y = np.linspace(-60, 60, 120_001)
    assert np.trapezoid(mech.density(y, 0.3), y) == pytest.approx(1.0, abs=1e-6)
    assert mech.density(y[:, None], np.array([0.0, 1.0])).shape == (len(y), 2)


def test_laplace_apm_noise_scale() -> None:
    """Paper 004: clip delta = 0.5 gives sensitivity 1, so lambda = 1/eps (1/40 = 0.025)."""
    mech = LaplaceMechanism(epsilon=40.0, sensitivity=2 * 0.5)
    assert mech.scale == pytest.approx(0.025)
    assert math.sqrt(mech.variance(0.0)) == pytest.approx(0.0353553, abs=1e-6)


def test_gaussian_moments() -> None:
    mech = GaussianMechanism(sigma=1.7)
    out = mech.perturb(np.full(N, 2.0), np.random.default_rng(2))
    assert_moments(out, 2.0, 1.7**2)


def test_gaussian_analytic_calibration_meets_balle_wang_condition() -> None:
    """Balle & Wang (2018) Thm 8: delta = Phi(D/2s - eps s/D) - e^eps Phi(-D/2s - eps s/D)."""
    eps, delta, sens = 2.0, 1e-6, 3.0
    mech = GaussianMechanism.calibrate(eps, delta, sens, method="analytic")
    s = mech.sigma
    achieved = stats.norm.cdf(sens / (2 * s) - eps * s / sens) - math.exp(eps) * stats.norm.cdf(
        -sens / (2 * s) - eps * s / sens
    )
    assert achieved == pytest.approx(delta, rel=1e-6)
    assert mech.epsilon_at(delta) == pytest.approx(eps, rel=1e-6)
    assert (mech.epsilon, mech.delta) == (eps, delta)
    assert "Balle" in mech.calibration


def test_gaussian_classical_calibration() -> None:
    mech = GaussianMechanism.calibrate(0.5, 1e-5, 2.0, method="classical")
    assert mech.sigma == pytest.approx(2.0 * math.sqrt(2 * math.log(1.25e5)) / 0.5)
    # the analytic mechanism needs less noise for the same guarantee
    assert GaussianMechanism.calibrate(0.5, 1e-5, 2.0).sigma < mech.sigma
    with pytest.raises(ConfigError, match="epsilon < 1"):
        GaussianMechanism.calibrate(1.0, 1e-5, method="classical")


# --------------------------------------------------------------------------- Piecewise


@pytest.mark.parametrize(
    "eps, bound, p_in",
    [
        (20 / 3, 1.073987, 0.965555),
        (10 / 3, 1.465713, 0.841131),
        (2.5, 1.803102, 0.777300),
        (5.0, 1.178851, 0.924142),
        (10.0, 1.013567, None),
    ],
)
def test_pm_constants_match_hand_computed_values(eps: float, bound: float, p_in: float | None) -> None:
    pm = PiecewiseMechanism(eps)
    assert pm.bound == pytest.approx(bound, abs=1e-6)
    if p_in is not None:
        assert pm.inner_probability == pytest.approx(p_in, abs=1e-6)


def test_pm_interval_and_densities() -> None:
    pm = PiecewiseMechanism(10 / 3)
    c = pm.bound
    left, right = pm.interval(np.array([-1.0, 0.3, 1.0]))
    assert left[0] == pytest.approx(-c) and right[2] == pytest.approx(c)
    np.testing.assert_allclose(right - left, c - 1)
    assert pm.inner_density == pytest.approx(1.806114, abs=1e-6)
    assert pm.outer_density == pytest.approx(0.064431, abs=1e-6)
    assert pm.inner_density / pm.outer_density == pytest.approx(math.exp(10 / 3))
    # each conditional density integrates to one
    y = np.linspace(-c, c, 400_001)
    for t in (-1.0, -0.2, 0.9):
        assert np.trapezoid(pm.density(y, t), y) == pytest.approx(1.0, abs=1e-4)


@pytest.mark.parametrize("eps", [0.5, 10 / 3, 8.0])
@pytest.mark.parametrize("t", [-1.0, 0.0, 0.45, 1.0])
def test_pm_unbiased_with_known_variance(eps: float, t: float) -> None:
    pm = PiecewiseMechanism(eps)
    out = pm.perturb(np.full(N, t), np.random.default_rng(3))
    assert np.all(np.abs(out) <= pm.bound)
    assert_moments(out, t, float(pm.variance(t)))


def test_pm_variance_reference_value() -> None:
    assert float(PiecewiseMechanism(10 / 3).variance(0.0)) == pytest.approx(0.149915, abs=1e-6)


def test_pm_density_ratio_never_exceeds_e_eps() -> None:
    """Analytic check: sup over outputs and input pairs of f(y|t)/f(y|t') = e^eps exactly."""
    eps = 1.3
    pm = PiecewiseMechanism(eps)
    y = np.linspace(-pm.bound, pm.bound, 2001)
    ts = np.linspace(-1, 1, 41)
    dens = np.stack([pm.density(y, t) for t in ts])
    ratios = dens[:, None, :] / dens[None, :, :]
    assert ratios.max() <= math.exp(eps) * (1 + 1e-12)
    assert ratios.max() == pytest.approx(math.exp(eps))


def test_pm_histogram_matches_density_and_respects_e_eps() -> None:
    eps = 2.0
    pm = PiecewiseMechanism(eps)
    rng = np.random.default_rng(4)
    edges = np.linspace(-pm.bound, pm.bound, 41)
    counts = {}
    for t in (-1.0, 1.0):
        counts[t], _ = np.histogram(pm.perturb(np.full(N, t), rng), bins=edges)
        fine = np.linspace(edges[:-1], edges[1:], 2001)  # (2001, bins)
        expected = N * np.trapezoid(pm.density(fine, t), fine, axis=0)
        assert np.all(np.abs(counts[t] - expected) <= Z * np.sqrt(expected) + 1)
    a, b = counts[-1.0].astype(float), counts[1.0].astype(float)
    log_ratio = np.abs(np.log(a / b))
    se = np.sqrt(1 / a + 1 / b)
    assert np.all(log_ratio <= eps + Z * se)
    assert np.any(log_ratio >= eps - Z * se)  # the bound is attained


def test_pm_rejects_bad_input() -> None:
    with pytest.raises(ConfigError, match="epsilon"):
        PiecewiseMechanism(0.0)
    with pytest.raises(ConfigError, match="epsilon"):
        PiecewiseMechanism(math.inf)
    with pytest.raises(DataError, match=r"\[-1, 1\]"):
        PiecewiseMechanism(1.0).perturb(np.array([0.5, 1.2]), np.random.default_rng(0))
    with pytest.raises(ConfigError, match="sensitivity"):
        LaplaceMechanism(1.0, sensitivity=-1.0)


def test_pm_same_seed_same_numbers_and_input_untouched() -> None:
    x = np.linspace(-1, 1, 11)
    before = x.copy()
    a = PiecewiseMechanism(1.0).perturb(x, np.random.default_rng(9))
    b = PiecewiseMechanism(1.0).perturb(x, np.random.default_rng(9))
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(x, before)


# --------------------------------------------------------------------------- OUE / RR


@pytest.mark.parametrize("eps, q", [(20 / 3, 0.00127102), (5.0, 0.00669285), (10.0, 4.53979e-05)])
def test_oue_probabilities_match_hand_computed_values(eps: float, q: float) -> None:
    oue = OptimizedUnaryEncoding(eps, 4)
    assert oue.p == 0.5
    assert oue.q == pytest.approx(q, rel=1e-5)
    assert (oue.p / oue.q) * (1 - oue.q) / (1 - oue.p) == pytest.approx(math.exp(eps))


def test_oue_exact_ldp_ratio_over_all_reports() -> None:
    eps, k = 1.7, 5
    oue = OptimizedUnaryEncoding(eps, k)
    reports = np.array(list(itertools.product([0, 1], repeat=k)), dtype=np.uint8)
    probs = np.stack([oue.probability(reports, np.int64(x)) for x in range(k)])  # (k, 2^k)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)
    ratio = probs[:, None, :] / probs[None, :, :]
    assert ratio.max() <= math.exp(eps) * (1 + 1e-12)
    assert ratio.max() == pytest.approx(math.exp(eps))


def test_oue_bit_moments_and_unbiased_frequencies() -> None:
    oue = OptimizedUnaryEncoding(1.0, 4)
    freqs = np.array([0.1, 0.2, 0.3, 0.4])
    x = np.repeat(np.arange(4), (freqs * N).astype(int))
    reports = oue.perturb(x, np.random.default_rng(5))
    assert reports.shape == (N, 4) and set(np.unique(reports)) <= {0, 1}
    for c in range(4):
        bits = reports[x == c].astype(float)
        for j in range(4):
            assert_moments(bits[:, j], oue.mean(np.int64(c))[j], oue.variance(np.int64(c))[j])
    np.testing.assert_allclose(reports.mean(axis=0), oue.expected_frequencies(freqs),
                               atol=Z * math.sqrt(0.25 / N))
    est = oue.estimate_frequencies(reports)
    assert np.all(np.abs(est - freqs) <= Z * np.sqrt(oue.frequency_variance(freqs, N)))


@pytest.mark.parametrize("mech", [OptimizedUnaryEncoding(1.5, 3), RandomizedResponse(1.5, 3)])
def test_frequency_estimator_variance_formula(mech) -> None:
    """Empirical variance of the estimate over 2000 surveys of 300 users matches the formula."""
    reps, n = 2000, 300
    freqs = np.array([0.5, 0.3, 0.2])
    x = np.repeat(np.arange(3), (freqs * n).astype(int))
    rng = np.random.default_rng(6)
    est = np.stack([mech.estimate_frequencies(mech.perturb(x, rng)) for _ in range(reps)])
    theory = mech.frequency_variance(freqs, n)
    # relative standard error of a sample variance is about sqrt(2 / reps)
    np.testing.assert_allclose(est.var(axis=0, ddof=1), theory, rtol=Z * math.sqrt(2 / reps))
    np.testing.assert_allclose(est.mean(axis=0), freqs, atol=Z * np.sqrt(theory / reps).max())


def test_rr_transition_matrix_exact_ratio() -> None:
    eps, k = 2.2, 6
    rr = RandomizedResponse(eps, k)
    m = rr.transition_matrix()
    np.testing.assert_allclose(m.sum(axis=1), 1.0)
    assert rr.p == pytest.approx(math.exp(eps) / (math.exp(eps) + k - 1))
    ratio = m[:, None, :] / m[None, :, :]
    assert ratio.max() == pytest.approx(math.exp(eps))


def test_rr_empirical_transitions_and_estimator() -> None:
    rr = RandomizedResponse(1.0, 4)
    x = np.repeat(np.arange(4), N // 4)
    y = rr.perturb(x, np.random.default_rng(7))
    m = rr.transition_matrix()
    for c in range(4):
        observed = np.bincount(y[x == c], minlength=4) / (N // 4)
        np.testing.assert_allclose(observed, m[c], atol=Z * math.sqrt(0.25 / (N // 4)))
    freqs = np.full(4, 0.25)
    est = rr.estimate_frequencies(y)
    assert np.all(np.abs(est - freqs) <= Z * np.sqrt(rr.frequency_variance(freqs, N)))


def test_categorical_input_validation() -> None:
    with pytest.raises(ConfigError, match="n_categories"):
        RandomizedResponse(1.0, 1)
    with pytest.raises(DataError, match=r"\[0, 3\)"):
        OptimizedUnaryEncoding(1.0, 3).perturb(np.array([0, 3]), np.random.default_rng(0))
    with pytest.raises(DataError, match="integer"):
        RandomizedResponse(1.0, 3).perturb(np.array([0.5]), np.random.default_rng(0))


# --------------------------------------------------------------------------- multi-feature


@pytest.mark.parametrize(
    "eps, n, k", [(20, 3, 3), (20, 6, 6), (10, 6, 4), (2, 6, 1), (30, 2, 2), (math.inf, 5, 5)]
)
def test_multi_feature_budget(eps: float, n: int, k: int) -> None:
    budget = multi_feature_budget(eps, n)
    assert budget.k == k
    if math.isfinite(eps):
        assert budget.k * budget.epsilon_per_feature == pytest.approx(eps)
    with pytest.raises(ConfigError):
        multi_feature_budget(-1.0, n)


def test_encode_features_scaling_and_one_hot() -> None:
    table = pd.DataFrame({"age": [0.0, 5.0, 10.0], "stars": [1.0, 3.0, 30.0],
                          "job": ["b", "a", "b"]})
    enc = encode_features(table, ["age", "stars"], ["job"], bounds={"stars": (1.0, 5.0)})
    assert list(enc.columns) == ["age", "stars", "job=a", "job=b"]
    np.testing.assert_allclose(enc["age"], [-1.0, 0.0, 1.0])
    np.testing.assert_allclose(enc["stars"], [-1.0, 0.0, 1.0])  # 30 clipped to the public bound
    np.testing.assert_array_equal(enc[["job=a", "job=b"]].to_numpy(), [[0, 1], [1, 0], [0, 1]])


def test_perturb_features_masks_rescales_and_samples_uniformly() -> None:
    """eps1 = 10, n = 6 numerical features: k = 4, eps 2.5 each, scale 1.5, 2 zero slots."""
    n_users = 20_000
    rng = np.random.default_rng(8)
    table = pd.DataFrame({f"x{i}": rng.uniform(0, 1, n_users) for i in range(6)})
    bounds = {c: (-1.0, 1.0) for c in table.columns}
    before = table.copy()
    out = perturb_features(table, list(table.columns), [], 10.0, np.random.default_rng(9), bounds)
    pd.testing.assert_frame_equal(table, before)
    values = out.to_numpy()
    assert np.all((values == 0).sum(axis=1) == 2)
    assert np.abs(values).max() <= 1.5 * PiecewiseMechanism(2.5).bound
    picked = (values != 0).mean(axis=0)  # each feature chosen with probability k/n = 2/3
    assert np.all(np.abs(picked - 2 / 3) <= Z * math.sqrt(2 / 9 / n_users))
    # unbiased per feature: (k/n) * (n/k) * E[PM(x)] = x
    pm = PiecewiseMechanism(2.5)
    err = values.mean(axis=0) - table.to_numpy().mean(axis=0)
    second_moment = (2 / 3) * 1.5**2 * (pm.variance(1.0) + 1.0)  # upper bound of E[out^2]
    assert np.all(np.abs(err) <= Z * math.sqrt(second_moment / n_users))


def test_perturb_features_categorical_blocks_are_oue_bits_or_zero() -> None:
    rng = np.random.default_rng(10)
    n_users = 5000
    table = pd.DataFrame({"age": rng.uniform(18, 60, n_users),
                          "gender": rng.choice(["F", "M"], n_users),
                          "job": rng.choice(list("abcd"), n_users)})
    out = perturb_features(table, ["age"], ["gender", "job"], 5.0, np.random.default_rng(11))
    # n = 3, k = 2: one of the three features is all-zero for every user
    assert out.shape == (n_users, 1 + 2 + 4)
    blocks = [out[["age"]], out[["gender=F", "gender=M"]], out[[f"job={c}" for c in "abcd"]]]
    zero = np.stack([(b.to_numpy() == 0).all(axis=1) for b in blocks], axis=1)
    assert np.all(zero.sum(axis=1) >= 1)
    bits = out.iloc[:, 1:].to_numpy()
    assert set(np.unique(bits)) <= {0.0, 1.0}  # OUE bits, not rescaled
    assert np.abs(out["age"]).max() <= 1.5 * PiecewiseMechanism(2.5).bound


def test_perturb_features_infinite_budget_is_clean_encoding_and_seeded() -> None:
    table = pd.DataFrame({"a": [1.0, 2.0, 4.0], "g": ["x", "y", "x"]})
    clean = perturb_features(table, ["a"], ["g"], math.inf, np.random.default_rng(0))
    pd.testing.assert_frame_equal(clean, encode_features(table, ["a"], ["g"]))
    one = perturb_features(table, ["a"], ["g"], 3.0, np.random.default_rng(5))
    two = perturb_features(table, ["a"], ["g"], 3.0, np.random.default_rng(5))
    pd.testing.assert_frame_equal(one, two)


def test_perturb_features_rejects_bad_tables() -> None:
    rng = np.random.default_rng(0)
    table = pd.DataFrame({"a": [1.0, np.nan], "g": ["x", None]})
    with pytest.raises(DataError, match="'a'.*missing"):
        perturb_features(table, ["a"], [], 5.0, rng)
    with pytest.raises(DataError, match="'g'.*missing"):
        perturb_features(table, [], ["g"], 5.0, rng)
    with pytest.raises(DataError, match="not in the table"):
        perturb_features(table, ["zzz"], [], 5.0, rng)
    ok = pd.DataFrame({"g": ["x", "q"]})
    with pytest.raises(DataError, match="declared"):
        perturb_features(ok, [], ["g"], 5.0, rng, categories={"g": ["x", "y"]})
