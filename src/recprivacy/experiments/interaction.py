"""Interaction-level membership inference against a target (issue 51; the attacks and baselines are
``attacks.membership.interaction``): for the members with held-out rows, which of their (user, item)
pairs trained the target, against hard non-members (their held-out items) and easy ones (items they
never had), side by side. The adversary's item popularity and similarity come from the users held out
of training; each member is served by id from their training history. Each kind is judged by
``compare.judge`` (the best attack against the strongest baseline, Bonferroni intervals), with TPR at
1% and 5% FPR beside it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from recprivacy.attacks.membership.interaction import KINDS, candidate_pairs, interaction_scores, item_knowledge
from recprivacy.errors import DataError
from recprivacy.experiments.erasure.verify import restrict
from recprivacy.experiments.membership.compare import Judgement, Scored, combined, fpr_key, judge
from recprivacy.experiments.target import Target
from recprivacy.experiments.train import PreparedData
from recprivacy.metrics.intervals import Estimate

#: the FPRs of the TPR columns (MINER reports TPR at 5% FPR)
INTERACTION_FPRS = (0.01, 0.05)
UNITS = {"hard": ("training pairs", "held-out pairs"), "easy": ("training pairs", "never-had pairs")}


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


def interaction_scored(target: Target, data: PreparedData, k: int, per_user: int, seed: int) -> dict[str, Scored]:
    """Scores of every candidate pair of the members with held-out rows, by kind of non-member
    (``NoPairsToAttack`` when there are none)."""
    heldout = data.valid.with_changes(users=np.concatenate([data.valid.users, data.test.users]),
                                      items=np.concatenate([data.valid.items, data.test.items]), ratings=None,
                                      timestamps=None)  # fmt: skip
    members = np.flatnonzero((data.train.user_counts() > 0) & (heldout.user_counts() > 0))
    if len(members) == 0 or len(data.heldout_users) == 0:
        raise NoPairsToAttack("interaction-level membership needs members with held-out rows (test or valid) and users held "
                        "out of training (the adversary's item knowledge)")  # fmt: skip
    pairs = candidate_pairs(data.train, heldout, data.full, members, per_user, seed)
    lists = target.serve(members, k, data.train, trained=True)
    pop, s = item_knowledge(data.full.subset_users(data.heldout_users))
    attacks, baselines = interaction_scores(pairs, lists, data.full.subset_users(members), pop, s)
    every = Scored(pairs.labels, attacks, baselines)
    return {kind: restrict(every, (pairs.kind == "member") | (pairs.kind == kind)) for kind in KINDS}


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
