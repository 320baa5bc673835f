"""What a training-time defence that trains a copy of a recommender serves through: the copy.

``TrainedCopy`` is for wrappers (``PrivateSRGNN``, ``dp_engine.PrivateRecommender``) that keep
the recommender they were given unchanged as ``wrapped`` and its trained copy as ``model_``:
scores for trained and new users come from the copy, and whether new users are served from
the recommender given.
"""

from __future__ import annotations

import torch

from recprivacy.data.interactions import Interactions
from recprivacy.models.base import Recommender


class TrainedCopy:
    """Scoring through ``model_`` (module docstring); subclasses say what ``wrapped`` is."""

    model_: Recommender

    @property
    def wrapped(self) -> Recommender:
        """The recommender given to the defence (unfitted, unchanged)."""
        raise NotImplementedError

    def _score(self, users: torch.Tensor) -> torch.Tensor:
        return self.model_._score(users)

    def _score_histories(self, histories: Interactions) -> torch.Tensor:
        return self.model_._score_histories(histories)

    @property
    def serves_new_users(self) -> bool:
        return self.wrapped.serves_new_users
