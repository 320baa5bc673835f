"""Who plays which part in the ``membership`` audit section (see :mod:`.audit`): the target's
members and non-members, the adversary's shadow and item-vector users drawn from the audit's
held-out users, and the audited target seen through what the membership lab asks of a model."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import torch

from recprivacy.attacks.membership.partition import Group, Partition, group_of
from recprivacy.data.interactions import Interactions
from recprivacy.experiments.audit import AuditContext
from recprivacy.experiments.target import Target


def eligible_heldout(ctx: AuditContext, min_interactions: int) -> np.ndarray:
    """Held-out users with at least ``min_interactions`` interactions (the groups are drawn from them)."""
    return ctx.data.heldout_users[ctx.data.full.user_counts()[ctx.data.heldout_users] >= min_interactions]


def eligible_trained(ctx: AuditContext, min_interactions: int) -> np.ndarray:
    """Users the target trained on with at least ``min_interactions`` interactions (the members)."""
    return np.flatnonzero((ctx.data.train.user_counts() > 0) & (ctx.data.full.user_counts() >= min_interactions))


def audit_partition(ctx: AuditContext, min_interactions: int, seed: int, max_users: int | None = None) -> Partition | None:
    """Target / shadow / vector groups around the audited target (module docstring), or None
    when fewer than 6 held-out users have ``min_interactions`` interactions. Every trained user
    with ``min_interactions`` interactions is a member the attack scores (issue 47: the held-out
    users are split three ways, so there are fewer non-members; ROC AUC does not depend on the
    balance). ``max_users`` caps each of the member, non-member, shadow and vector groups at a
    uniform random sample of that size (issue 33: the attack's cost is set by the sample)."""
    full, counts = ctx.data.full, ctx.data.full.user_counts()
    rng = np.random.default_rng(seed)
    held = rng.permutation(eligible_heldout(ctx, min_interactions))
    if len(held) < 6:
        return None
    n_out = max(len(held) // 2, 2)
    groups = np.split(held, [n_out, n_out + (len(held) - n_out) // 2])
    outsiders, shadow, vector = (g[:max_users] for g in groups)  # a prefix of a random permutation: a uniform sample
    members = np.sort(rng.permutation(eligible_trained(ctx, min_interactions))[:max_users])
    half = len(shadow) // 2
    vector_data = full.subset_users(vector)
    coverage = {"items": full.n_items, "items_without_vector_data": int((vector_data.item_counts() == 0).sum())}
    return Partition(full, group_of("shadow", full, shadow[:half], shadow[half:]),
                     target_group(full, members, outsiders, ctx.data.train, rng), vector_data, coverage)  # fmt: skip


def target_group(full: Interactions, members: np.ndarray, outsiders: np.ndarray, train: Interactions,
                 rng: np.random.Generator) -> Group:  # fmt: skip
    """The target's members and non-members; ``heldout`` holds what the target did not see of its
    members (their validation and test rows) and the same share of each non-member's rows, drawn
    at random, so a served non-member is served from as much history as a member trained on."""
    group = group_of("target", full, members, outsiders, train=train.subset_users(members))
    data, n_items = group.data, full.n_items
    trained_rows = np.isin(data.users * n_items + data.items, train.users * n_items + train.items)
    is_member = np.isin(data.users, members)
    share = 1.0 - trained_rows[is_member].sum() / max(int(is_member.sum()), 1)
    held = np.where(is_member, ~trained_rows, rng.random(len(data)) < share)
    return replace(group, heldout=data.select(held))


class ServedRecommender:
    """A target seen through what the membership lab asks of a model: ``recommend(users, k)``
    for members (from their ``histories``) and ``recommend_histories(histories, k)`` for new users."""

    def __init__(self, target: Target, histories: Interactions) -> None:
        self.target, self.histories = target, histories

    def recommend(self, users: np.ndarray, k: int, exclude_seen: bool = True) -> torch.Tensor:
        """``[len(users), k]`` served item ids (``exclude_seen`` is the target's own business)."""
        return torch.as_tensor(self.target.serve(users, k, self.histories, trained=True))

    def recommend_histories(self, histories: Interactions, k: int) -> torch.Tensor:
        """``[histories.n_users, k]`` item ids the target serves users it was not trained on."""
        return torch.as_tensor(self.target.serve(np.arange(histories.n_users), k, histories, trained=False))
