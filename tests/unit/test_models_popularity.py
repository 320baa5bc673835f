"""Popularity: scores are training interaction counts, identical for every user."""

from __future__ import annotations

import numpy as np
import torch

from recprivacy.data.interactions import Interactions
from recprivacy.models.popularity import Popularity


def _data() -> Interactions:
    # item 2: 3 rows (user 0 twice), item 0: 2 rows, item 3: 1 row, item 1: none
    return Interactions(users=[0, 0, 1, 1, 2, 0], items=[2, 0, 2, 0, 3, 2], n_users=3, n_items=4)


def test_scores_are_interaction_counts_for_every_user():
    model = Popularity().fit(_data())
    expected = torch.tensor([2.0, 0.0, 3.0, 1.0])
    assert torch.equal(model.score(np.array([0, 2])), expected.repeat(2, 1))


def test_recommend_orders_by_count_and_excludes_seen_items():
    model = Popularity().fit(_data())
    assert model.recommend(np.array([2]), k=3).tolist() == [[2, 0, 1]]  # item 3 was seen by user 2
    assert model.recommend(np.array([0]), k=2).tolist() == [[3, 1]]
    assert model.recommend(np.array([0]), k=2, exclude_seen=False).tolist() == [[2, 0]]


def test_score_is_a_copy_not_a_view_of_the_counts():
    model = Popularity().fit(_data())
    model.score(np.array([0]))[0, 0] = 99.0
    assert model.counts_[0] == 2.0
