"""The one verdict rule every report uses: an attack against its strongest baseline, a defence
against the undefended attack.

An attack "leaks" only when its margin over the strongest blind or trivial baseline, on the
same metric and the same k, has a confidence interval that clears zero. Concretely, with the
margin ``m = attack - baseline`` and its interval ``[lo, hi]``:

* ``lo > 0``: **leaks**, by ``m`` (the text names the baseline, the margin and its interval);
* ``hi <= tolerance`` (the attack does no better than the baseline, up to a ``tolerance`` the
  caller can justify for its metric; default 0): **no leak measured**;
* otherwise: **inconclusive** (the sample cannot tell; more targets or seeds would).

For metrics symmetric around chance (ROC AUC, where ``1 - AUC`` is what an attacker who
flips the decision gets), an interval wholly below chance is leakage too: **leaks
(inverted)**, reported with the flipped value.

A defence is judged by the change it causes in the same attack's success, ``d = defended -
undefended`` with its interval: ``lo > 0`` **backfires** (the attack gains), ``hi < 0``
**reduces** leakage, otherwise **no measurable change**.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from recprivacy.metrics.intervals import Estimate

AttackLabel = Literal["leaks", "leaks (inverted)", "inconclusive", "no leak measured", "not resolvable"]
DefenceLabel = Literal["backfires", "reduces", "no measurable change", "not resolvable"]


@dataclass(frozen=True)
class Verdict:
    """``label`` (one of the rule's outcomes) and one sentence a reviewer can check."""

    label: str
    text: str

    def __str__(self) -> str:
        return self.text


def _interval(e: Estimate) -> str:
    return f"[{e.low:+.3f}, {e.high:+.3f}]"


def judge_attack(
    margin: Estimate,
    baseline: str,
    *,
    attack: Estimate | None = None,
    chance: float | None = None,
    tolerance: float = 0.0,
) -> Verdict:
    """Verdict on an attack from its ``margin`` over the ``baseline`` it is named after.

    Parameters
    ----------
    margin:
        ``attack - baseline`` on one metric and one k, with its interval (e.g. a paired
        bootstrap, or ``attack_estimate.shifted(constant_baseline)``).
    baseline:
        What the attack was compared with, for the sentence ("the popularity guess at k = 10").
    attack:
        The attack's own estimate; with ``chance``, used to detect inverted leakage.
    chance:
        Value of a blind guess on a metric symmetric around it (0.5 for ROC AUC), or None.
    tolerance:
        Largest margin the caller treats as "no better than the baseline".

    Returns
    -------
    Verdict
    """
    if not margin.resolvable:
        return Verdict("not resolvable", f"not resolvable with n = {margin.n}")
    if attack is not None and chance is not None and attack.high < chance:
        flipped = 2 * chance - attack.value
        return Verdict("leaks (inverted)", f"leaks (inverted): flipping the decision scores {flipped:.3f}, "
                                           f"interval wholly below chance {chance:g}")  # fmt: skip
    if margin.low > 0:
        return Verdict("leaks", f"leaks: {margin.value:+.3f} {_interval(margin)} over {baseline}")
    if margin.high <= tolerance:
        return Verdict("no leak measured", f"no leak measured: {margin.value:+.3f} {_interval(margin)} against {baseline}")
    return Verdict("inconclusive", f"inconclusive: {margin.value:+.3f} {_interval(margin)} against {baseline}")


def judge_defence(change: Estimate, attack: str) -> Verdict:
    """Verdict on a defence from the ``change`` (defended - undefended) in ``attack``'s success."""
    if not change.resolvable:
        return Verdict("not resolvable", f"not resolvable with n = {change.n}")
    if change.low > 0:
        return Verdict("backfires", f"defence backfires: {attack} gains {change.value:+.3f} {_interval(change)}")
    if change.high < 0:
        return Verdict("reduces", f"reduces {attack} by {-change.value:.3f} [{-change.high:.3f}, {-change.low:.3f}]")
    return Verdict("no measurable change", f"no measurable change in {attack}: {change.value:+.3f} {_interval(change)}")
