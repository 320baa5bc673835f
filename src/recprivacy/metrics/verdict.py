"""The one judgement every report uses: an attack against its strongest baseline, a defence
against the undefended attack, a reference (utility) row against its reference.

An attack's *margin* is ``m = value - baseline`` on one metric at one k, where the baseline is
the strongest thing the adversary can do *without the target* (a blind guess, the majority
class, the popularity guess at the same k, a statistic of the users' own histories); a statistic
of the target's output is an attack, never a baseline. With the margin's interval ``[lo, hi]``
the rule (:data:`RULE`, printed above every table of verdicts) is, in this order:

1. **not resolvable** when the sample cannot measure the metric at all (TPR at an FPR below
   ``1 / n_negatives``: ``Estimate.resolvable`` is False);
2. **not enough users** when fewer than :data:`MIN_GROUP` members or non-members (users, for a
   per-user metric) were attacked;
3. **saturated** when the attack and the baseline both sit at the metric's ceiling (ROC AUC 1 and
   1): the metric cannot separate them;
4. **below blind guess** when the attack's whole interval lies below a blind guess on the metric
   (``chance``): the attack's assumptions are wrong for this target (e.g. reference models of
   another algorithm); this is not evidence of safety;
5. **leaks** when ``lo > 0``;
6. **no leak measured** when ``hi <= 0`` (the interval lies at or below zero);
7. **inconclusive** otherwise (the interval straddles zero).

A defence is judged by the change it causes in the same attack's success, ``d = defended -
undefended`` (both printed beside it): rules 1-2, then **backfires** when ``lo > 0``, **reduces**
when ``hi < 0``, otherwise **no measurable change**. A reference row (the target's own utility; a private alternative's utility cost) is not an
attack and reads **above** / **not above** its reference, or **costs** / **gains** / **no
measurable cost** (:func:`judge_reference`, :func:`judge_cost`). A secondary metric of an attack (e.g. TPR at
1% FPR beside ROC AUC) carries no verdict word of its own (:func:`secondary`): only the primary
metric is judged, so the two can never contradict each other.

An erasure (:func:`judge_erasure`, :data:`ERASURE_RULE`) is judged from two attack verdicts on the
model after the deletion: *forgotten* (forgotten users against never-members) and the positive
*control* (retained members against never-members), in this order: forgotten's **not
resolvable**, **not enough users** or **saturated** as they are; **not erased** when forgotten
**leaks**; **inconclusive: the attack cannot tell retained members either** when the control does
not **leak**; **not erased** when forgotten is **below blind guess** (with a working attack the
forgotten users look *less* like members than never-members do: distinguishable the other way);
otherwise **no evidence the forgotten users are distinguishable**.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from recprivacy.metrics.intervals import Estimate

#: fewest members and fewest non-members (or users, for a per-user metric) a verdict needs
MIN_GROUP = 10

ATTACK_WORDS = ("not resolvable", "not enough users", "saturated", "below blind guess", "leaks", "no leak measured",
                "inconclusive")  # fmt: skip
DEFENCE_WORDS = ("not resolvable", "not enough users", "backfires", "reduces", "no measurable change")
REFERENCE_WORDS = ("not resolvable", "above", "not above", "costs", "gains", "no measurable cost")
SECONDARY = "secondary"
NOT_ERASED = "not erased"
NO_EVIDENCE = "no evidence the forgotten users are distinguishable"
NO_POWER = "inconclusive: the attack cannot tell retained members either"
ERASURE_WORDS = ("not resolvable", "not enough users", "saturated", NOT_ERASED, NO_POWER, NO_EVIDENCE)

#: the rule in one sentence, as every report prints it above its verdicts
RULE = (
    "Verdict rule (recprivacy.metrics.verdict), applied in order to margin = value - baseline and its 95% interval "
    "[lo, hi]: **not resolvable** if the sample cannot measure the metric; **not enough users** if fewer than "
    f"{MIN_GROUP} members or fewer than {MIN_GROUP} non-members (users, for per-user metrics) were attacked; "
    "**saturated** if attack and baseline both sit at the metric's ceiling; **below blind guess** if the attack's "
    "whole interval lies below a blind guess (its assumptions do not fit this target: not evidence of safety); "
    "**leaks** if lo > 0; **no leak measured** if hi <= 0; **inconclusive** otherwise. A defence's change = defended - "
    "undefended: **backfires** if lo > 0, **reduces** if hi < 0, **no measurable change** otherwise. Secondary "
    "metrics are shown without a verdict of their own."
)

#: the erasure rule in one sentence, as the erasure report prints it above its verdict
ERASURE_RULE = (
    "Erasure rule (recprivacy.metrics.verdict.judge_erasure): the strongest attack is judged by the rule above twice on "
    "the model after the deletion, forgotten users against never-members and (the positive control) retained members "
    "against never-members; then, in order: the forgotten row's **not resolvable**, **not enough users** or "
    f"**saturated** stand; **{NOT_ERASED}** if it **leaks**; **{NO_POWER}** if the control does not **leak**; "
    f"**{NOT_ERASED}** if it is **below blind guess** (the forgotten users are told apart the other way); otherwise "
    f"**{NO_EVIDENCE}**."
)


@dataclass(frozen=True)
class Sample:
    """Who a value was measured on: ``positives`` members and ``negatives`` non-members (or
    only ``positives`` users for a per-user metric), over ``seeds`` seeds combined as
    ``combined`` (e.g. "one seed", "mean over seeds, t interval")."""

    positives: int
    negatives: int | None = None
    seeds: int = 1
    combined: str = "bootstrap"
    units: tuple[str, str] = ("members", "non-members")

    @property
    def smallest(self) -> int:
        return self.positives if self.negatives is None else min(self.positives, self.negatives)

    def __str__(self) -> str:
        who = (f"{self.positives} {self.units[0]}" if self.negatives is None
               else f"{self.positives} {self.units[0]} / {self.negatives} {self.units[1]}")  # fmt: skip
        seeds = f"1 seed, {self.combined}" if self.seeds == 1 else f"{self.seeds} seeds, {self.combined}"
        return f"{who}; {seeds}"

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "text": str(self)}


def users_sample(n_users: int, seeds: int = 1, combined: str = "bootstrap over users") -> Sample:
    """The sample of a per-user metric (recall, accuracy): ``n_users`` attacked users."""
    return Sample(n_users, None, seeds, combined, ("users attacked", ""))


@dataclass(frozen=True)
class Verdict:
    """``label`` (one of the rule's words) and one sentence a reviewer can check."""

    label: str
    text: str

    def __str__(self) -> str:
        return self.text


def _interval(e: Estimate) -> str:
    return f"[{e.low:+.3f}, {e.high:+.3f}]"


def _common(estimates: tuple[Estimate, ...], sample: Sample | None) -> Verdict | None:
    """Rules 1-2: an estimate the sample cannot resolve, or a sample too small to judge."""
    for e in estimates:
        if not e.resolvable:
            return Verdict("not resolvable", f"not resolvable with n = {e.n}")
    if sample is not None and sample.smallest < MIN_GROUP:
        return Verdict("not enough users", f"not enough users to judge ({sample}; at least {MIN_GROUP} of each needed)")
    return None


def judge_attack(
    value: Estimate,
    baseline: float,
    margin: Estimate,
    baseline_name: str,
    *,
    chance: float | None = None,
    ceiling: float | None = 1.0,
    sample: Sample | None = None,
) -> Verdict:
    """The verdict on an attack (module docstring, rules 1-7).

    Parameters
    ----------
    value:
        The attack's estimate with its interval.
    baseline:
        The strongest baseline's value on the same metric and k (``margin`` is over it).
    margin:
        ``value - baseline`` with its interval (paired where the design allows).
    baseline_name:
        What the baseline is, for the sentence ("the popularity guess at k = 10").
    chance:
        A blind guess's value on this metric (0.5 for ROC AUC, ``1 / C`` for balanced accuracy),
        or None when the metric has no such floor in the caller's hands.
    ceiling:
        The metric's largest value (1 for every bounded metric; None when unbounded).
    sample:
        Who was attacked; None skips rule 2 (the caller has checked the sample).
    """
    early = _common((value, margin), sample)
    if early is not None:
        return early
    if ceiling is not None and value.value >= ceiling and baseline >= ceiling:
        return Verdict("saturated", f"saturated: attack {value.value:.3f} and {baseline_name} {baseline:.3f} both at the "
                                    f"metric's ceiling {ceiling:g}; it cannot separate them")  # fmt: skip
    if chance is not None and value.high < chance:
        return Verdict("below blind guess", f"below blind guess: {value.value:.3f} {_interval(value)} under a blind guess "
                                            f"({chance:g}); the attack's assumptions do not fit this target, "
                                            "not evidence of safety")  # fmt: skip
    if margin.low > 0:
        return Verdict("leaks", f"leaks: {margin.value:+.3f} {_interval(margin)} over {baseline_name}")
    if margin.high <= 0:
        return Verdict("no leak measured", f"no leak measured: {margin.value:+.3f} {_interval(margin)} against {baseline_name}")
    return Verdict("inconclusive", f"inconclusive: {margin.value:+.3f} {_interval(margin)} against {baseline_name}")


def judge_defence(change: Estimate, attack: str, *, sample: Sample | None = None) -> Verdict:
    """The verdict on a defence from the ``change`` (defended - undefended) in ``attack``'s success."""
    early = _common((change,), sample)
    if early is not None:
        return early
    if change.low > 0:
        return Verdict("backfires", f"backfires: {attack} gains {change.value:+.3f} {_interval(change)}")
    if change.high < 0:
        return Verdict("reduces", f"reduces {attack} by {-change.value:.3f} [{-change.high:.3f}, {-change.low:.3f}]")
    return Verdict("no measurable change", f"no measurable change in {attack}: {change.value:+.3f} {_interval(change)}")


def judge_reference(margin: Estimate, what: str) -> Verdict:
    """A reference row (the target's own utility, not an attack): **above** its reference when
    the margin's interval clears zero, **not above** otherwise."""
    if not margin.resolvable:
        return Verdict("not resolvable", f"not resolvable with n = {margin.n}")
    if margin.low > 0:
        return Verdict("above", f"reference: above {what} by {margin.value:+.4f} [{margin.low:+.4f}, {margin.high:+.4f}]")
    return Verdict("not above", f"reference: not above {what} ({margin.value:+.4f} [{margin.low:+.4f}, {margin.high:+.4f}])")


def judge_cost(change: Estimate, what: str) -> Verdict:
    """A private alternative's utility against the target's (``change`` = alternative - target,
    a reference row, not an attack): **costs** when ``hi < 0``, **gains** when ``lo > 0``,
    otherwise **no measurable cost**."""
    if not change.resolvable:
        return Verdict("not resolvable", f"not resolvable with n = {change.n}")
    if change.high < 0:
        return Verdict("costs", f"reference: costs {-change.value:.4f} [{-change.high:.4f}, {-change.low:.4f}] of {what}")
    if change.low > 0:
        return Verdict("gains", f"reference: gains {change.value:+.4f} [{change.low:+.4f}, {change.high:+.4f}] of {what}")
    return Verdict("no measurable cost", f"reference: no measurable cost ({change.value:+.4f} [{change.low:+.4f}, {change.high:+.4f}])")


def secondary(primary_metric: str) -> Verdict:
    """The verdict cell of a secondary metric: no word of its own (module docstring)."""
    return Verdict(SECONDARY, f"secondary (the verdict is on {primary_metric})")


def judge_erasure(forgotten: Verdict, control: Verdict) -> Verdict:
    """The verdict on an erasure (module docstring) from the attack verdicts (:func:`judge_attack`)
    on ``forgotten`` users and on the positive ``control`` (retained members), both against
    never-members on the model after the deletion."""
    if forgotten.label in ("not resolvable", "not enough users", "saturated"):
        return forgotten
    if forgotten.label == "leaks":
        return Verdict(NOT_ERASED, f"{NOT_ERASED}: the forgotten users are told apart from never-members ({forgotten.text})")
    if control.label != "leaks":
        return Verdict(NO_POWER, f"{NO_POWER} (control: {control.text}; forgotten: {forgotten.text})")
    if forgotten.label == "below blind guess":
        return Verdict(NOT_ERASED, f"{NOT_ERASED}: the forgotten users look less like members than never-members do "
                                   f"({forgotten.text})")  # fmt: skip
    return Verdict(NO_EVIDENCE, f"{NO_EVIDENCE} ({forgotten.text}); the positive control holds ({control.text})")
