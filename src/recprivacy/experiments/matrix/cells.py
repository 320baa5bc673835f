"""One cell of the attack x defence matrix: an attack run against one defended world, by a
*frozen* attacker (trained on the undefended world, as if it did not know the defence) and an
*adaptive* one (knows the defence and retrains on defended data), each judged by
``metrics.verdict.judge_attack`` against the strongest blind guess on the same metric and k.

* ``membership`` (paper 001, ``matrix.membership``): whether a user was in the target's training
  data, from the top-k list it serves them, under the ``served`` protocol: every attack of the
  audit's membership section (MLP, LiRA, RMIA, statistics of the lists), judged as the audit
  judges them (the strongest attack against the strongest baseline), frozen and adaptive;
  Popularity Randomization has nothing to replace under ``served`` and its cell says so.
* ``attribute``: the attribute of users who did not disclose it, from the top-k lists they
  are served (multi-hot), by the better of the configured attackers trained on the users who
  did; balanced accuracy against a blind guess's ``1 / C`` (``federated.classes.judge_class_metric``).
* ``exposure``: a user's recent clicks from one shown slate (paper 000); Recall@10 over all
  items against the stronger 10-item guess (``exposure.judged_recall``).
* ``canaries``: ``m`` canary interactions (a user and an item the user never rated), each
  planted in the training data with probability 1/2 (``metrics.epsilon.canary_inclusion``).
  The attacker holds the released item factors and the user's other training items and scores
  a canary ``v_i . mean_j v_j`` (how close the item sits to the user's history), which stays
  within the scope of an item-factor claim such as DPMF's. It has no trained part, so the
  frozen and adaptive attackers coincide. Reported: ROC AUC against 0.5, the ROC epsilon lower
  bound and the one-run bound (``metrics.epsilon``).
* ``recovery``: a synthetic release's replaced items, Recall@K against the popularity guess of
  the release (``matrix.release``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from recprivacy.data.exposure_pairs import ExposurePairs
from recprivacy.data.interactions import Interactions
from recprivacy.experiments.exposure.audit import judged_recall
from recprivacy.experiments.federated.classes import class_metric, judge_class_metric, pooled_predictions
from recprivacy.metrics.epsilon import (
    OneRunAudit,
    canary_inclusion,
    one_run_epsilon,
    roc_epsilon,
)
from recprivacy.metrics.intervals import Estimate, auc_interval, unpaired_difference
from recprivacy.metrics.verdict import Sample, Verdict, judge_attack, judge_defence, users_sample


@dataclass(frozen=True)
class Judged:
    """One attacker's success on one cell, its baseline, the verdict of ``judge_attack`` and what
    it was judged with: a blind guess's value on the metric (``chance``), who was attacked and,
    where the attacker ran several attacks, the strongest one's name (``attack``)."""

    value: Estimate
    baseline: float
    baseline_name: str
    margin: Estimate
    verdict: Verdict
    chance: float | None = None
    sample: Sample | None = None
    attack: str = ""

    def record(self) -> dict[str, Any]:
        """The numbers the verdict was judged on and the verdict (``Results.verdicts``)."""
        return {"value": self.value.to_dict(), "baseline": self.baseline, "baseline_name": self.baseline_name,
                "margin": self.margin.to_dict(), "label": self.verdict.label, "text": self.verdict.text,
                "chance": self.chance, "sample": self.sample.to_dict() if self.sample is not None else None,
                "strongest_attack": self.attack}  # fmt: skip


