"""Interaction-level membership inference against a target (issue 51; the attacks and baselines are
``attacks.membership.interaction``): for the members with held-out rows, which of their (user, item)
pairs trained the target, against hard non-members (their held-out items) and easy ones (items they
never had), side by side. The adversary's item popularity and similarity come from the users held out
of training; each member is served by id from their training history. With a ``trainer`` the adversary
also trains ``n_references`` recommenders of the target's kind on everything it knows except the
candidate pairs (every user's known rows: about the target's population, so they mimic its size) and
asks each for the members' top-k (the ``reference_filter`` attack). Each kind is judged by
``compare.judge`` (the best attack against the strongest baseline, Bonferroni intervals), with TPR at
1% and 5% FPR beside it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from recprivacy.attacks.membership.interaction import (KINDS, Pairs, candidate_pairs, interaction_scores, item_knowledge,
                                                       reference_expectation, without_candidates)
from recprivacy.data.interactions import Interactions
from recprivacy.errors import DataError
from recprivacy.experiments.erasure.verify import restrict
from recprivacy.experiments.membership.compare import Judgement, Scored, combined, fpr_key, judge
from recprivacy.experiments.target import Target
from recprivacy.experiments.train import PreparedData
from recprivacy.metrics.intervals import Estimate

#: the FPRs of the TPR columns (MINER reports TPR at 5% FPR)
INTERACTION_FPRS = (0.01, 0.05)
UNITS = {"hard": ("training pairs", "held-out pairs"), "easy": ("training pairs", "never-had pairs")}
#: ``trainer(interactions, index) -> recommender`` of the adversary's reference recommenders
Trainer = Callable[[Interactions, int], Any]


@dataclass(frozen=True)
class InteractionResult:
    """One kind of non-member: the first seed's scores, the judgement and each attack's and baseline's TPR at
    ``INTERACTION_FPRS`` over the seeds (``compare.combined``: one seed's Clopper-Pearson interval, several
    seeds' mean with a t interval)."""

    scored: Scored
    judgement: Judgement
    tprs: dict[str, tuple[Estimate, ...]]


class NoPairsToAttack(DataError):
    """The data hold no member with held-out rows, or no user held out of training: there is nothing
    to measure (not a bad input; any other ``DataError`` of the target's lists is one)."""


@dataclass(frozen=True)
class Candidates:
    """The attacked pairs of prepared data: the ``members`` with held-out rows and their candidate ``pairs``
    (drawn from the data and the seed alone, so that every target of the same data is attacked on the same pairs)."""

    members: np.ndarray
    pairs: Pairs


def candidates(data: PreparedData, per_user: int, seed: int) -> Candidates:
    """Up to ``per_user`` pairs of each label and kind per member with held-out rows (``NoPairsToAttack``
    when there are none, or no user held out of training to give the adversary its item knowledge)."""
    heldout = data.valid.with_changes(users=np.concatenate([data.valid.users, data.test.users]),
                                      items=np.concatenate([data.valid.items, data.test.items]), ratings=None,
                                      timestamps=None)  # fmt: skip
    members = np.flatnonzero((data.train.user_counts() > 0) & (heldout.user_counts() > 0))
    if len(members) == 0 or len(data.heldout_users) == 0:
        raise NoPairsToAttack("interaction-level membership needs members with held-out rows (test or valid) and users held "
                        "out of training (the adversary's item knowledge)")  # fmt: skip
    return Candidates(members, candidate_pairs(data.train, heldout, data.full, members, per_user, seed))


def expectation_of(cands: Candidates, data: PreparedData, trainer: Trainer | None, n_references: int) -> np.ndarray | None:
    """``reference_expectation`` of the candidate pairs from ``n_references`` references trained by
    ``trainer`` (module docstring); None without a trainer or references. It does not depend on the
    target: a matrix computes it once per way of training the references."""
    if trainer is None or n_references == 0:
        return None
    return reference_expectation(cands.pairs, reference_lists(trainer, data.full, cands.pairs, cands.members, n_references))


def scored_candidates(target: Target, data: PreparedData, cands: Candidates, k: int,
                      expectation: np.ndarray | None = None) -> dict[str, Scored]:  # fmt: skip
    """Scores of every candidate pair from the top-``k`` lists ``target`` serves the members, by kind of
    non-member; the ``reference_filter`` attack when ``expectation`` is given."""
    lists = target.serve(cands.members, k, data.train, trained=True)
    pop, s = item_knowledge(data.full.subset_users(data.heldout_users))
    attacks, baselines = interaction_scores(cands.pairs, lists, data.full.subset_users(cands.members), pop, s, expectation)
    every = Scored(cands.pairs.labels, attacks, baselines)
    return {kind: restrict(every, (cands.pairs.kind == "member") | (cands.pairs.kind == kind)) for kind in KINDS}


def interaction_scored(target: Target, data: PreparedData, k: int, per_user: int, seed: int, trainer: Trainer | None = None,
                       n_references: int = 4) -> dict[str, Scored]:  # fmt: skip
    """Scores of every candidate pair of the members with held-out rows, by kind of non-member
    (``NoPairsToAttack`` when there are none); with ``trainer``, ``n_references`` references (module docstring)."""
    cands = candidates(data, per_user, seed)
    return scored_candidates(target, data, cands, k, expectation_of(cands, data, trainer, n_references))


def reference_lists(trainer: Trainer, known: Interactions, pairs: Pairs, members: np.ndarray,
                    n_references: int) -> np.ndarray:  # fmt: skip
    """``[n_references, len(members), K]``: the ranking each reference (``trainer(train, index)``,
    trained on ``known`` without the candidate pairs) serves the ``members`` by id, known items
    excluded, ``K`` as long as every member's list can be."""
    train = without_candidates(known, pairs)
    length = train.n_items - int(train.user_counts()[members].max(initial=0))
    return np.stack([np.asarray(trainer(train, index).recommend(members, length), dtype=np.int64)
                     for index in range(n_references)])  # fmt: skip


def judge_interactions(runs: list[dict[str, Scored]]) -> dict[str, InteractionResult]:
    """Each kind judged over the seeds ``runs`` (``compare.judge``, samples in pairs), with TPRs over the seeds."""
    out = {}
    for kind in KINDS:
        scored = [r[kind] for r in runs]
        j = judge(scored)
        j = replace(j, sample=replace(j.sample, units=UNITS[kind]))
        tprs = {key: tuple(combined(scored, key, fpr_key(f)) for f in INTERACTION_FPRS)
                for key in {**scored[0].attacks, **scored[0].baselines}}  # fmt: skip
        out[kind] = InteractionResult(scored[0], j, tprs)
    return out
