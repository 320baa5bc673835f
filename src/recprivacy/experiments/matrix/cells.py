"""One cell of the attack x defence matrix: an attack run against one defended world, by a
*frozen* attacker (trained on the undefended world, as if it did not know the defence) and an
*adaptive* one (knows the defence and retrains on defended data), each judged by
``metrics.verdict.judge_attack`` against the strongest blind guess on the same metric and k.

* ``membership`` (paper 001): whether a user was in the target's training data, from the top-k
  list it serves them, by the membership lab of ``experiments.membership`` (its shadow of the
  target's algorithm, its item vectors and MLP attack, its partition of held-out users), under
  the ``served`` protocol (non-members get the target's own lists). A defence that retrains
  the target is attacked by a frozen shadow of the undefended algorithm and by an adaptive
  shadow trained under the defence (``matrix.membership``); Popularity Randomization has nothing
  to replace under ``served`` and its cell says so. The ROC AUC of
  the lab's scores gets a bootstrap interval here and is judged against 0.5.
* ``attribute``: the attribute of users who did not disclose it, from the top-k lists they
  are served (multi-hot), by the better of the configured attackers trained on the users who
  did; accuracy against always guessing the majority class (``federated.classes.judge_class_metric``).
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

from dataclasses import dataclass, field
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
from recprivacy.metrics.intervals import Estimate, auc_interval
from recprivacy.metrics.verdict import Verdict, judge_attack


@dataclass(frozen=True)
class Judged:
    """One attacker's success on one cell, its baseline and the verdict."""

    value: Estimate
    baseline: float
    baseline_name: str
    margin: Estimate
    verdict: Verdict

    @property
    def effective(self) -> Estimate:
        """The success an attacker gets from this one: the value, or for an attack wholly
        below chance on a symmetric metric (``leaks (inverted)``) the flipped value."""
        if self.verdict.label != "leaks (inverted)":
            return self.value
        v, flip = self.value, 2 * self.baseline
        return Estimate(flip - v.value, flip - v.high, flip - v.low, f"flipped {v.method}", v.n, v.level)


@dataclass
class Cell:
    """A cell: the frozen and adaptive attackers (None when the cell does not apply, with the
    ``reason``), for the canary column the epsilon bounds, and ``utility`` when the system the
    cell attacks is not its row's (the no-defence row's uploads cell: Pure FedRec)."""

    frozen: Judged | None = None
    adaptive: Judged | None = None
    reason: str = ""
    epsilon: dict[str, Any] = field(default_factory=dict)
    utility: tuple[str, Estimate, Estimate] | None = None

    @property
    def best(self) -> Judged | None:
        """The stronger of the two attackers (larger effective success on the cell's metric)."""
        judged = [j for j in (self.frozen, self.adaptive) if j is not None]
        return max(judged, key=lambda j: j.effective.value, default=None)


def judged(value: Estimate, baseline: float, name: str, margin: Estimate, chance: float | None = None) -> Judged:
    """``Judged`` with the verdict of ``judge_attack``."""
    return Judged(value, baseline, name, margin, judge_attack(margin, name, attack=value, chance=chance))


# ---------------------------------------------------------------------------- membership


def membership_judged(outcome: Any) -> Judged:
    """A membership lab outcome (its target users' scores and labels) judged by ROC AUC."""
    auc = auc_interval(outcome.labels, outcome.scores)
    return judged(auc, 0.5, "chance (0.5)", auc.shifted(0.5), chance=0.5)


# ---------------------------------------------------------------------------- attribute


def attribute_judged(x_fit: Any, x_world: Any, y: np.ndarray, n_classes: int, zeta: float, seeds: int,
                     attackers: list[str], metric: str = "accuracy") -> Judged:  # fmt: skip
    """The best of ``attackers`` trained on ``x_fit`` (known users) and applied to ``x_world``
    (the others), judged on ``metric`` (``accuracy``: against the majority-class guess;
    ``weighted_f1``: against the better of that and a uniform guess)."""
    runs = [pooled_predictions(x_fit, y, n_classes, zeta, seeds, kind, x_attacked=x_world) for kind in attackers]
    best = max(runs, key=lambda r: class_metric(metric, *r, n_classes)(None))
    return judged(*judge_class_metric(metric, *best, n_classes))


# ---------------------------------------------------------------------------- exposure


def exposure_judged(attack: Any, parts: dict[str, ExposurePairs]) -> Judged:
    """A fitted exposure attacker on ``parts['test']`` (unseen slate items as ``[OOV]``)."""
    value, name, blind, margin = judged_recall(attack, parts["train"], parts["test"], oov="token")
    return judged(value, blind, f"{name} guess, 10 items", margin)


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
    return judged(auc, 0.5, "chance (0.5)", auc.shifted(0.5), chance=0.5), {
        "roc_lower": roc.low, "roc_point": roc.value, "one_run": one_run.epsilon,
        "one_run_guesses": one_run.guesses, "one_run_correct": one_run.correct, "m": len(scores),
    }
