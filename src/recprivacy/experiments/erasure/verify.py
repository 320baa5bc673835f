"""Erasure verification: can anyone still tell that deleted users were in the training data?

A user asked for deletion (GDPR Art. 17); the operator retrained or ran an unlearning method. With
the model ``before`` and ``after`` the deletion, the auditor runs the strongest user-level
membership attack of the audit (:mod:`recprivacy.experiments.membership`: the shadow-trained MLP,
LiRA online / offline and RMIA on reference recommenders, the output statistics; baselines from
the users' own histories) on three groups, every list served by the after-model:

* **forgotten** users (members of ``before`` whose deletion is verified): the after-model no longer
  knows them by id, so each is served from their own history as a new user, the history ``before``
  trained on;
* **retained** members (trained both models): served by id, as members are;
* **never-members** (held out of both): served from the same share of their history as a new user.

Two comparisons, each the best attack against the strongest baseline at the Bonferroni level
(``compare.judge``): forgotten vs never-members (they must not be distinguishable) and retained vs
never-members, the positive control (if the attack cannot tell those apart either, the test has no
power). The forgotten comparison has one attack more, **history completion** (``completion_scores``):
every user in it is served from a history, so the auditor serves each from a random half of theirs
and counts the other half in the list; a model that trained on them completes it (issue 51: the one
attack that reads BPR-MF's fold-in; not for logged lists, which cannot be asked from half a history). ``metrics.verdict.judge_erasure`` turns the two words into **not erased**, **no evidence the
forgotten users are distinguishable** or **inconclusive: the attack cannot tell retained members
either**. The forgotten users are also attacked on ``before`` (served by id), as context: what there
was to erase.

Every user's scores come from one lab per seed (:class:`~.lab.MembershipLab`): the target group's
members are the retained and forgotten users with at least ``min_interactions`` interactions, its
non-members half of the eligible never-members (a quarter each are the adversary's shadow and
item-vector users, ``audit_groups.audit_partition``). An attack's score of a user does not depend
on the labels, so each comparison is the same scores restricted to its two groups. The adversary's
reference and shadow recommenders are trained as the after-model was trained when it can be
retrained (a built-in model, with the epochs its kept weights trained, ``trained_like``; a training
function), else with ``shadow_algorithm``; ``seeds`` repeats the draw of groups and references and
the numbers are combined over seeds as in the membership section.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
import torch
from pydantic import Field, PositiveInt, field_validator

from recprivacy.config import Config, StudyOptions
from recprivacy.data.interactions import Interactions
from recprivacy.errors import ConfigError
from recprivacy.experiments.audit import AuditContext, fit_list_length
from recprivacy.experiments.membership.audit import MembershipAuditOptions, adversary_trainer, target_trainer
from recprivacy.experiments.membership.audit_groups import ServedRecommender, audit_partition
from recprivacy.attacks.membership.list_statistics import orientation
from recprivacy.experiments.membership.compare import Scored, score_all
from recprivacy.experiments.membership.lab import AttackSpec, LabOptions, MembershipLab
from recprivacy.experiments.target import Target
from recprivacy.experiments.train import PreparedData

#: the comparisons, each a group of members against the never-members
COMPARISONS = ("forgotten", "retained", "before")
#: the forgotten comparison's extra attack (``completion_scores``): the share of a random half of a
#: user's history that the model serves in its top-k from the other half
COMPLETION = "history completion: held-out half of the history in the list served from the other half"
#: the adversary's recommenders whose members are served by id (as retained members are) or from
#: their history as new users (as forgotten users are)
BY_ID, BY_HISTORY = "after", "after-new"


class ErasureOptions(StudyOptions):
    """List length ``k``, item-vector size ``l`` (``n_factors``), the shortest history attacked,
    the number of ``seeds`` and of reference recommenders, and the adversary's own algorithm when
    the after-model cannot be retrained (``shadow_algorithm``, as in the membership section)."""

    k: PositiveInt = 100
    n_factors: PositiveInt = 100
    min_interactions: PositiveInt = 20
    seeds: PositiveInt = 1
    n_references: int = Field(8, ge=2)
    shadow_algorithm: str | None = None

    @field_validator("shadow_algorithm")
    @classmethod
    def _serves_new_users(cls, name: str | None) -> str | None:
        return MembershipAuditOptions(shadow_algorithm=name).shadow_algorithm


def fit_erasure_options(o: ErasureOptions, data: PreparedData) -> tuple[ErasureOptions, list[str]]:
    """``k`` fitted so that every attacked user has ``k`` unseen items (``plan.fit_list_length``)."""
    n, longest = data.full.n_items, int(data.full.user_counts().max(initial=0))
    return fit_list_length("erasure", o, "k", n - longest, f"the catalogue has {n} items and a user has {longest} of them")


class AfterServed:
    """The after-model as the lab sees it: retained members by id (``trained=True``), forgotten
    users from the history ``before`` trained on, as new users, and new users from theirs."""

    def __init__(self, after: Target, histories: Interactions, forgotten: np.ndarray) -> None:
        self.after, self.histories, self.forgotten = after, histories, forgotten

    def recommend(self, users: np.ndarray, k: int, exclude_seen: bool = True) -> torch.Tensor:
        """``[len(users), k]`` served item ids, rows in the order of ``users``."""
        users = np.asarray(users, dtype=np.int64)
        gone = np.isin(users, self.forgotten)
        out = np.empty((len(users), k), dtype=np.int64)
        out[~gone] = self.after.serve(users[~gone], k, self.histories, trained=True)
        out[gone] = self.after.serve(users[gone], k, self.histories, trained=False)
        return torch.as_tensor(out)

    def recommend_histories(self, histories: Interactions, k: int) -> torch.Tensor:
        return torch.as_tensor(self.after.serve(np.arange(histories.n_users), k, histories, trained=False))


@dataclass(frozen=True)
class SeedScores:
    """One seed: each comparison's labels and scores (``COMPARISONS``), and the groups' sizes."""

    scored: dict[str, Scored]
    sizes: dict[str, int]


def restrict(s: Scored, keep: np.ndarray) -> Scored:
    """``s`` on the users where ``keep`` holds (scores are per user, independent of the labels)."""
    return Scored(s.labels[keep], {k: v[keep] for k, v in s.attacks.items()}, {k: v[keep] for k, v in s.baselines.items()})


class HistoryServed:
    """A recommender that serves every user from their history in ``train`` as a new user, the
    way the after-model serves a forgotten user: the adversary's shadow and references of the
    forgotten comparison, so that their members are served as the forgotten users are."""

    def __init__(self, model: Any, train: Interactions) -> None:
        self.model, self.train = model, train

    def recommend(self, users: np.ndarray, k: int, exclude_seen: bool = True) -> torch.Tensor:
        return self.recommend_histories(self.train.take_users(np.asarray(users, dtype=np.int64)), k)

    def recommend_histories(self, histories: Interactions, k: int) -> torch.Tensor:
        return torch.as_tensor(np.asarray(self.model.recommend_histories(histories, k), dtype=np.int64))


Trainer = Callable[[Interactions, int], Any]


def adversary(ctx: AuditContext, o: ErasureOptions, seed: int) -> Trainer:
    """``train(interactions, index) -> recommender`` of the adversary's shadow (index -1) and
    references, each trained once (the two comparisons on the after-model share them): a built-in
    after-model's own algorithm and parameters (``trained_like``), else ``adversary_trainer``."""
    after = ctx.target
    trainer = target_trainer(after, seed) if o.shadow_algorithm is None and after.algorithm is not None \
        else adversary_trainer(ctx, o, seed)
    if trainer is None:
        raise ConfigError(f"erasure: the after-model ({after.description}) cannot be retrained, so the adversary's "
                          "references need an algorithm; expected shadow_algorithm (--shadow-model NAME)")  # fmt: skip
    trained: dict[tuple[int, int], Any] = {}

    def once(train: Interactions, index: int) -> Any:
        key = (index, len(train))
        if key not in trained:
            trained[key] = trainer(train, index)
        return trained[key]

    return once


