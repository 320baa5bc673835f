"""The ordered top-k lists the adversary observes (paper 001, §2.3 and §3.4), and their HR@k.

* Members get the recommender's personalised top-k with their training items excluded
  (as the authors' data show): ``Recommender.recommend``.
* Non-members get the popular list ``f_pop(I^in)``: items ordered by their number of
  *members'* training interactions (``models.Popularity`` counts), ties broken by item id;
  every non-member gets the same list, not filtered by their own history (the paper's
  ``f_pop(I^in)`` counts members' interactions only).
* HR@k (Table 2, Figure 13): the share of users whose held-out interaction is in their list
  (``metrics.ranking.ranking_metrics``' Hit@k).
"""

from __future__ import annotations

import numpy as np

from recprivacy.data.interactions import Interactions
from recprivacy.errors import ConfigError
from recprivacy.metrics.ranking import ranking_metrics
from recprivacy.models import Popularity
from recprivacy.models.base import Recommender


def check_list_length(k: int, train: Interactions) -> None:
    """``ConfigError`` unless every member of ``train`` has ``k`` unseen items to be recommended."""
    if not isinstance(k, (int, np.integer)) or k < 1:
        raise ConfigError(f"k: expected a positive list length, got {k!r}")
    if k > train.n_items:
        raise ConfigError(f"k={k} is larger than the catalogue of {train.name} ({train.n_items} items)")
    seen = int(train.user_counts().max(initial=0))
    if k > train.n_items - seen:
        raise ConfigError(
            f"k={k}: a member of {train.name} has {seen} training items, leaving {train.n_items - seen} of "
            f"{train.n_items} items to recommend; expected k <= {train.n_items - seen}"
        )


def popularity_ranking(train: Interactions) -> np.ndarray:
    """Every item, most interacted-with first in ``train`` (the members' training data), ties
    broken by item id."""
    counts = Popularity().fit(train).counts_.numpy()
    return np.lexsort((np.arange(len(counts)), -counts))


def popular_lists(ranking: np.ndarray, n_users: int, k: int) -> np.ndarray:
    """``[n_users, k]``: the top ``k`` of ``ranking`` for every user."""
    return np.tile(np.asarray(ranking[:k], dtype=np.int64), (n_users, 1))


def personalised_lists(model: Recommender, users: np.ndarray, k: int) -> np.ndarray:
    """``[len(users), k]`` top-k item ids, best first, training items excluded."""
    return model.recommend(users, k, exclude_seen=True).numpy()


def hit_rate(lists: np.ndarray, users: np.ndarray, heldout: Interactions) -> float:
    """HR@k: share of ``users`` whose held-out item appears in their row of ``lists``."""
    if len(users) == 0:
        return float("nan")
    truth = heldout.to_csr()[np.asarray(users)]
    return float(ranking_metrics(lists, truth, ks=(lists.shape[1],))[f"hit@{lists.shape[1]}"])
