"""Measured epsilon: lower bounds on a mechanism's privacy loss, set against its claim.

Two audits turn an attack's guesses into a statistical lower bound on epsilon:

* ``roc_epsilon`` (Kairouz et al. 2015; Jagielski et al. 2020): any (eps, delta)-DP mechanism
  forces ``TPR - delta <= e^eps FPR`` at every threshold of every attack, so the attack's ROC,
  with TPR replaced by its Clopper-Pearson lower bound and FPR by its upper bound, gives a
  lower bound that holds with probability ``level`` (``metrics.attack.empirical_epsilon``).
  It needs many independent training runs (or mechanism invocations), one per sample.
* ``one_run_epsilon`` (Steinke, Nasr and Jagielski 2023, "Privacy auditing with one (1)
  training run", Theorem 3.1 and Algorithm 1, abstention version): plant ``m`` canaries, each
  included independently with probability 1/2, train once, score every canary, guess
  "included" for the ``k_pos`` highest and "excluded" for the ``k_neg`` lowest scores and
  abstain on the rest. For an eps-DP algorithm the number ``W`` of correct guesses among the
  ``r = k_pos + k_neg`` made is stochastically dominated by ``Binomial(r, p(eps))`` with
  ``p(eps) = e^eps / (e^eps + 1)``. The bound is the largest eps with
  ``P[Binomial(r, p(eps)) >= W] <= beta``: at any larger eps the observed ``W`` would be
  rarer than ``beta``. This is the pure-DP test; for a claim with ``delta > 0`` it ignores
  the paper's delta correction, which makes it slightly optimistic (stated in ``method``).

``judge_claim`` compares a measured lower bound with the claimed epsilon: a lower bound above
the claim means the guarantee is broken (the implementation, the accountant or the claim is
wrong); a lower bound below it is *consistent* with the claim and proves nothing more; a claim
above the largest bound the sample could ever show (``largest_roc_epsilon``, about
``log(n / 3.7)`` for ``n`` samples a side) is *untestable* with that sample.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from recprivacy.metrics.attack import _binary_inputs, empirical_epsilon
from recprivacy.metrics.intervals import LEVEL, Estimate

#: largest epsilon the one-run search considers (p(50) = 1 - 2e-22)
EPS_MAX = 50.0


def roc_epsilon(y_true: Any, scores: Any, delta: float = 0.0, level: float = LEVEL) -> Estimate:
    """Epsilon implied by an attack's ROC: ``value`` the point estimate (``inf`` when some
    threshold has no false positive), ``low`` the ``level`` lower bound (Clopper-Pearson)."""
    point = empirical_epsilon(y_true, scores, delta)
    low = empirical_epsilon(y_true, scores, delta, confidence=level)
    y, _ = _binary_inputs(y_true, scores)
    return Estimate(point, low, math.inf, f"ROC with Clopper-Pearson TPR/FPR bounds (delta = {delta:g})", len(y), level)


def canary_inclusion(m: int, seed: int) -> np.ndarray:
    """Which of ``m`` canaries are included: independent fair coins from their own seeded
    generator, so the draw is independent of any protection noise."""
    return np.random.default_rng([seed, 0x5EED]).random(m) < 0.5


@dataclass(frozen=True)
class OneRunAudit:
    """Result of ``one_run_epsilon``: the lower bound, the guesses made and how many were right."""

    epsilon: float
    guesses: int
    correct: int
    canaries: int
    beta: float
    method: str

    @property
    def level(self) -> float:
        return 1.0 - self.beta


def _tail(eps: float, r: int, v: int) -> float:
    """``P[Binomial(r, e^eps / (e^eps + 1)) >= v]``."""
    return float(stats.binom.sf(v - 1, r, 1.0 / (1.0 + math.exp(-eps))))


def one_run_bound(guesses: int, correct: int, beta: float = 0.05) -> float:
    """Largest eps with ``P[Binomial(guesses, p(eps)) >= correct] <= beta`` (0 if none), by
    bisection (the tail grows with eps)."""
    if guesses == 0 or _tail(0.0, guesses, correct) > beta:
        return 0.0
    if _tail(EPS_MAX, guesses, correct) <= beta:
        return EPS_MAX
    low, high = 0.0, EPS_MAX
    while high - low > 1e-6:
        mid = (low + high) / 2
        low, high = (mid, high) if _tail(mid, guesses, correct) <= beta else (low, mid)
    return low


def one_run_epsilon(included: Any, scores: Any, k_pos: int, k_neg: int, beta: float = 0.05) -> OneRunAudit:
    """One-run canary audit (module docstring): guess "included" for the ``k_pos`` highest
    ``scores`` and "excluded" for the ``k_neg`` lowest, and bound eps from the correct guesses.
    ``k_pos`` and ``k_neg`` must be fixed before seeing the scores (choosing them on the same
    canaries would invalidate the test)."""
    y = np.asarray(included, dtype=bool)
    s = np.asarray(scores, dtype=np.float64)
    if y.shape != s.shape or y.ndim != 1:
        raise ValueError(f"included and scores: expected equal 1-d shapes, got {y.shape} and {s.shape}")
    if k_pos < 0 or k_neg < 0 or k_pos + k_neg > len(y):
        raise ValueError(f"k_pos + k_neg: expected non-negative counts summing to at most {len(y)}, got {k_pos} + {k_neg}")
    order = np.argsort(-s, kind="stable")
    correct = int(y[order[:k_pos]].sum() + (~y[order[len(y) - k_neg:]]).sum())
    eps = one_run_bound(k_pos + k_neg, correct, beta)
    return OneRunAudit(eps, k_pos + k_neg, correct, len(y), beta,
                       f"one-run canary audit (Steinke et al. 2023), pure-DP test at {1 - beta:.0%}")  # fmt: skip


@dataclass(frozen=True)
class ClaimCheck:
    """A claimed epsilon beside a measured lower bound, with the reading."""

    claimed: float
    measured: float
    label: str
    text: str


def largest_roc_epsilon(n_pos: int, n_neg: int, level: float = LEVEL) -> float:
    """The largest ROC lower bound ``n_pos`` positives and ``n_neg`` negatives can ever show
    (a perfect attack: TPR = 1 at FPR = 0, each bounded one-sided at ``1 - (1 - level) / 2``);
    a claim above it cannot be tested with this sample."""
    y = np.r_[np.ones(n_pos), np.zeros(n_neg)]
    return empirical_epsilon(y, y, confidence=level)


def judge_claim(claimed: float, measured: float, how: str, limit: float = math.inf) -> ClaimCheck:
    """``broken guarantee`` when the lower bound ``measured`` (made by ``how``) exceeds the
    ``claimed`` epsilon; ``no formal claim`` when there is none to check; ``untestable`` when
    the claim exceeds ``limit``, the largest bound the audit's sample could show; else
    ``consistent``."""
    if not math.isfinite(claimed):
        return ClaimCheck(claimed, measured, "no formal claim",
                          f"no formal claim; measured lower bound {measured:.3g} ({how})")  # fmt: skip
    if measured > claimed:
        return ClaimCheck(claimed, measured, "broken guarantee",
                          f"BROKEN GUARANTEE: measured lower bound {measured:.3g} > claimed {claimed:.3g} ({how})")
    if claimed > limit:
        return ClaimCheck(claimed, measured, "untestable",
                          f"untestable at this sample size: claimed {claimed:.3g} exceeds the largest bound it can show "
                          f"({limit:.3g}); measured {measured:.3g} ({how})")  # fmt: skip
    return ClaimCheck(claimed, measured, "consistent",
                      f"consistent: lower bound {measured:.3g} <= claimed {claimed:.3g} ({how}); a bound below the "
                      "claim does not prove the claim")  # fmt: skip
