"""Data partition of the user-level membership inference attack (paper 001, §2.3 and §5.2).

The dataset is cut into three disjoint parts: the **shadow** dataset (the adversary's own
recommender), the **target** dataset (the attacked recommender) and the **vector** dataset
(item representations, :mod:`.item_vectors`). Shadow and target are each split 1:1 into
members (whose interactions train the recommender) and non-members (who receive the
non-personalised popular list). Users with fewer than ``min_interactions`` (20, following NCF)
interactions are dropped.

Decisions where the paper leaves a choice open (docs/decisions.md, "Membership inference
(paper 001)"):

* ``split_mode="user"`` (default; the paper's "three disjoint subsets", of users): users with
  >= 20 interactions are assigned to
  shadow / target / vector with probability 1/3 each (``data.split.user_partition``).
  ``split_mode="record"``: every interaction goes to one of the three parts uniformly at
  random, and a user is kept only with >= 20 interactions in *each* part (what the authors'
  follow-up files suggest for ml-1m; impossible for short histories).
* Members are a seeded random half of each group, ``floor(n / 2)`` of them.
* ``item_coverage="restrict"`` (default): interactions of shadow and target users
  on items the vector part never saw are dropped, users then below 20 are dropped, and the
  catalogue is renumbered to the covered items, so every item a recommender can return has a
  learned vector. ``"init"`` keeps every item; uncovered items keep random vectors. Either way
  the counts are recorded in ``Partition.coverage``.
* One interaction per shadow/target user is held out (``holdout="random"`` or ``"latest"``)
  for HR@k (leave-one-out; the paper does not say which interaction); members' recommenders
  train on the rest, attack features use every
  interaction. ``holdout="none"`` trains on everything and skips HR.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from recprivacy.data.interactions import Interactions
from recprivacy.data.preprocess import deduplicate
from recprivacy.data.split import user_partition
from recprivacy.errors import ConfigError, DataError

SPLIT_MODES = ("user", "record")
COVERAGE_MODES = ("restrict", "init")
HOLDOUT_MODES = ("random", "latest", "none")
PARTS = ("shadow", "target", "vector")


@dataclass(frozen=True)
class Group:
    """The shadow or the target dataset with its member / non-member split.

    Attributes
    ----------
    name:
        ``"shadow"`` or ``"target"``.
    data:
        Every interaction of the group's users (global id spaces), used for attack features.
    members, nonmembers:
        Sorted internal user ids.
    train:
        The members' interactions minus the held-out ones: what the recommender learns from.
    heldout:
        One interaction per user of the group (members and non-members) for HR@k, or None.
    """

    name: str
    data: Interactions
    members: np.ndarray
    nonmembers: np.ndarray
    train: Interactions
    heldout: Interactions | None

    @property
    def users(self) -> np.ndarray:
        """Members then non-members."""
        return np.concatenate([self.members, self.nonmembers])

    @property
    def labels(self) -> np.ndarray:
        """1 for members, 0 for non-members, aligned with ``users``."""
        return np.concatenate([np.ones(len(self.members), np.int64), np.zeros(len(self.nonmembers), np.int64)])

    def subsample(self, fraction: float, seed: int) -> "Group":
        """The group with ``fraction`` of its members and of its non-members kept (stratified,
        seeded; at least one of each), as in the shadow-size ablation (paper 001 §3.5, which
        shrinks the shadow data to 90/80/70% without saying how; users are the unit here)."""
        if not 0 < fraction <= 1:
            raise ConfigError(f"shadow fraction: expected a number in (0, 1], got {fraction!r}")
        if fraction == 1:
            return self
        rng = np.random.default_rng(seed)

        def keep(users: np.ndarray) -> np.ndarray:
            n = max(1, int(np.floor(fraction * len(users) + 1e-9)))
            return np.sort(rng.choice(users, size=n, replace=False))

        members, nonmembers = keep(self.members), keep(self.nonmembers)
        users = np.concatenate([members, nonmembers])
        heldout = None if self.heldout is None else self.heldout.subset_users(users)
        return Group(self.name, self.data.subset_users(users), members, nonmembers,
                     self.train.subset_users(members), heldout)


@dataclass(frozen=True)
class Partition:
    """Shadow and target groups, the vector dataset, and what filtering removed."""

    data: Interactions
    shadow: Group
    target: Group
    vector: Interactions
    coverage: dict[str, Any] = field(default_factory=dict)

    def group(self, role: str) -> Group:
        if role not in ("shadow", "target"):
            raise ValueError(f"role must be 'shadow' or 'target', got {role!r}")
        return self.shadow if role == "shadow" else self.target


def partition_dataset(
    data: Interactions,
    min_interactions: int = 20,
    split_mode: str = "user",
    item_coverage: str = "restrict",
    holdout: str = "random",
    seed: int = 0,
) -> Partition:
    """Shadow / target / vector parts with members and non-members (see module docstring).

    Raises ``DataError`` when too few users have ``min_interactions`` interactions to give each
    of shadow and target at least one member and one non-member.
    """
    _check_choice("split_mode", split_mode, SPLIT_MODES)
    _check_choice("item_coverage", item_coverage, COVERAGE_MODES)
    _check_choice("holdout", holdout, HOLDOUT_MODES)
    if not isinstance(min_interactions, (int, np.integer)) or min_interactions < 1:
        raise ConfigError(f"min_interactions: expected a positive integer, got {min_interactions!r}")
    data = deduplicate(data)
    _require_long_histories(data, min_interactions)
    split_seed, group_seed = np.random.SeedSequence(seed).generate_state(2)
    parts = (_split_users if split_mode == "user" else _split_records)(data, min_interactions, int(split_seed))
    coverage = {"items": int(data.n_items), "items_in_vector_part": int((parts["vector"].item_counts() > 0).sum())}
    if item_coverage == "restrict":
        covered = parts["vector"].item_counts() > 0
        parts, dropped = _restrict_to_covered(parts, covered, min_interactions)
        coverage.update(dropped)
        data = _keep_items(data, covered)
    coverage["catalogue"] = int(parts["vector"].n_items)
    rng = np.random.default_rng(group_seed)
    groups = {name: _make_group(name, parts[name], holdout, rng) for name in ("shadow", "target")}
    return Partition(data, groups["shadow"], groups["target"], parts["vector"], coverage)


# ---------------------------------------------------------------------------- splitting


def _check_choice(name: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ConfigError(f"{name}: expected one of {list(allowed)}, got {value!r}")


def _require_long_histories(data: Interactions, n: int) -> None:
    counts = data.user_counts()
    eligible = int((counts >= n).sum())
    if eligible < 6:
        raise DataError(
            f"{data.name}: {eligible} users have at least {n} interactions (the longest history has "
            f"{int(counts.max(initial=0))}); membership inference needs at least 6 such users "
            "(a member and a non-member in each of shadow and target, plus the vector part)"
        )


def _split_users(data: Interactions, n: int, seed: int) -> dict[str, Interactions]:
    """User-disjoint thirds of the users with >= n interactions."""
    groups = user_partition(data, {p: 1 / 3 for p in PARTS}, seed=seed, min_interactions=n)
    return {p: data.subset_users(groups[p]) for p in PARTS}


def _split_records(data: Interactions, n: int, seed: int) -> dict[str, Interactions]:
    """Each interaction to a uniformly random part; users need >= n rows in every part."""
    part = np.random.default_rng(seed).integers(0, len(PARTS), size=len(data))
    counts = np.stack([np.bincount(data.users[part == j], minlength=data.n_users) for j in range(len(PARTS))])
    kept = (counts >= n).all(axis=0)
    if kept.sum() < 4:
        raise DataError(
            f"{data.name}: split_mode='record' keeps {int(kept.sum())} users with >= {n} interactions in each "
            "of the three parts; need at least 4 (use split_mode='user' for short histories)"
        )
    return {p: data.select((part == j) & kept[data.users]) for j, p in enumerate(PARTS)}


def _restrict_to_covered(
    parts: dict[str, Interactions], covered: np.ndarray, n: int
) -> tuple[dict[str, Interactions], dict[str, int]]:
    """Drop shadow/target rows on items not ``covered`` by the vector part, then users below
    ``n``, and renumber every part's items to the covered ones."""
    out, dropped = {}, {"rows_on_uncovered_items": 0, "users_below_min_after_restrict": 0}
    for name in ("shadow", "target"):
        part = parts[name]
        on_covered = covered[part.items]
        before = part.user_counts() >= n
        counts = np.bincount(part.users[on_covered], minlength=part.n_users)
        keep = on_covered & (counts[part.users] >= n)
        dropped["rows_on_uncovered_items"] += int((~on_covered).sum())
        dropped["users_below_min_after_restrict"] += int((before & (counts < n)).sum())
        out[name] = part.select(keep)
    out["vector"] = parts["vector"]
    return {name: _keep_items(part, covered) for name, part in out.items()}, dropped


