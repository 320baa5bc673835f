"""Noise calibration, composition accounting and human-readable privacy statements.

What is here and where it comes from:

* ``dipsgnn_epsilon`` / ``dipsgnn_sigma`` -- Theorem 4.2 of DIPSGNN (paper 002, Hu & Fang):
  ``eps2 = T C^2 / (2 sigma^2) + C sqrt(2 T ln(1/delta)) / sigma`` and its closed-form inverse
  ``sigma = C sqrt(T) / (sqrt(2 (ln(1/delta) + eps2)) - sqrt(2 ln(1/delta)))``. This is the
  Gaussian mechanism's Renyi DP ``alpha C^2 / (2 sigma^2)`` composed over the T aggregation steps
  and converted with Mironov (2017, Prop. 3) at the best real order
  ``alpha* = 1 + sqrt(2 sigma^2 ln(1/delta) / (T C^2))``.
* ``gaussian_sigma`` / ``gaussian_epsilon`` -- one Gaussian release: the analytic calibration of
  Balle & Wang (ICML 2018) through dp-accounting, or the classical
  ``sigma = Delta sqrt(2 ln(1.25/delta)) / eps`` (Dwork & Roth 2014, Thm. A.1; only for eps < 1).
* Accountants kept apart from the mechanisms (as in Opacus): ``RDPAccountant`` and
  ``PLDAccountant`` wrap dp-accounting's maintained RDP and privacy-loss-distribution accountants;
  ``ZCDPAccountant`` adds up zero-concentrated-DP ``rho`` in closed form and converts with
  ``eps = rho + 2 sqrt(rho ln(1/delta))`` -- the very conversion inside Theorem 4.2, so that a
  composed DIPSGNN figure for one release equals the paper's nominal eps2.
* ``dipsgnn_composed_statement`` -- what a whole DIPSGNN training run spends per edge (the
  paper's ε2 covers one forward pass; docs/decisions.md, "DIPSGNN (paper 002)"):
  one edge is released ``prefix_reuse x epochs x T x (2 if A_out and A_in are both counted)``
  times, each release a Gaussian with noise multiplier ``sigma / C``.

dp-accounting is an optional dependency (``pip install 'recprivacy[privacy]'``); the closed forms
(Theorem 4.2, classical Gaussian, zCDP) work without it.
"""

from __future__ import annotations

import abc
import functools
import logging
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from types import MappingProxyType
from typing import Any, ClassVar, Literal

import numpy as np

from recprivacy.errors import ConfigError, RecPrivacyError

GaussianCalibration = Literal["analytic", "classical"]


def _dp() -> Any:
    """Return the dp_accounting module or explain in one line how to install it. Imported on
    first use: it pulls in scipy.signal and scipy.stats, which every process importing
    ``recprivacy.privacy`` (a Flower ClientApp per message, the CLI) would otherwise pay for."""
    try:
        import dp_accounting
    except ModuleNotFoundError:  # the optional ``privacy`` extra is not installed
        raise RecPrivacyError(
            "privacy accounting needs the optional package dp-accounting: "
            "pip install 'recprivacy[privacy]'"
        ) from None
    absl = logging.getLogger("absl")
    if _unconverged_order not in absl.filters:
        absl.addFilter(_unconverged_order)
    return dp_accounting


def _unconverged_order(record: logging.LogRecord) -> bool:
    """Drop dp-accounting's "failed to converge ... Excluding this order" warning: at large sampling
    rates its RDP series for a fractional order does not converge, and it leaves that order out of the
    minimum over orders, so the epsilon it returns is still an upper bound (a looser one). Printed
    once per order and per step of a noise calibration, it buried a run's progress lines."""
    return "failed to converge" not in str(record.msg)