@dataclass
class MatrixCell:
    """A cell: the frozen and adaptive attackers (None when the cell does not apply, with the
    ``reason``), for the canary column the epsilon bounds, and ``utility`` when the system the
    cell attacks is not its row's (the no-defence row's uploads cell: Pure FedRec). ``beside``:
    further readings shown beside the verdict's, by name (the interactions column: the easy
    non-members); ``change``: the defence's change when the column measured it paired (the same
    targets attacked in both rows) instead of from the two printed intervals."""

    frozen: Judged | None = None
    adaptive: Judged | None = None
    reason: str = ""
    epsilon: dict[str, Any] = field(default_factory=dict)
    utility: tuple[str, Estimate, Estimate] | None = None
    beside: dict[str, Judged] = field(default_factory=dict)
    change: Change | None = None

    @property
    def best(self) -> Judged | None:
        """The stronger of the two attackers: the larger value on the cell's metric (the frozen
        one on a tie)."""
        judged = [j for j in (self.frozen, self.adaptive) if j is not None]
        return max(judged, key=lambda j: j.value.value, default=None)

    @property
    def best_name(self) -> str:
        """``frozen`` or ``adaptive``: which attacker ``best`` is."""
        return "adaptive" if self.best is self.adaptive and self.adaptive is not self.frozen else "frozen"


def judged(value: Estimate, baseline: float, name: str, margin: Estimate, *, chance: float | None = None,
           sample: Sample | None = None, attack: str = "") -> Judged:  # fmt: skip
    """``Judged`` with the verdict of ``metrics.verdict.judge_attack``; ``attack`` names the
    strongest of several attacks when the attacker ran more than one."""
    verdict = judge_attack(value, baseline, margin, name, chance=chance, sample=sample)
    return Judged(value, baseline, name, margin, verdict, chance, sample, attack=attack)


def labelled_sample(labels: np.ndarray) -> Sample:
    """The sample of a binary attack: how many targets are labelled 1 (members, planted
    canaries) and how many 0."""
    positives = int(np.count_nonzero(labels))
    return Sample(positives, len(labels) - positives)


# ---------------------------------------------------------------------------- defence change

#: decimals of a value in a matrix cell; a defence's change is computed from the values so printed
DIGITS = 3


def printed(e: Estimate) -> Estimate:
    """``e`` with its value and interval rounded to the ``DIGITS`` a matrix cell prints."""
    return replace(e, value=round(e.value, DIGITS), low=round(e.low, DIGITS), high=round(e.high, DIGITS))


@dataclass(frozen=True)
class Change:
    """A defence's change in an attack's success: ``estimate`` = ``defended - undefended`` of the
    two values as printed, with the unpaired interval of their printed intervals
    (``intervals.unpaired_difference``), and its ``verdict`` (``metrics.verdict.judge_defence``)."""

    defended: float
    undefended: float
    estimate: Estimate
    verdict: Verdict

    def record(self) -> dict[str, Any]:
        """The change, the two values it is the difference of and its verdict (``Results.verdicts``)."""
        e = self.estimate
        return {"change": {"value": e.value, "low": e.low, "high": e.high}, "defended": self.defended,
                "undefended": self.undefended, "change_label": self.verdict.label, "change_text": self.verdict.text}  # fmt: skip


def defence_change(defended: Judged, undefended: Judged, attack: str) -> Change:
    """``judge_defence`` on the defended attacker's printed value minus the undefended one's, so
    that a reader's subtraction of the two printed numbers gives the printed change; rule 2 on
    the smaller of the two samples."""
    a, b = printed(defended.value), printed(undefended.value)
    change = unpaired_difference(a, b)
    samples = [s for s in (defended.sample, undefended.sample) if s is not None]
    sample = min(samples, key=lambda s: s.smallest, default=None)
    return Change(a.value, b.value, change, judge_defence(change, attack, sample=sample))


# ---------------------------------------------------------------------------- attribute


def attribute_judged(x_fit: Any, x_world: Any, y: np.ndarray, n_classes: int, zeta: float, seeds: int,
                     attackers: list[str], metric: str) -> Judged:  # fmt: skip
    """The best of ``attackers`` trained on ``x_fit`` (known users) and applied to ``x_world``
    (the others), judged on ``metric`` against its blind guess (``federated.classes.judge_class_metric``);
    for balanced accuracy that guess, ``1 / C``, is also the floor below which the attack reads
    "below blind guess". The sample is the distinct users attacked over the ``seeds`` pooled splits."""
    runs = [pooled_predictions(x_fit, y, n_classes, zeta, seeds, kind, x_attacked=x_world) for kind in attackers]
    best = max(runs, key=lambda r: class_metric(metric, *r, n_classes)(None))
    value, blind, name, margin = judge_class_metric(metric, *best, n_classes)
    sample = users_sample(len(np.unique(best[0])), seeds, f"predictions pooled over {seeds} ζ-splits, bootstrap over users")
    return judged(value, blind, name, margin, chance=blind if metric == "balanced_accuracy" else None, sample=sample)