def _keep_items(data: Interactions, keep: np.ndarray) -> Interactions:
    """Rows on the items in the boolean mask ``keep``, with items renumbered to ``0..keep.sum()-1``."""
    index = np.full(data.n_items, -1, dtype=np.int64)
    index[keep] = np.arange(int(keep.sum()))
    rows = data.select(keep[data.items])
    features = None if data.item_features is None else data.item_features.iloc[np.flatnonzero(keep)].reset_index(drop=True)
    return rows.with_changes(
        items=index[rows.items], n_items=int(keep.sum()), item_ids=data.item_ids[keep], item_features=features
    ).with_step("restrict_items", kept=int(keep.sum()), of=int(data.n_items))


def group_of(name: str, data: Interactions, members: np.ndarray, nonmembers: np.ndarray,
             train: Interactions | None = None) -> Group:  # fmt: skip
    """A group with given members and non-members (no hold-out); ``train`` defaults to every
    interaction of the members in ``data``."""
    members, nonmembers = np.sort(np.asarray(members, dtype=np.int64)), np.sort(np.asarray(nonmembers, dtype=np.int64))
    if not len(members) or not len(nonmembers):
        raise DataError(f"{data.name}: the {name} group needs at least one member and one non-member")
    users = np.concatenate([members, nonmembers])
    return Group(name, data.subset_users(users), members, nonmembers,
                 data.subset_users(members) if train is None else train, None)  # fmt: skip


