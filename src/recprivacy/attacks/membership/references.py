"""Reference ("shadow") recommenders for the calibrated attacks (:mod:`.calibrated`).

``M`` recommenders of the target's algorithm are trained, each on the histories of a random
share of a user pool (``calibrated.reference_assignment``: every pool user is IN the same number
of them). Each reference then shows every pool user a list the way the target would: IN users get
their personalised top-k (training items excluded), OUT users what the protocol gives a
non-member, their list served from their history (``served``) or the reference's popular list
(``paper``). Training is the only per-reference cost; both protocols' lists come from the same
references. Each reference is one ``Reference`` job that depends only on its index, so a caller
may run the jobs anywhere (``reference_lists(run=...)``: the membership lab fans them out through
the study kit's executor).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from recprivacy.attacks.membership.calibrated import reference_assignment
from recprivacy.attacks.membership.lists import popular_lists, popularity_ranking
from recprivacy.attacks.membership.protocols import served_lists
from recprivacy.data.interactions import Interactions

FitFn = Callable[[Interactions, int], Any]


@dataclass(frozen=True)
class ReferenceLists:
    """``lists[protocol]``: ``[M, len(users), k]`` lists the references show the pool ``users``;
    ``in_mask[u, j]``: whether user ``users[u]`` trained reference ``j``."""

    users: np.ndarray
    in_mask: np.ndarray
    lists: dict[str, np.ndarray]


def union(a: Interactions, b: Interactions) -> Interactions:
    """Rows of ``a`` then ``b`` (same id spaces, disjoint users)."""

    def both(x: np.ndarray | None, y: np.ndarray | None) -> np.ndarray | None:
        return None if x is None or y is None else np.concatenate([x, y])

    return a.with_changes(users=np.concatenate([a.users, b.users]), items=np.concatenate([a.items, b.items]),
                          ratings=both(a.ratings, b.ratings), timestamps=both(a.timestamps, b.timestamps))  # fmt: skip


def reference_lists(fit: FitFn, histories: Interactions, users: np.ndarray, n_refs: int, k: int,
                    protocols: Sequence[str], seed: int, share: float = 0.5,
                    filler: Interactions | None = None, run: RunAll | None = None) -> ReferenceLists:  # fmt: skip
    """Train ``n_refs`` references with ``fit(train, index)`` on halves of ``users``' ``histories``
    and collect the lists they show every user under each protocol (module docstring); each
    user trains a ``share`` of the references. ``filler``: interactions of other users (none of
    ``users``) every reference also trains on, so that a reference's training population is as
    large as the target's (a reference that trains on fewer users than the target memorises
    differently, which weakens LiRA and RMIA). ``run(jobs)`` runs the references' ``Reference``
    jobs and returns each one's lists in order (default: one after another here; the experiments
    layer fans them out through the study kit's executor). Each reference depends only on its
    index, so the lists are the same however the jobs run."""
    users = np.asarray(users, dtype=np.int64)
    in_mask = reference_assignment(len(users), n_refs, seed, share)
    jobs = [Reference(fit, histories, users, in_mask[:, j], j, k, tuple(protocols), filler) for j in range(n_refs)]
    lists = (run or _one_by_one)(jobs)
    return ReferenceLists(users, in_mask, {p: np.stack([one[p] for one in lists]) for p in protocols})


RunAll = Callable[[Sequence["Reference"]], list[dict[str, np.ndarray]]]


@dataclass(frozen=True)
class Reference:
    """One reference recommender to train: reference ``index``, trained by ``fit`` on the
    histories of the pool ``users`` where ``inside`` (plus ``filler``); ``train()`` gives the
    ``[len(users), k]`` lists it shows every pool user under each of ``protocols``."""

    fit: FitFn
    histories: Interactions
    users: np.ndarray
    inside: np.ndarray
    index: int
    k: int
    protocols: tuple[str, ...]
    filler: Interactions | None = None

    def train(self) -> dict[str, np.ndarray]:
        """Train the reference and collect its lists (module docstring)."""
        inside, outside = self.users[self.inside], self.users[~self.inside]
        train = self.histories.subset_users(inside)
        train = train if self.filler is None else union(train, self.filler)
        model = self.fit(train, self.index)
        personal = np.asarray(model.recommend(inside, self.k), dtype=np.int64)
        out = {}
        for p in self.protocols:
            lists = np.empty((len(self.users), self.k), dtype=np.int64)
            lists[self.inside] = personal
            lists[~self.inside] = (served_lists(model, self.histories, outside, self.k) if p == "served"
                                   else popular_lists(popularity_ranking(train), len(outside), self.k))  # fmt: skip
            out[p] = lists
        return out


def _one_by_one(jobs: Sequence[Reference]) -> list[dict[str, np.ndarray]]:
    return [job.train() for job in jobs]