# ---------------------------------------------------------------------------- exposure


def exposure_judged(attack: Any, parts: dict[str, ExposurePairs]) -> Judged:
    """A fitted exposure attacker on ``parts['test']`` (unseen slate items as ``[OOV]``)."""
    value, name, blind, margin = judged_recall(attack, parts["train"], parts["test"], oov="token")
    users = users_sample(len(np.unique(attack.encode(parts["test"], "token").users)))
    return judged(value, blind, f"{name} guess, 10 items", margin, sample=users)


# ---------------------------------------------------------------------------- canaries


@dataclass(frozen=True)
class Canaries:
    """``m`` canary (user, item) pairs and which of them are planted in training."""

    users: np.ndarray
    items: np.ndarray
    included: np.ndarray

    @classmethod
    def draw(cls, full: Interactions, members: np.ndarray, m: int, seed: int) -> Canaries:
        """``m`` pairs of a random member and an item that member never interacted with
        (distinct pairs), planted with probability 1/2 each."""
        rng = np.random.default_rng([seed, 0xCA9A])
        seen = full.to_csr()
        users = rng.choice(members, size=4 * m)
        items = rng.integers(0, full.n_items, size=4 * m)
        fresh = np.asarray(seen[users, items]).ravel() == 0
        keys = np.unique(users[fresh] * full.n_items + items[fresh])
        keys = rng.permutation(keys)[:m]
        return cls(keys // full.n_items, keys % full.n_items, canary_inclusion(len(keys), seed))

    def plant(self, train: Interactions) -> Interactions:
        """``train`` with the included canaries added (rating: the largest, time: after all)."""
        users, items = self.users[self.included], self.items[self.included]
        extra: dict[str, Any] = {}
        if train.ratings is not None:
            extra["ratings"] = np.concatenate([train.ratings, np.full(len(users), train.ratings.max())])
        if train.timestamps is not None:
            extra["timestamps"] = np.concatenate([train.timestamps, np.full(len(users), train.timestamps.max() + 1)])
        return train.with_changes(users=np.concatenate([train.users, users]), items=np.concatenate([train.items, items]),
                                  **extra).with_step("plant_canaries", n=int(len(users)))  # fmt: skip

    def scores(self, item_factors: np.ndarray, train: Interactions) -> np.ndarray:
        """``v_i . mean_j v_j`` over the user's own training items (canaries excluded)."""
        csr = train.to_csr()
        profile = np.asarray(csr @ item_factors) / np.maximum(np.diff(csr.indptr), 1)[:, None]
        return np.einsum("nd,nd->n", item_factors[self.items], profile[self.users])


def canary_judged(canaries: Canaries, item_factors: np.ndarray, train: Interactions, k_guess: int,
                  delta: float) -> tuple[Judged, dict[str, Any]]:  # fmt: skip
    """ROC AUC of the canary scores against chance, and the ROC and one-run epsilon bounds."""
    scores = canaries.scores(item_factors, train)
    auc = auc_interval(canaries.included, scores)
    roc = roc_epsilon(canaries.included, scores, delta)
    one_run: OneRunAudit = one_run_epsilon(canaries.included, scores, k_guess, k_guess)
    sample = labelled_sample(canaries.included)
    return judged(auc, 0.5, "chance (0.5)", auc.shifted(0.5), chance=0.5, sample=sample), {
        "roc_lower": roc.low, "roc_point": roc.value, "one_run": one_run.epsilon,
        "one_run_guesses": one_run.guesses, "one_run_correct": one_run.correct, "m": len(scores),
    }