def _make_group(name: str, data: Interactions, holdout: str, rng: np.random.Generator) -> Group:
    """Seeded 1:1 member / non-member split (``floor(n / 2)`` members) and the hold-out."""
    users = np.flatnonzero(data.user_counts() > 0)
    if len(users) < 2:
        raise DataError(f"{data.name}: the {name} part has {len(users)} user(s) left; need a member and a non-member")
    shuffled = rng.permutation(users)
    members, nonmembers = np.sort(shuffled[: len(users) // 2]), np.sort(shuffled[len(users) // 2 :])
    if holdout == "none":
        return Group(name, data, members, nonmembers, data.subset_users(members), None)
    is_heldout = holdout_rows(data, holdout, rng)
    rest, heldout = data.select(~is_heldout), data.select(is_heldout, "holdout", how=holdout)
    return Group(name, data, members, nonmembers, rest.subset_users(members), heldout)


def holdout_rows(data: Interactions, how: str, rng: np.random.Generator) -> np.ndarray:
    """Boolean mask with one row per user: the latest (``how="latest"``, by timestamp, then row
    order) or a uniformly random one (``how="random"``)."""
    if how == "latest":
        order = data.order()
    else:
        order = np.lexsort((rng.random(len(data)), data.users))
    users = data.users[order]
    last = np.ones(len(order), dtype=bool)
    last[:-1] = users[1:] != users[:-1]
    mask = np.zeros(len(data), dtype=bool)
    mask[order[last]] = True
    return mask