def check_positive(name: str, value: float, allow_inf: bool = False) -> float:
    """Return ``value`` as float if it is > 0 (and finite unless ``allow_inf``).

    Raises ``ConfigError`` naming the parameter otherwise.
    """
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = math.nan
    if math.isnan(v) or v <= 0 or (math.isinf(v) and not allow_inf):
        kind = "a positive number" if allow_inf else "a finite positive number"
        raise ConfigError(f"{name} must be {kind}, got {value!r}")
    return v


def _valid_delta(delta: float) -> float:
    """Return ``delta`` as float if 0 < delta < 1; else ``ConfigError``."""
    try:
        d = float(delta)
    except (TypeError, ValueError):
        d = math.nan
    if not 0.0 < d < 1.0:
        raise ConfigError(f"delta must lie strictly between 0 and 1, got {delta!r}")
    return d


def check_count(name: str, value: int, minimum: int = 1) -> int:
    """Return ``value`` as int if it is an integer >= ``minimum``; else ``ConfigError``."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer)) or (
        int(value) != value or value < minimum
    ):
        raise ConfigError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_delta(delta: float, n_records: int) -> float:
    """Check the usual rule ``delta < 1 / n_records`` (DIPSGNN: fewer than 1/#edges).

    Returns ``delta``; raises ``ConfigError`` naming both numbers when the rule fails.
    """
    d = _valid_delta(delta)
    n = check_count("n_records", n_records)
    if d >= 1.0 / n:
        raise ConfigError(
            f"delta = {d:g} must be smaller than 1/n_records = {1.0 / n:g} ({n} records)"
        )
    return d


# --------------------------------------------------------------------------- single Gaussian


def gaussian_sigma(
    epsilon: float,
    delta: float,
    sensitivity: float = 1.0,
    method: GaussianCalibration = "analytic",
) -> float:
    """Noise std of a Gaussian mechanism that is (epsilon, delta)-DP for L2 ``sensitivity``.

    ``method="analytic"``: the smallest sigma (Balle & Wang 2018, Thm. 8), via dp-accounting.
    ``method="classical"``: ``sensitivity * sqrt(2 ln(1.25/delta)) / epsilon``, valid for eps < 1.
    """
    eps = check_positive("epsilon", epsilon)
    d = _valid_delta(delta)
    sens = check_positive("sensitivity", sensitivity)
    if method == "analytic":
        return sens * float(_dp().get_sigma_gaussian(eps, d))
    if method == "classical":
        if eps >= 1.0:
            raise ConfigError(
                f"the classical Gaussian calibration needs epsilon < 1, got {eps:g}; "
                "use method='analytic'"
            )
        return sens * math.sqrt(2.0 * math.log(1.25 / d)) / eps
    raise ConfigError(f"method must be 'analytic' or 'classical', got {method!r}")


def gaussian_epsilon(sigma: float, delta: float, sensitivity: float = 1.0) -> float:
    """Exact epsilon of one Gaussian release at ``delta`` (Balle & Wang 2018), via dp-accounting."""
    s = check_positive("sigma", sigma)
    d = _valid_delta(delta)
    sens = check_positive("sensitivity", sensitivity)
    return float(_dp().get_epsilon_gaussian(s / sens, d))


# --------------------------------------------------------------------------- DIPSGNN Thm 4.2


def dipsgnn_epsilon(sigma: float, delta: float, C: float, T: int) -> float:
    """Edge-level eps2 of one DIPSGNN forward pass (paper 002, Theorem 4.2).

    ``eps2 = T C^2 / (2 sigma^2) + C sqrt(2 T ln(1/delta)) / sigma``; ``sigma = 0`` gives inf.
    """
    d = _valid_delta(delta)
    c = check_positive("C", C)
    t = check_count("T", T)
    if float(sigma) == 0.0:
        return math.inf
    s = check_positive("sigma", sigma)
    return t * c**2 / (2.0 * s**2) + c * math.sqrt(2.0 * t * math.log(1.0 / d)) / s


def dipsgnn_sigma(epsilon: float, delta: float, C: float, T: int) -> float:
    """Noise std that makes one DIPSGNN forward pass edge-level (epsilon, delta)-DP.

    Closed-form inverse of Theorem 4.2 (paper 002): with ``L = ln(1/delta)``,
    ``sigma = C sqrt(T) / (sqrt(2 (L + epsilon)) - sqrt(2 L))``. ``epsilon = inf`` gives 0
    (the non-private mode).
    """
    eps = check_positive("epsilon", epsilon, allow_inf=True)
    d = _valid_delta(delta)
    c = check_positive("C", C)
    t = check_count("T", T)
    if math.isinf(eps):
        return 0.0
    big_l = math.log(1.0 / d)
    return c * math.sqrt(t) / (math.sqrt(2.0 * (big_l + eps)) - math.sqrt(2.0 * big_l))


# --------------------------------------------------------------------------- accountants


def gaussian_event(noise_multiplier: float) -> Any:
    """One Gaussian release with noise std = ``noise_multiplier`` x L2 sensitivity."""
    return _dp().GaussianDpEvent(check_positive("noise_multiplier", noise_multiplier))


def laplace_event(noise_multiplier: float) -> Any:
    """One Laplace release, scale = ``noise_multiplier`` x L1 sensitivity (eps = 1/multiplier)."""
    return _dp().LaplaceDpEvent(check_positive("noise_multiplier", noise_multiplier))


def poisson_sampled_event(event: Any, sampling_probability: float) -> Any:
    """``event`` applied to a Poisson subsample drawn with the given probability (DP-SGD step)."""
    q = float(sampling_probability)
    if not 0.0 < q <= 1.0:
        raise ConfigError(f"sampling_probability must lie in (0, 1], got {sampling_probability!r}")
    return _dp().PoissonSampledDpEvent(q, event)


class Accountant(abc.ABC):
    """A replaceable privacy accountant: compose events, then ask for epsilon at a delta."""

    name: ClassVar[str]
    description: ClassVar[str]

    @abc.abstractmethod
    def compose(self, event: Any, count: int = 1) -> Accountant:
        """Record ``count`` adaptive repetitions of the dp-accounting ``event``; return self."""

    @abc.abstractmethod
    def get_epsilon(self, delta: float) -> float:
        """Smallest epsilon this accountant certifies at ``delta`` for everything composed."""


class _DpAccountingAccountant(Accountant):
    """Delegates to one of dp-accounting's ``PrivacyAccountant`` implementations."""

    def __init__(self, impl: Any):
        self._impl = impl

    def compose(self, event: Any, count: int = 1) -> Accountant:
        if not self._impl.supports(event):
            raise ConfigError(f"{self.name} accountant cannot account for {event!r}")
        self._impl.compose(event, check_count("count", count))
        return self

    def get_epsilon(self, delta: float) -> float:
        return float(self._impl.get_epsilon(_valid_delta(delta)))


class RDPAccountant(_DpAccountingAccountant):
    """Renyi-DP accountant of dp-accounting (Mironov 2017; conversion of Balle et al. 2020)."""

    name = "rdp"
    description = "Renyi DP (dp-accounting RdpAccountant)"

    def __init__(self, orders: list[float] | None = None):
        super().__init__(_dp().rdp.RdpAccountant(orders))


class PLDAccountant(_DpAccountingAccountant):
    """Privacy-loss-distribution accountant of dp-accounting (tight, numerically discretised).

    Slow when the composed epsilon reaches the hundreds; a coarser
    ``value_discretization_interval`` such as 1e-2 is much faster at a cost in the fourth
    significant digit (measured: docs/decisions.md, "Accountant").
    """

    name = "pld"
    description = "privacy loss distribution (dp-accounting PLDAccountant)"

    def __init__(self, value_discretization_interval: float = 1e-4):
        interval = check_positive("value_discretization_interval", value_discretization_interval)
        super().__init__(_dp().pld.PLDAccountant(value_discretization_interval=interval))


class ZCDPAccountant(Accountant):
    """Closed-form zero-concentrated DP (Bun & Steinke 2016), the conversion of DIPSGNN Thm 4.2.

    Gaussian with noise multiplier m: ``rho = 1 / (2 m^2)`` (its RDP is ``alpha rho``);
    pure eps-DP (Laplace): ``rho = eps^2 / 2`` (Prop. 1.4). Rhos add under composition and
    ``eps = rho + 2 sqrt(rho ln(1/delta))`` (Prop. 1.3 = Mironov Prop. 3 at the best order).
    """

    name = "zcdp"
    description = "zCDP in closed form, eps = rho + 2 sqrt(rho ln(1/delta)) (as DIPSGNN Thm 4.2)"

    def __init__(self) -> None:
        self.rho = 0.0

    def compose(self, event: Any, count: int = 1) -> Accountant:
        self.rho += check_count("count", count) * self._event_rho(event)
        return self

    def get_epsilon(self, delta: float) -> float:
        big_l = math.log(1.0 / _valid_delta(delta))
        return self.rho + 2.0 * math.sqrt(self.rho * big_l)

    def _event_rho(self, event: Any) -> float:
        """zCDP rho of one dp-accounting event (Gaussian, Laplace, zCDP and their compositions)."""
        dp = _dp()
        if isinstance(event, dp.NoOpDpEvent):
            return 0.0
        if isinstance(event, dp.GaussianDpEvent):
            return 1.0 / (2.0 * event.noise_multiplier**2)
        if isinstance(event, dp.LaplaceDpEvent):
            return 0.5 / event.noise_multiplier**2
        if isinstance(event, dp.ZCDpEvent) and event.xi == 0:
            return float(event.rho)
        if isinstance(event, dp.SelfComposedDpEvent):
            return event.count * self._event_rho(event.event)
        if isinstance(event, dp.ComposedDpEvent):
            return sum(self._event_rho(e) for e in event.events)
        raise ConfigError(f"{self.name} accountant cannot account for {event!r}")


ACCOUNTANTS: dict[str, type[Accountant]] = {
    cls.name: cls for cls in (RDPAccountant, PLDAccountant, ZCDPAccountant)
}


def make_accountant(name: str) -> Accountant:
    """A fresh accountant by name: 'rdp', 'pld' or 'zcdp'."""
    if name not in ACCOUNTANTS:
        raise ConfigError(f"accountant must be one of {sorted(ACCOUNTANTS)}, got {name!r}")
    return ACCOUNTANTS[name]()


def compose_gaussian(
    sigma_over_sensitivity: float, count: int, delta: float, accountant: str = "rdp"
) -> float:
    """Epsilon at ``delta`` after ``count`` adaptive Gaussian releases of the given multiplier."""
    acct = make_accountant(accountant).compose(gaussian_event(sigma_over_sensitivity), count)
    return acct.get_epsilon(delta)


def compose_laplace(
    epsilon_each: float, count: int, delta: float, accountant: str = "pld"
) -> float:
    """Epsilon at ``delta`` after ``count`` adaptive eps_each-DP Laplace releases.

    Returns the smaller of the accountant's figure and basic composition ``count * eps_each``
    (both are valid bounds; basic composition wins for few releases).
    """
    eps = check_positive("epsilon_each", epsilon_each)
    n = check_count("count", count)
    acct = make_accountant(accountant).compose(laplace_event(1.0 / eps), n)
    return min(n * eps, acct.get_epsilon(delta))


def basic_composition(epsilons: list[float], counts: list[int] | None = None) -> float:
    """Pure-DP basic composition ``sum_i count_i * eps_i`` (e.g. APM per-parameter budgets)."""
    eps = [check_positive("epsilons[i]", e) for e in epsilons]
    reps = [1] * len(eps) if counts is None else [check_count("counts[i]", c) for c in counts]
    if len(reps) != len(eps):
        raise ConfigError(f"counts has {len(reps)} entries but epsilons has {len(eps)}")
    return float(sum(e * c for e, c in zip(eps, reps)))


def dpsgd_epsilon(
    noise_multiplier: float, sample_rate: float, steps: int, delta: float, accountant: str = "rdp"
) -> float:
    """Epsilon of DP-SGD (Abadi et al. 2016): ``steps`` Poisson-subsampled Gaussian releases."""
    event = poisson_sampled_event(gaussian_event(noise_multiplier), sample_rate)
    return make_accountant(accountant).compose(event, steps).get_epsilon(delta)


def dpsgd_noise_multiplier(
    epsilon: float, delta: float, sample_rate: float, steps: int, accountant: str = "rdp"
) -> float:
    """Smallest DP-SGD noise multiplier whose ``dpsgd_epsilon`` is at most ``epsilon``.

    Brent search of dp-accounting's ``calibrate_dp_mechanism``, which guarantees the returned
    multiplier does not exceed the target epsilon. The search is a pure function of its
    arguments and takes seconds, so its results are cached (per process) by their values.
    """
    if accountant not in ("rdp", "pld"):
        raise ConfigError(f"accountant must be 'rdp' or 'pld' here, got {accountant!r}")
    eps = check_positive("epsilon", epsilon)
    d = _valid_delta(delta)
    n = check_count("steps", steps)
    poisson_sampled_event(_dp().NoOpDpEvent(), sample_rate)  # validates sample_rate
    return _calibrated_noise_multiplier(float(eps), float(d), float(sample_rate), int(n), accountant)


@functools.lru_cache(maxsize=256)
def _calibrated_noise_multiplier(epsilon: float, delta: float, sample_rate: float, steps: int, accountant: str) -> float:
    """``dpsgd_noise_multiplier`` on validated, normalised arguments (cached)."""
    dp = _dp()

    def make_event(multiplier: float) -> Any:
        step = dp.PoissonSampledDpEvent(sample_rate, dp.GaussianDpEvent(multiplier))
        return dp.SelfComposedDpEvent(step, steps)

    def make_fresh() -> Any:
        return dp.rdp.RdpAccountant() if accountant == "rdp" else dp.pld.PLDAccountant()

    return float(dp.calibrate_dp_mechanism(make_fresh, make_event, epsilon, delta))


# --------------------------------------------------------------------------- statements


#: the largest ε read as a meaningful guarantee in ``PrivacyStatement.sentence`` (e^10 ≈ 22,000)
MEANINGFUL_EPSILON = 10.0


def _mantissa(x: float) -> tuple[float, int]:
    """``(m, e)`` with ``x = m × 10^e`` and ``1 <= m < 10``."""
    e = int(math.floor(math.log10(x)))
    return x / 10**e, e


@dataclass(frozen=True)
class StatementContext:
    """What a defence's claim may depend on beyond the defence itself: how it was deployed.

    Every defence states its claim as ``privacy_statement(context: StatementContext | None =
    None) -> PrivacyStatement`` (docs/architecture.md, "The three kinds of defence"); ``None``
    means these defaults. A training-time engine or a transform reads none of it (its fitted
    state fixes the claim); the federated perturbers compose over it:

    * ``rounds`` (1): federated rounds a user takes part in;
    * ``local_epochs`` (5): local epochs per round (paper 004's setting);
    * ``n_columns`` (0): width of the user feature vector ``x_u``; 0 when not given (the
      feature randomiser then counts only the columns its attribute blocks name, and says so);
    * ``counts`` (empty): uploaded scalars per model component (``{"user": 64, ...}``); empty
      when not given (an upload defence then states its per-scalar claim);
    * ``delta`` (1e-5): the δ at which a Gaussian composition is converted to ε.
    """

    rounds: int = 1
    local_epochs: int = 5
    n_columns: int = 0
    counts: Mapping[str, int] = field(default_factory=dict)
    delta: float = 1e-5

    def __post_init__(self) -> None:
        check_count("StatementContext.rounds", self.rounds)
        check_count("StatementContext.local_epochs", self.local_epochs)
        check_count("StatementContext.n_columns", self.n_columns, minimum=0)
        for component, n in self.counts.items():
            check_count(f"StatementContext.counts[{component!r}]", n, minimum=0)
        _valid_delta(self.delta)
        object.__setattr__(self, "counts", MappingProxyType(dict(self.counts)))


@dataclass(frozen=True)
class PrivacyStatement:
    """A privacy claim stated with everything a reviewer needs to judge it.

    ``epsilon = inf`` means *no formal guarantee*; ``setting`` is ``"central"`` (a trusted
    curator adds the noise), ``"local"`` (each user randomises before anything leaves them) or
    ``"joint"`` (central for the shared parameters and what other users are served; what a user is
    served from their own un-noised rows is not covered for that user);
    ``noise`` says where the randomness came from (``NoiseSource.describe``: secure, or a
    seeded simulation that protects nobody), empty when the defence has not said.

    A defence with several guarantees (DIPSGNN's user features, edges per forward pass and
    edges over the whole run) gives one statement: its fields are the headline guarantee and
    ``parts`` names every guarantee, the headline among them (``of_parts``, ``part``).
    """

    epsilon: float
    delta: float
    accountant: str
    unit: str
    scope: str
    setting: Literal["central", "local", "joint"] = "central"
    notes: tuple[str, ...] = ()
    noise: str = ""
    parts: tuple[tuple[str, PrivacyStatement], ...] = ()

    @classmethod
    def no_guarantee(cls, unit: str, scope: str, reason: str) -> PrivacyStatement:
        """The statement of a defence that has no differential-privacy guarantee."""
        return cls(math.inf, 0.0, "none", unit, scope, notes=(reason,))

    @classmethod
    def of_parts(cls, parts: Mapping[str, PrivacyStatement], headline: str) -> PrivacyStatement:
        """One statement of several named guarantees: the ``headline`` one, listing them all."""
        if headline not in parts:
            raise ConfigError(f"headline guarantee {headline!r} is not among the parts {list(parts)}")
        return replace(parts[headline], parts=tuple(parts.items()))

    def part(self, name: str) -> PrivacyStatement:
        """The guarantee named ``name`` (``KeyError`` naming the parts there are)."""
        for label, statement in self.parts:
            if label == name:
                return statement
        raise KeyError(f"no guarantee named {name!r}; this statement has {[label for label, _ in self.parts]}")

    @property
    def formal(self) -> bool:
        """True when the statement carries a finite epsilon."""
        return math.isfinite(self.epsilon)

    def __str__(self) -> str:
        prefix = "" if self.setting == "central" else f"{self.setting} "
        if not self.formal:
            head = f"No formal {prefix}differential-privacy guarantee"
        elif self.delta == 0:
            head = f"{self.epsilon:.4g}-{prefix}differential privacy"
        else:
            head = f"({self.epsilon:.4g}, {self.delta:.3g})-{prefix}differential privacy"
        lines = [
            head,
            f"  protects:   {self.unit}",
            f"  scope:      {self.scope}",
            f"  accountant: {self.accountant}",
        ]
        lines += [f"  note:       {n}" for n in self.notes]
        if self.noise:
            lines.append(f"  noise:      {self.noise}")
        for label, statement in self.parts:
            lines.append(f"  part:       {label}")
            lines += [f"    {line}" for line in str(statement).splitlines()]
        return "\n".join(lines)

    def sentence(self) -> str:
        """The claim in one sentence a reviewer reads in a table cell: ``ε = 3.5 × 10^7, local
        differential privacy: no meaningful guarantee at this ε`` (an ε above
        :data:`MEANINGFUL_EPSILON` bounds no likelihood ratio a reviewer can use); with ``parts``,
        the headline's sentence followed by each named guarantee's."""
        text = self._claim()
        if self.parts:
            text += "; by guarantee: " + "; ".join(f"{label}: {s.sentence()}" for label, s in self.parts)
        return text

    def _claim(self) -> str:
        """The headline's own sentence (``sentence``)."""
        if not self.formal:
            return "No formal differential-privacy guarantee"
        eps = f"{self.epsilon:.3g}" if self.epsilon < 1e4 else "{:.1f} × 10^{}".format(*_mantissa(self.epsilon))
        delta = f", δ = {self.delta:.0e}" if self.delta else ""
        text = f"ε = {eps}{delta}, {'' if self.setting == 'central' else self.setting + ' '}differential privacy"
        if self.setting == "joint":
            text += " (not for the list a user is served from their own rows)"
        return text + (": no meaningful guarantee at this ε" if self.epsilon > MEANINGFUL_EPSILON else "")

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form; an infinite epsilon becomes ``None`` with ``formal=False``;
        ``parts`` (only when there are any) lists each named guarantee's form under ``name``."""
        out = asdict(replace(self, parts=()))
        out["epsilon"] = self.epsilon if self.formal else None
        out["notes"] = list(self.notes)
        out["formal"] = self.formal
        del out["parts"]
        if self.parts:
            out["parts"] = [{"name": label, **s.to_dict()} for label, s in self.parts]
        return out


_DIPSGNN_UNIT = (
    "one transition count (edge) of one user's behaviour graph; deleting an interaction from the "
    "middle of a sequence changes up to 3 counts"
)
_DIPSGNN_BACKPROP = "gradients flowing through A·H̄ into trained weights are not privatised"


def dipsgnn_nominal_statement(sigma: float, C: float, T: int, delta: float) -> PrivacyStatement:
    """The paper's own claim (Theorem 4.2): one forward pass, A_out·H̄ counted once per step."""
    return PrivacyStatement(
        epsilon=dipsgnn_epsilon(sigma, delta, C, T),
        delta=float(delta),
        accountant="DIPSGNN Theorem 4.2 (Gaussian RDP, conversion of Mironov 2017 Prop. 3)",
        unit=_DIPSGNN_UNIT,
        scope=f"one forward pass ({T} aggregation step(s)) over one user graph",
        notes=(
            "A_in·H̄ releases the same edge again and is not counted",
            "no composition over training prefixes or epochs",
            _DIPSGNN_BACKPROP,
        ),
    )


def dipsgnn_composed_statement(
    sigma: float,
    C: float,
    T: int,
    delta: float,
    epochs: int,
    prefix_reuse: int,
    count_in_out: bool = True,
    accountant: str = "zcdp",
) -> PrivacyStatement:
    """Honest edge-level epsilon of a whole DIPSGNN training run (the paper states one forward pass).

    One edge is released ``prefix_reuse`` (training prefixes that contain it) x ``epochs`` x
    ``T`` x (2 when both A_out·H̄ and A_in·H̄ are counted) times, each a Gaussian release with
    noise multiplier ``sigma / C``. The default ``zcdp`` accountant uses the same conversion as
    Theorem 4.2, so one release reproduces the nominal eps2; ``rdp``/``pld`` give tighter figures.
    """
    d = _valid_delta(delta)
    acct = make_accountant(accountant)
    releases = (
        check_count("prefix_reuse", prefix_reuse)
        * check_count("epochs", epochs)
        * check_count("T", T)
        * (2 if count_in_out else 1)
    )
    if float(sigma) == 0.0:
        eps = math.inf
    else:
        multiplier = float(sigma) / check_positive("C", C)
        eps = acct.compose(gaussian_event(multiplier), releases).get_epsilon(d)
    directions = "A_out·H̄ and A_in·H̄" if count_in_out else "A_out·H̄ only"
    return PrivacyStatement(
        epsilon=eps,
        delta=d,
        accountant=acct.description,
        unit=_DIPSGNN_UNIT,
        scope=(
            f"whole training run: {prefix_reuse} prefix(es) x {epochs} epoch(s) x {T} step(s), "
            f"{directions}"
        ),
        notes=(_DIPSGNN_BACKPROP, "inference-time releases are not included"),
    )