def score_seed(config: Config, data: PreparedData, before: Target, after: Target, forgotten: np.ndarray,
               o: ErasureOptions, seed: int) -> SeedScores | None:  # fmt: skip
    """Every attack's and baseline's scores of the three groups for one ``seed`` (module
    docstring); None when fewer than 6 never-members have ``min_interactions`` interactions."""
    ctx = AuditContext(config, data, after, o)
    partition = audit_partition(ctx, o.min_interactions, seed)
    if partition is None:
        return None
    name, group, shadow_train = data.full.name, partition.target, partition.shadow.train
    fit = adversary(ctx, o, seed)
    served = AfterServed(after, data.train, forgotten)
    models = {(name, "target", BY_ID): served, (name, "target", BY_HISTORY): served,
              (name, "target", "before"): ServedRecommender(before, data.train),
              (name, "shadow", BY_ID): fit(shadow_train, -1), (name, "shadow", BY_HISTORY): HistoryServed(fit(shadow_train, -1), shadow_train)}  # fmt: skip
    trainers = {BY_ID: fit, BY_HISTORY: lambda train, index: HistoryServed(fit(train, index), train)}
    options = LabOptions(min_interactions=o.min_interactions, item_coverage="init", holdout="none", n_references=o.n_references)
    lab = MembershipLab({name: data.full}, options, seed=seed, partitions={name: partition}, models=models, trainers=trainers)

    def scores(adversary_label: str, target_label: str) -> Scored:
        return score_all(lab, AttackSpec((name, adversary_label), (name, target_label), k=o.k, n_factors=o.n_factors))

    gone = np.concatenate([np.isin(group.members, forgotten), np.zeros(len(group.nonmembers), dtype=bool)])
    never = np.concatenate([np.zeros(len(group.members), dtype=bool), np.ones(len(group.nonmembers), dtype=bool)])
    forgotten_scored, shadow_group = scores(BY_HISTORY, BY_HISTORY), partition.shadow
    if after.lists is None:  # logged lists are one list per user: they cannot be asked from half a history
        forgotten_scored.attacks[COMPLETION] = completion_scores(
            served, lab.histories(name, "target"), group.users, o.k, seed,
            (models[(name, "shadow", BY_HISTORY)], lab.histories(name, "shadow"), shadow_group.users, shadow_group.labels))  # fmt: skip
    scored = {"forgotten": restrict(forgotten_scored, gone | never),
              "retained": restrict(scores(BY_ID, BY_ID), ~gone), "before": restrict(scores(BY_ID, "before"), gone | never)}
    sizes = {"forgotten": int(gone.sum()), "retained": int((~gone & ~never).sum()), "never-members": int(never.sum()),
             "shadow": len(partition.shadow.users), "item-vector": int((partition.vector.user_counts() > 0).sum())}  # fmt: skip
    return SeedScores(scored, sizes)


