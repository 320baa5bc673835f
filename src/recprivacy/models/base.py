"""The recommender interface every model follows (scikit-learn style).

``fit(train) -> self`` learns from an ``Interactions``; ``score(users)`` returns a dense
``[len(users), n_items]`` float tensor (higher = more relevant); ``recommend(users, k)``
returns the top-k item ids, with the user's training items masked by default.
Hyperparameters are constructor arguments; learned state ends with ``_``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from recprivacy.data.interactions import Interactions
from recprivacy.errors import NotFittedError
from recprivacy.metrics.ranking import mask_items


class Recommender:
    """Base class: subclasses implement ``_fit`` and ``_score``."""

    #: whether the model uses the order of interactions (sequential recommenders)
    sequential: bool = False

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    # ------------------------------------------------------------------ public API
    def fit(self, train: Interactions, valid: Interactions | None = None) -> "Recommender":
        """Learn from ``train``; ``valid`` (same id spaces) is used for early stopping where the
        model supports it."""
        self.n_users_ = train.n_users
        self.n_items_ = train.n_items
        self.train_csr_ = train.to_csr()
        torch.manual_seed(self.seed)
        self._fit(train, valid)
        return self

    def score(self, users: np.ndarray | torch.Tensor) -> torch.Tensor:
        """Scores of every item for each user: float tensor ``[len(users), n_items]``."""
        self._check_fitted()
        users = torch.as_tensor(np.asarray(users), dtype=torch.long)
        with torch.no_grad():
            return self._score(users)

    def recommend(
        self, users: np.ndarray | torch.Tensor, k: int, exclude_seen: bool = True, batch_size: int = 1024
    ) -> torch.Tensor:
        """Top-``k`` item ids per user (``LongTensor[len(users), k]``), best first, computed in
        batches; training items are masked when ``exclude_seen``."""
        users = np.asarray(users, dtype=np.int64)
        out = []
        for lo in range(0, len(users), batch_size):
            batch = users[lo : lo + batch_size]
            s = self.score(batch)
            if exclude_seen:
                s = mask_items(s, self.train_csr_, batch)
            out.append(torch.topk(s, min(k, s.shape[1]), dim=1).indices)
        return torch.cat(out) if out else torch.zeros((0, k), dtype=torch.long)

    def get_params(self) -> dict[str, Any]:
        """Constructor arguments (hyperparameters), for configs and reports."""
        import inspect

        names = [p for p in inspect.signature(type(self).__init__).parameters if p != "self"]
        return {n: getattr(self, n) for n in names if hasattr(self, n)}

    # ------------------------------------------------------------------ to implement
    def _fit(self, train: Interactions, valid: Interactions | None) -> None:
        raise NotImplementedError

    def _score(self, users: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def _check_fitted(self) -> None:
        if not hasattr(self, "n_items_"):
            raise NotFittedError(f"{type(self).__name__} is not fitted yet: call fit(train) first")

