"""The ``membership`` audit section: user-level membership inference (paper 001) against the
target recommender the audit trained.

Who plays which part:

* **held-out users** (``study_options.holdout_users`` of the audit, 0.3 by default when this
  section runs) never reach the target. Those with at least ``min_interactions``
  interactions are split into thirds (seeded): the target's **non-members**, the adversary's
  **shadow** dataset and the **item-vector** dataset;
* the target's **members** are as many randomly drawn training users (with at least
  ``min_interactions`` interactions) as there are non-members;
* members see the audited target's top-k (training items excluded); non-members see its
  popular list (items by interaction count in the target's training data), what a
  recommender serves users it has no data on;
* the **shadow** recommender uses the target's algorithm and hyperparameters (Assumption I,
  the strongest black-box adversary of the paper), trained on half of the shadow users;
* the attack is the paper's MLP on Origin features (rank-linear weights, k, l), trained on
  the shadow and scored on the target's members and non-members.

The section also measures the attack when both target and shadow deploy Popularity
Randomization (an adversary who knows the defence) and reports the defence's privacy
statement. The default list length ``k`` = 100 is fitted to a small catalogue before the target
is trained: a member (of the target or of the shadow) must have ``k`` items it has not
interacted with, so ``k`` is at most the number of items less the largest user history
(``fit_membership_options``); an explicit ``k`` above that is refused. Item coverage is ``init``: the target's catalogue is fixed, so items the vector
users never touched keep random vectors (their number is reported).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import torch
from pydantic import Field, PositiveInt

from recprivacy.attacks.membership import AttackSpec, LabOptions, MembershipLab
from recprivacy.attacks.membership.partition import Partition, group_of
from recprivacy.config import StudyOptions
from recprivacy.defenses.popularity_randomization import PopularityRandomization
from recprivacy.data.interactions import Interactions
from recprivacy.experiments.audit import AuditContext, SectionWriter, fit_list_length, register_audit_section
from recprivacy.experiments.target import Target
from recprivacy.experiments.train import PreparedData
from recprivacy.experiments.membership.collect import randomizer
from recprivacy.experiments.membership.render import roc_png
from recprivacy.privacy.accounting import PrivacyStatement

ROLES = ("target non-members", "shadow", "item vectors")


class MembershipAuditOptions(StudyOptions):
    """List length ``k``, item-vector size ``l`` (``n_factors``), the minimum history of a
    user the attack considers, and the defence's ``alpha``."""

    k: PositiveInt = 100
    n_factors: PositiveInt = 100
    min_interactions: PositiveInt = 20
    defense_alpha: float = Field(0.1, gt=0, le=1)


def fit_membership_options(o: MembershipAuditOptions, data: PreparedData) -> tuple[MembershipAuditOptions, list[str]]:
    """``k`` fitted so that every possible member has ``k`` unseen items (module docstring)."""
    n, longest = data.full.n_items, int(data.full.user_counts().max(initial=0))
    reason = f"the catalogue has {n} items and a user has interacted with {longest} of them"
    return fit_list_length("membership", o, "k", n - longest, reason)


def audit_partition(ctx: AuditContext, min_interactions: int, seed: int) -> Partition | None:
    """Target / shadow / vector groups around the audited target (module docstring), or None
    when fewer than 6 held-out users have ``min_interactions`` interactions."""
    full, counts = ctx.data.full, ctx.data.full.user_counts()
    rng = np.random.default_rng(seed)
    held = rng.permutation(ctx.data.heldout_users[counts[ctx.data.heldout_users] >= min_interactions])
    if len(held) < 6:
        return None
    outsiders, shadow, vector = np.array_split(held, 3)
    trained = np.flatnonzero((ctx.data.train.user_counts() > 0) & (counts >= min_interactions))
    members = rng.choice(trained, size=min(len(outsiders), len(trained)), replace=False)
    half = len(shadow) // 2
    vector_data = full.subset_users(vector)
    coverage = {"items": full.n_items, "items_without_vector_data": int((vector_data.item_counts() == 0).sum())}
    return Partition(full, group_of("shadow", full, shadow[:half], shadow[half:]),
                     group_of("target", full, members, outsiders, train=ctx.data.train), vector_data, coverage)  # fmt: skip


class ServedRecommender:
    """A target seen through the ``recommend(users, k)`` the membership lab asks of a model:
    the lists it serves ``users`` from their ``histories``."""

    def __init__(self, target: Target, histories: Interactions) -> None:
        self.target, self.histories = target, histories

    def recommend(self, users: np.ndarray, k: int, exclude_seen: bool = True) -> torch.Tensor:
        """``[len(users), k]`` served item ids (``exclude_seen`` is the target's own business)."""
        return torch.as_tensor(self.target.serve(users, k, self.histories, trained=True))


def lab_models(ctx: AuditContext, partition: Partition, label: str) -> dict[tuple[str, str, str], Any]:
    """Target (and, for a training target, shadow) recommenders the lab uses instead of training
    a built-in ``label``; a built-in target's shadow is left to the lab (``make_model``)."""
    name = ctx.data.full.name
    if ctx.model is not None:
        return {(name, "target", label): ctx.model}
    models = {(name, "target", label): ServedRecommender(ctx.target, ctx.data.train)}
    shadow_train = partition.shadow.train
    models[(name, "shadow", label)] = ServedRecommender(ctx.target.fit(shadow_train), shadow_train)
    return models