def halves(histories: Interactions, users: np.ndarray, seed: int) -> tuple[Interactions, Interactions]:
    """``users``' rows of ``histories`` split at random, per user, into a query half (the
    first ``ceil(n / 2)`` of a random order of their ``n`` rows) and a hidden half; both renumbered
    ``0..len(users)-1`` in the order of ``users`` (``Interactions.take_users``)."""
    part = histories.take_users(np.asarray(users, dtype=np.int64))
    order = np.random.default_rng(seed).permutation(len(part.users))
    by_user = order[np.argsort(part.users[order], kind="stable")]  # rows grouped by user, random within a user
    rank = np.arange(len(by_user)) - np.searchsorted(part.users[by_user], part.users[by_user])
    query = np.zeros(len(part.users), dtype=bool)
    query[by_user] = rank < (np.bincount(part.users, minlength=part.n_users)[part.users[by_user]] + 1) // 2
    return part.select(query), part.select(~query)


def completion(model: Any, histories: Interactions, users: np.ndarray, k: int, seed: int) -> np.ndarray:
    """Per user, the share of a random half of their history (``halves``) that ``model`` serves in
    its top-``k`` list when it serves them from the other half as a new user."""
    query, hidden = halves(histories, users, seed)
    lists = np.asarray(model.recommend_histories(query, k), dtype=np.int64).reshape(len(users), k)
    rows = np.repeat(np.arange(len(users)), k)
    listed = sp.csr_matrix((np.ones(rows.size, dtype=bool), (rows, lists.ravel())), shape=(len(users), histories.n_items))
    found = np.asarray(listed[hidden.users, hidden.items]).ravel().astype(np.float64)
    hits = np.bincount(hidden.users, weights=found, minlength=len(users))
    return hits / np.bincount(hidden.users, minlength=len(users)).clip(1)


def completion_scores(target: Any, histories: Interactions, users: np.ndarray, k: int, seed: int,
                      shadow: tuple[Any, Interactions, np.ndarray, np.ndarray]) -> np.ndarray:  # fmt: skip
    """The history-completion attack on ``users`` (``completion`` on ``target``), pointed the way it
    separates the adversary's own shadow users (``shadow``: its model serving from histories, the
    shadow histories, users and labels), as the output statistics are (``list_statistics.orientation``).

    A model trained on a user has fitted the items of their history to one another; served from
    part of that history as a new user, it ranks the rest higher than it would for a user it never
    trained on. Every user of the forgotten comparison (forgotten users and never-members) is served
    from a history this way, so the statistic reads the serving path the after-model uses for
    them; no reference recommender is needed."""
    model, shadow_histories, shadow_users, labels = shadow
    sign = orientation(completion(model, shadow_histories, shadow_users, k, seed), labels)
    return sign * completion(target, histories, users, k, seed)
