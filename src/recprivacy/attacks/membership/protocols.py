"""What a non-member is shown: the two membership protocols every table names.

* ``served`` (the default of recprivacy): a non-member is served by the recommender itself, the
  way a deployed system serves a new user: ``Recommender.recommend_histories`` (or the audited
  ``Target``) computes their top-k from their history, with that history's items excluded.
  Members and non-members are then shown lists made the same way, from the same kind of
  history, and what separates them is what the model learned from its members.
* ``paper`` (paper 001, §2.3 and §3.4, kept for reproduction): every non-member gets the one
  popular list ``f_pop(I^in)`` of the members' training data. An attack can then tell a
  personalised list from the popular list without learning anything about memorisation.

Consistency between the two classes: a member's list comes from a model trained on the member's
interactions *minus the held-out one* (``Group.train``); a served non-member is given exactly
that share of their own history (``served_histories``). The adversary's features use every
interaction of every user in both classes, the held-out one included.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from recprivacy.attacks.membership.partition import Group
from recprivacy.data.interactions import Interactions
from recprivacy.errors import ConfigError

PROTOCOLS = ("served", "paper")


class ServesHistories(Protocol):
    """Anything that serves users it was not trained on (``Recommender`` or the audit's target)."""

    def recommend_histories(self, histories: Interactions, k: int) -> object: ...


def check_protocol(protocol: str) -> str:
    """``protocol`` when it is one of ``PROTOCOLS`` (``ConfigError`` otherwise)."""
    if protocol not in PROTOCOLS:
        raise ConfigError(f"protocol: expected one of {list(PROTOCOLS)}, got {protocol!r}")
    return protocol


def served_histories(group: Group) -> Interactions:
    """Every user's interactions in ``group`` minus their held-out one: what members trained on
    and what a served non-member is served from."""
    if group.heldout is None:
        return group.data
    n_items = group.data.n_items
    held = group.heldout.users * n_items + group.heldout.items
    return group.data.select(~np.isin(group.data.users * n_items + group.data.items, held))


def served_lists(model: ServesHistories, histories: Interactions, users: np.ndarray, k: int) -> np.ndarray:
    """``[len(users), k]``: the lists ``model`` serves ``users`` from their ``histories`` as new users."""
    served = model.recommend_histories(histories.take_users(np.asarray(users, dtype=np.int64)), k)
    return np.asarray(served, dtype=np.int64).reshape(len(users), k)
