"""Most-popular recommender: every user gets the items with the most training interactions.

This is the non-personalised baseline and the list that non-members receive in the
membership-inference study (paper 001, §1.3: ``f_pop(I^in)``, popularity computed from the
training users' interactions only).
"""

from __future__ import annotations

import torch

from recprivacy.data.interactions import Interactions
from recprivacy.models.base import Recommender


class Popularity(Recommender):
    """``score(u, i) = number of training interactions of item i`` (the same for every user,
    new users included: their history only masks items in ``recommend_histories``).

    Parameters
    ----------
    seed:
        Unused (the model is deterministic); kept for the common constructor signature.

    Attributes
    ----------
    counts_:
        ``FloatTensor[n_items]``: interaction count of each item in ``train``.
    """

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed=seed)

    def _fit(self, train: Interactions, valid: Interactions | None) -> None:
        self.counts_ = torch.as_tensor(train.item_counts(), dtype=torch.float32)

    def _score(self, users: torch.Tensor) -> torch.Tensor:
        return self.counts_.repeat(len(users), 1)

    def _score_histories(self, histories: Interactions) -> torch.Tensor:
        return self.counts_.repeat(histories.n_users, 1)