def membership_section(ctx: AuditContext, out: SectionWriter) -> None:
    """Run the attack against the audited target, with and without the defence."""
    o: MembershipAuditOptions = ctx.options
    seed = ctx.config.seed
    partition = audit_partition(ctx, o.min_interactions, seed)
    if partition is None:
        out.write(f"Not measured: fewer than 6 users held out of the target's training have at least "
                  f"{o.min_interactions} interactions (set `study_options.holdout_users` or "
                  f"`study_options.membership.min_interactions`).")  # fmt: skip
        return
    name = ctx.data.full.name
    algorithm = ctx.config.model.name if ctx.model is not None else "target"
    params = dict(ctx.config.model.params) if ctx.model is not None else {}
    options = LabOptions(min_interactions=o.min_interactions, item_coverage="init", holdout="none",
                         model_params={algorithm: params})  # fmt: skip
    lab = MembershipLab({name: ctx.data.full}, options, seed=seed, randomize=randomizer(o.defense_alpha, ctx.config.noise),
                        partitions={name: partition}, models=lab_models(ctx, partition, algorithm))  # fmt: skip
    plain = AttackSpec((name, algorithm), (name, algorithm), k=o.k, n_factors=o.n_factors)
    defended = replace(plain, defense="both")
    outcomes = {"no defence": lab.run(plain), f"Popularity Randomization (alpha {o.defense_alpha})": lab.run(defended)}
    _write(out, o, partition, outcomes, PopularityRandomization(o.defense_alpha, seed, ctx.config.noise).privacy_statement())


def _verdict(auc: float) -> str:
    if auc >= 0.8:
        return "high: the target's lists reveal who trained it"
    if auc >= 0.6:
        return "moderate: members are distinguishable for many users"
    return "low: close to a blind guess"


def _write(out: SectionWriter, o: MembershipAuditOptions, partition: Partition, outcomes: dict,
           statement: PrivacyStatement) -> None:
    rows = []
    for label, outcome in outcomes.items():
        r = outcome.report
        key = "defended" if "Randomization" in label else "plain"
        for metric in ("auc", "balanced_accuracy", "tpr@0.1%fpr", "tpr@1%fpr", "advantage"):
            out.add_metric(f"{key}/{metric}", r[metric])
        rows.append([label, r["auc"], r["tpr@0.1%fpr"], r["tpr@1%fpr"], r["advantage"], r["balanced_accuracy"],
                     r["precision"], r["recall"]])  # fmt: skip
        attack = "user-level membership inference" + ("" if key == "plain" else f" vs {label}")
        out.add_risk(attack, "ROC AUC", r["auc"], 0.5, _verdict(r["auc"]))
        if key == "plain":
            out.add_risk(attack, "TPR at 1% FPR", r["tpr@1%fpr"], 0.01, f"{r['tpr@1%fpr'] / 0.01:.1f}x a blind guess")
    out.add_table("attack", ["defence", "ROC AUC", "TPR@0.1%FPR", "TPR@1%FPR", "advantage", "balanced accuracy",
                             "precision", "recall"], rows,
                  f"Shadow-trained MLP attack (paper 001, Assumption I), top-{o.k} lists, item vectors l = {o.n_factors}")  # fmt: skip
    target, shadow = partition.target, partition.shadow
    sizes = [["target members (trained users)", len(target.members)], ["target non-members (held out)", len(target.nonmembers)],
             ["shadow members", len(shadow.members)], ["shadow non-members", len(shadow.nonmembers)],
             ["item-vector users", int((partition.vector.user_counts() > 0).sum())],
             ["items without vector data (random vectors)", partition.coverage["items_without_vector_data"]]]  # fmt: skip
    out.add_table("groups", ["group", "users"], sizes, "Who plays which part in the attack")
    curves = {label: (outcome.labels, outcome.scores) for label, outcome in outcomes.items()}
    out.add_figure("roc", roc_png(curves), "ROC of the membership attack on log-log axes; the diagonal is a blind guess.")
    out.write(
        "An adversary who sees a user's interactions and the target's top-k list for that user guesses whether the "
        "user's data trained the target (paper 001). Members are users the target trained on; non-members are users "
        "held out of its training, who receive its popular list. The adversary trains a shadow recommender of the same "
        "algorithm on held-out users of the same dataset and an MLP on the difference between the centre of a user's "
        "items and the rank-weighted centre of the recommended items. The defended row randomizes non-members' lists "
        "(k of the k/alpha most popular items) in both target and shadow, i.e. against an adversary who knows the "
        f"defence.\n\n```\n{statement}\n```"
    )


register_audit_section("membership", membership_section, "Membership inference (paper 001)", MembershipAuditOptions,
                       order=10, heldout_users=True, fit=fit_membership_options, needs=("non_members", "shadow"))  # fmt: skip
