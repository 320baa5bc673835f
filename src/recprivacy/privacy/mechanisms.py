"""Randomisation mechanisms: each a small frozen dataclass with ``perturb`` and its theory.

* ``LaplaceMechanism`` -- ``x + Lap(sensitivity / epsilon)``, epsilon-DP for L1 sensitivity
  (Dwork et al. 2006); used per scalar by APM and FedNews (paper 004, Eq. 12).
* ``GaussianMechanism`` -- ``x + N(0, sigma^2)``; ``calibrate`` picks sigma analytically
  (Balle & Wang 2018) or classically (Dwork & Roth 2014, Thm. A.1; eps < 1 only).
* ``PiecewiseMechanism`` -- Wang et al. (ICDE 2019), DIPSGNN Algorithm 1: one value in
  [-1, 1] to an unbiased value in [-C, C], ``C = (e^{eps/2} + 1) / (e^{eps/2} - 1)``.
* ``OptimizedUnaryEncoding`` -- Wang et al. (USENIX Security 2017), DIPSGNN Algorithm 2:
  one-hot bits kept as 1 with p = 1/2, flipped on with q = 1/(e^eps + 1).
* ``RandomizedResponse`` -- k-ary (generalised) randomized response: keep the category with
  p = e^eps / (e^eps + k - 1), otherwise report one of the other k - 1 uniformly.
* ``multi_feature_budget`` / ``perturb_features`` -- DIPSGNN Algorithm 3 (after Wang et al.
  2019): ``k = max(1, min(n, floor(eps / 2.5)))`` features sampled per user, each with eps/k;
  numerical features through PM and rescaled by n/k, categorical ones through OUE; the n - k
  features not sampled are zero (the paper's choice; the released
  code leaves them unperturbed, which breaks the LDP proof).

Categorical mechanisms share the frequency oracle of Wang et al. (2017): the fraction of
reports supporting category i has mean ``f_i p + (1 - f_i) q``; ``(observed - q) / (p - q)``
is unbiased with variance ``(f p (1-p) + (1-f) q (1-q)) / (n (p - q)^2)``.

Inputs are never modified; every draw comes from the caller's ``numpy.random.Generator``.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from recprivacy.errors import DataError
from recprivacy.privacy.accounting import (
    GaussianCalibration,
    PrivacyStatement,
    check_count,
    check_positive,
    gaussian_epsilon,
    gaussian_sigma,
)

if TYPE_CHECKING:  # perturb_features' tables; the mechanisms themselves need NumPy only
    import pandas as pd

PM_BUDGET_PER_FEATURE = 2.5  # Wang et al. 2019, Eq. (DIPSGNN Eq. 3): k = floor(eps / 2.5)


def _as_float(values: np.ndarray | Sequence[float], owner: str) -> np.ndarray:
    """A new float64 array of ``values``; raises ``DataError`` on NaN."""
    arr = np.array(values, dtype=np.float64)
    if np.isnan(arr).any():
        raise DataError(f"{owner}: input values contain NaN")
    return arr


# --------------------------------------------------------------------------- numeric


@dataclass(frozen=True)
class LaplaceMechanism:
    """``x + Lap(0, b)`` with ``b = sensitivity / epsilon``: epsilon-DP for L1 ``sensitivity``."""

    epsilon: float
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        check_positive("LaplaceMechanism.epsilon", self.epsilon)
        check_positive("LaplaceMechanism.sensitivity", self.sensitivity)

    @property
    def scale(self) -> float:
        """Laplace scale b (the paper-004 noise factor lambda)."""
        return self.sensitivity / self.epsilon

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Add i.i.d. Laplace(0, b) noise to every entry."""
        x = _as_float(values, "LaplaceMechanism")
        return x + rng.laplace(0.0, self.scale, size=x.shape)

    def mean(self, values: np.ndarray) -> np.ndarray:
        """E[output | x] = x."""
        return _as_float(values, "LaplaceMechanism")

    def variance(self, values: np.ndarray) -> np.ndarray:
        """Var[output | x] = 2 b^2."""
        return np.full(np.shape(values), 2.0 * self.scale**2)

    def density(self, outputs: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Output density ``exp(-|y - x| / b) / (2 b)`` at outputs ``y`` given inputs ``x``
        (broadcast; SciPy's, imported here: a device perturbing uploads needs no statistics)."""
        from scipy import stats

        return stats.laplace.pdf(outputs, loc=values, scale=self.scale)


@dataclass(frozen=True)
class GaussianMechanism:
    """``x + N(0, sigma^2)``. ``epsilon``/``delta`` are set when built by ``calibrate``.

    ``sigma = 0`` is allowed and means no noise (no guarantee).
    """

    sigma: float
    sensitivity: float = 1.0
    epsilon: float | None = None
    delta: float | None = None
    calibration: str = "explicit sigma"

    def __post_init__(self) -> None:
        if self.sigma != 0:
            check_positive("GaussianMechanism.sigma", self.sigma)
        check_positive("GaussianMechanism.sensitivity", self.sensitivity)

    @classmethod
    def calibrate(
        cls,
        epsilon: float,
        delta: float,
        sensitivity: float = 1.0,
        method: GaussianCalibration = "analytic",
    ) -> GaussianMechanism:
        """The (epsilon, delta)-DP Gaussian mechanism for L2 ``sensitivity``.

        ``"analytic"`` (default): Balle & Wang 2018, the smallest valid sigma, any epsilon.
        ``"classical"``: ``sensitivity * sqrt(2 ln(1.25/delta)) / epsilon``, epsilon < 1 only.
        """
        sigma = gaussian_sigma(epsilon, delta, sensitivity, method)
        label = {"analytic": "analytic Gaussian (Balle & Wang 2018)",
                 "classical": "classical Gaussian (Dwork & Roth 2014, Thm. A.1)"}[method]
        return cls(sigma, sensitivity, float(epsilon), float(delta), label)

    def epsilon_at(self, delta: float) -> float:
        """Exact epsilon of one release at ``delta`` (analytic Gaussian); inf when sigma = 0."""
        if self.sigma == 0:
            return math.inf
        return gaussian_epsilon(self.sigma, delta, self.sensitivity)

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Add i.i.d. N(0, sigma^2) noise to every entry."""
        x = _as_float(values, "GaussianMechanism")
        return x + rng.normal(0.0, self.sigma, size=x.shape)

    def mean(self, values: np.ndarray) -> np.ndarray:
        """E[output | x] = x."""
        return _as_float(values, "GaussianMechanism")

    def variance(self, values: np.ndarray) -> np.ndarray:
        """Var[output | x] = sigma^2."""
        return np.full(np.shape(values), self.sigma**2)


@dataclass(frozen=True)
class PiecewiseMechanism:
    """Piecewise Mechanism (Wang et al. 2019; DIPSGNN Algorithm 1) for values in [-1, 1].

    ``l(t) = (C+1)/2 t - (C-1)/2``, ``r(t) = l(t) + C - 1``. With probability
    ``e^{eps/2} / (e^{eps/2} + 1)`` the output is uniform on [l, r], otherwise uniform on
    ``[-C, l) U (r, C]``. Output density is ``(e^eps - e^{eps/2}) / (2 e^{eps/2} + 2)`` inside
    [l, r] and ``e^{-eps}`` times that outside, hence epsilon-LDP. Unbiased, with
    ``Var = t^2 / (e^{eps/2} - 1) + (e^{eps/2} + 3) / (3 (e^{eps/2} - 1)^2)``.
    """

    epsilon: float

    def __post_init__(self) -> None:
        check_positive("PiecewiseMechanism.epsilon", self.epsilon)

    @property
    def bound(self) -> float:
        """C: outputs lie in [-C, C]."""
        return 1.0 + 2.0 / math.expm1(self.epsilon / 2.0)

    @property
    def inner_probability(self) -> float:
        """Probability that the output falls in [l(t), r(t)]."""
        return 1.0 / (1.0 + math.exp(-self.epsilon / 2.0))

    @property
    def inner_density(self) -> float:
        """Output density on [l(t), r(t)]."""
        return self.inner_probability / (self.bound - 1.0)

    @property
    def outer_density(self) -> float:
        """Output density on [-C, l(t)) U (r(t), C] (= inner density / e^eps)."""
        return (1.0 - self.inner_probability) / (self.bound + 1.0)

    def _inputs(self, values: np.ndarray) -> np.ndarray:
        """Validated copy of the inputs: floats in [-1, 1]."""
        t = _as_float(values, "PiecewiseMechanism")
        if t.size and (t.min() < -1.0 or t.max() > 1.0):
            raise DataError(
                f"PiecewiseMechanism: inputs must lie in [-1, 1], got range "
                f"[{t.min():g}, {t.max():g}]; scale the feature first"
            )
        return t

    def interval(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(l(t), r(t)) for every input t."""
        t = self._inputs(values)
        c = self.bound
        left = (c + 1.0) / 2.0 * t - (c - 1.0) / 2.0
        return left, left + c - 1.0

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One PM report per entry (vectorised Algorithm 1)."""
        left, right = self.interval(values)
        c = self.bound
        inner = rng.random(left.shape) < self.inner_probability
        u = rng.random(left.shape)
        inside = left + u * (c - 1.0)
        # uniform over the union [-C, l) U (r, C]: a point on a segment of total length C + 1
        s = u * (c + 1.0)
        left_length = left + c
        outside = np.where(s < left_length, s - c, right + (s - left_length))
        return np.where(inner, inside, outside)

    def mean(self, values: np.ndarray) -> np.ndarray:
        """E[output | t] = t (unbiased)."""
        return self._inputs(values)

    def variance(self, values: np.ndarray) -> np.ndarray:
        """Var[output | t] = t^2/(e^{eps/2}-1) + (e^{eps/2}+3)/(3 (e^{eps/2}-1)^2)."""
        t = self._inputs(values)
        a = math.expm1(self.epsilon / 2.0)
        return t**2 / a + (a + 4.0) / (3.0 * a**2)

    def density(self, outputs: np.ndarray, value: float) -> np.ndarray:
        """Output density at ``outputs`` for one input ``value`` (0 outside [-C, C])."""
        left, right = self.interval(np.asarray(value))
        y = np.asarray(outputs, dtype=np.float64)
        in_range = (y >= -self.bound) & (y <= self.bound)
        inner = (y >= left) & (y <= right)
        return np.where(inner, self.inner_density, np.where(in_range, self.outer_density, 0.0))


# --------------------------------------------------------------------------- categorical


@dataclass(frozen=True)
class _FrequencyOracle(abc.ABC):
    """Shared frequency estimation of the categorical mechanisms (Wang et al. 2017, Sec. 4).

    Subclasses define ``p`` (a report supports the user's own category) and ``q`` (it supports
    a given other category).
    """

    epsilon: float
    n_categories: int

    def __post_init__(self) -> None:
        check_positive(f"{type(self).__name__}.epsilon", self.epsilon)
        check_count(f"{type(self).__name__}.n_categories", self.n_categories, minimum=2)

    @property
    @abc.abstractmethod
    def p(self) -> float:
        """Probability that a report supports the user's own category."""

    @property
    @abc.abstractmethod
    def q(self) -> float:
        """Probability that a report supports one given other category."""

    def _categories(self, values: np.ndarray) -> np.ndarray:
        """Validated copy of category indices in [0, n_categories)."""
        x = np.array(values)
        if x.dtype.kind not in "iu":
            raise DataError(f"{type(self).__name__}: inputs must be integer category indices, "
                            f"got dtype {x.dtype}")
        if x.size and (x.min() < 0 or x.max() >= self.n_categories):
            raise DataError(f"{type(self).__name__}: category indices must lie in "
                            f"[0, {self.n_categories}), got range [{x.min()}, {x.max()}]")
        return x.astype(np.int64)

    def expected_frequencies(self, frequencies: np.ndarray) -> np.ndarray:
        """Expected fraction of reports supporting each category: ``f p + (1 - f) q``."""
        f = np.asarray(frequencies, dtype=np.float64)
        return f * self.p + (1.0 - f) * self.q

    def _debias(self, supported_fraction: np.ndarray) -> np.ndarray:
        """Unbiased frequency estimate ``(observed - q) / (p - q)``."""
        return (supported_fraction - self.q) / (self.p - self.q)

    def frequency_variance(self, frequencies: np.ndarray, n_reports: int) -> np.ndarray:
        """Variance of the unbiased estimate: ``(f p(1-p) + (1-f) q(1-q)) / (n (p-q)^2)``."""
        f = np.asarray(frequencies, dtype=np.float64)
        p, q = self.p, self.q
        return (f * p * (1 - p) + (1 - f) * q * (1 - q)) / (n_reports * (p - q) ** 2)


@dataclass(frozen=True)
class OptimizedUnaryEncoding(_FrequencyOracle):
    """OUE (Wang et al. 2017; DIPSGNN Algorithm 2): one-hot encode, then per bit independently
    P[1 | bit = 1] = p = 1/2 and P[1 | bit = 0] = q = 1/(e^eps + 1). epsilon-LDP since the
    worst likelihood ratio is ``(p/q) ((1-q)/(1-p)) = e^eps``.
    """

    @property
    def p(self) -> float:
        return 0.5

    @property
    def q(self) -> float:
        return 1.0 / (math.exp(self.epsilon) + 1.0)

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Reports as a uint8 bit matrix of shape ``values.shape + (n_categories,)``."""
        x = self._categories(values)
        one_hot = x[..., None] == np.arange(self.n_categories)
        keep = np.where(one_hot, self.p, self.q)
        return (rng.random(keep.shape) < keep).astype(np.uint8)

    def probability(self, reports: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Exact P[report | category] (product over bits), broadcast over leading axes."""
        bits = np.asarray(reports, dtype=bool)
        one_hot = self._categories(values)[..., None] == np.arange(self.n_categories)
        on = np.where(one_hot, self.p, self.q)
        return np.prod(np.where(bits, on, 1.0 - on), axis=-1)

    def mean(self, values: np.ndarray) -> np.ndarray:
        """E[report bits | category]: p at the category, q elsewhere."""
        one_hot = self._categories(values)[..., None] == np.arange(self.n_categories)
        return np.where(one_hot, self.p, self.q)

    def variance(self, values: np.ndarray) -> np.ndarray:
        """Var[report bits | category] (Bernoulli)."""
        m = self.mean(values)
        return m * (1.0 - m)

    def estimate_frequencies(self, reports: np.ndarray) -> np.ndarray:
        """Unbiased estimate of the category frequencies from an (n, k) bit matrix."""
        bits = np.asarray(reports, dtype=np.float64)
        if bits.ndim != 2 or bits.shape[1] != self.n_categories:
            raise DataError(f"OptimizedUnaryEncoding: reports must have shape "
                            f"(n, {self.n_categories}), got {bits.shape}")
        return self._debias(bits.mean(axis=0))


@dataclass(frozen=True)
class RandomizedResponse(_FrequencyOracle):
    """k-ary randomized response: keep the category with p = e^eps / (e^eps + k - 1), else
    report each other category with q = 1 / (e^eps + k - 1). epsilon-LDP since p / q = e^eps.
    """

    @property
    def p(self) -> float:
        return 1.0 / (1.0 + (self.n_categories - 1) * math.exp(-self.epsilon))

    @property
    def q(self) -> float:
        return 1.0 / (math.exp(self.epsilon) + self.n_categories - 1)

    def perturb(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One reported category per input."""
        x = self._categories(values)
        keep = rng.random(x.shape) < self.p
        other = (x + rng.integers(1, self.n_categories, size=x.shape)) % self.n_categories
        return np.where(keep, x, other)

    def transition_matrix(self) -> np.ndarray:
        """``M[x, y] = P[report y | category x]``."""
        k = self.n_categories
        return np.full((k, k), self.q) + np.eye(k) * (self.p - self.q)

    def estimate_frequencies(self, reports: np.ndarray) -> np.ndarray:
        """Unbiased estimate of the category frequencies from reported categories."""
        y = self._categories(reports).ravel()
        observed = np.bincount(y, minlength=self.n_categories) / max(y.size, 1)
        return self._debias(observed)


# --------------------------------------------------------------------------- multi-feature


@dataclass(frozen=True)
class FeatureBudget:
    """DIPSGNN Eq. 3: ``k = max(1, min(n, floor(eps / 2.5)))`` features, eps/k each."""

    epsilon: float
    n_features: int
    k: int

    @property
    def epsilon_per_feature(self) -> float:
        """Budget of each sampled feature; k of them add up to ``epsilon``."""
        return self.epsilon / self.k

    def statement(self, columns: Sequence[str]) -> PrivacyStatement:
        """The local guarantee of ``perturb_features`` (DIPSGNN Theorem 4.1) for ``columns``."""
        unit = f"one user's feature vector ({', '.join(columns)})"
        scope = "randomised once on the user's side; every later use is post-processing"
        if math.isinf(self.epsilon):
            return PrivacyStatement.no_guarantee(unit, scope, "features are used unperturbed (eps1 = inf)")
        return PrivacyStatement(
            epsilon=self.epsilon,
            delta=0.0,
            accountant=(f"DIPSGNN Theorem 4.1: {self.k} of {self.n_features} features sampled, each "
                        f"{self.epsilon_per_feature:.4g}-LDP (PM / OUE), sequential composition"),
            unit=unit,
            scope=scope,
            setting="local",
        )


def multi_feature_budget(epsilon: float, n_features: int) -> FeatureBudget:
    """Number of features to perturb per user and their budget (Wang et al. 2019; DIPSGNN Eq. 3).

    ``epsilon = inf`` (no perturbation) keeps all n features.
    """
    n = check_count("n_features", n_features)
    if math.isinf(check_positive("epsilon", epsilon, allow_inf=True)):
        return FeatureBudget(math.inf, n, n)
    k = max(1, min(n, math.floor(epsilon / PM_BUDGET_PER_FEATURE)))
    return FeatureBudget(float(epsilon), n, k)


def perturb_features(
    table: pd.DataFrame,
    numeric_cols: Sequence[str],
    categorical_cols: Sequence[str],
    epsilon: float,
    rng: np.random.Generator,
    bounds: Mapping[str, tuple[float, float]] | None = None,
    categories: Mapping[str, Sequence] | None = None,
) -> pd.DataFrame:
    """epsilon-LDP user features by DIPSGNN Algorithm 3 (multi-dimensional PM), one row per user.

    Each user samples k = ``multi_feature_budget(epsilon, n).k`` distinct features uniformly;
    a sampled numerical feature becomes ``(n/k) * PM(x, eps/k)``, a sampled categorical one the
    OUE bits with eps/k (not rescaled); features not sampled are all zero. Same layout as
    ``data.features.encode_features``; ``epsilon = inf`` returns that clean encoding.
    """
    # imported here: ``data.features`` is the tabular layer (pandas), which the other
    # mechanisms, and so a federated device, never need
    from recprivacy.data.features import feature_frame, parse_features

    features = parse_features(table, numeric_cols, categorical_cols, bounds, categories)
    budget = multi_feature_budget(epsilon, len(features))
    if math.isinf(budget.epsilon):
        return feature_frame(features, [f.encode() for f in features], table.index)
    n_users, n = len(table), len(features)
    order = rng.random((n_users, n)).argsort(axis=1)
    selected = np.zeros((n_users, n), dtype=bool)
    np.put_along_axis(selected, order[:, : budget.k], True, axis=1)
    eps = budget.epsilon_per_feature
    blocks = []
    for j, feature in enumerate(features):
        rows = selected[:, j]
        block = np.zeros((n_users, len(feature.columns())))
        if feature.categories is None:
            pm = PiecewiseMechanism(eps)
            block[rows, 0] = pm.perturb(feature.values[rows], rng) * (n / budget.k)
        else:
            oue = OptimizedUnaryEncoding(eps, len(feature.categories))
            block[rows] = oue.perturb(feature.values[rows], rng)
        blocks.append(block)
    return feature_frame(features, blocks, table.index)
