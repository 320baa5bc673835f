"""The recommender interface every model follows (scikit-learn style).

``fit(train) -> self`` learns from an ``Interactions``; ``score(users)`` returns a dense
``[len(users), n_items]`` float tensor (higher = more relevant); ``recommend(users, k)``
returns the top-k item ids, with the user's training items masked by default.
Hyperparameters are constructor arguments; learned state ends with ``_``.

Serving users not seen in training (what a deployed system does for a new user):
``score_histories(histories)`` / ``recommend_histories(histories, k)`` take an ``Interactions``
over the training item ids whose row ``i`` is the history of new user ``i`` and serve it
without changing the fitted model. Each model says how in ``_score_histories``: popularity
ignores the history, ItemCF reads it through its similarity, the factor models fold the user
in (``models.foldin``), LightGCN propagates the history, the sequence models encode it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import scipy.sparse as sp
import torch

from recprivacy.data.interactions import Interactions
from recprivacy.errors import ConfigError, DataError, NotFittedError
from recprivacy.metrics.ranking import mask_items
from recprivacy.models.examples import ExampleTask

#: the recommenders a privacy engine can train by DP-SGD (``private_task``; SRGNN through its hooks)
PRIVATE_TRAINABLE = ("BPRMF", "LightGCN", "NCF", "SASRec", "SRGNN")


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
        self._start_fit(train)
        self._fit(train, valid)
        return self

    def private_task(self, train: Interactions) -> ExampleTask:
        """This model prepared to learn from ``train`` and its training as per-example losses
        owned by users (``models.examples``), for a privacy engine to run; ``ConfigError`` for a
        model that cannot be trained that way."""
        raise ConfigError(f"{type(self).__name__} cannot be trained by DP-SGD: it is not a torch recommender "
                          f"(supported: {', '.join(PRIVATE_TRAINABLE)})")

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
        seen = self.train_csr_ if exclude_seen else None
        batches = (users[lo : lo + batch_size] for lo in range(0, len(users), batch_size))
        out = [top_k(self.score(batch), seen, batch, k) for batch in batches]
        return torch.cat(out) if out else torch.zeros((0, k), dtype=torch.long)

    @property
    def serves_new_users(self) -> bool:
        """Whether ``score_histories`` / ``recommend_histories`` can serve users not seen in
        training (the model implements ``_score_histories``)."""
        return type(self)._score_histories is not Recommender._score_histories

    def score_histories(self, histories: Interactions) -> torch.Tensor:
        """Scores of every item for users not seen in training, served from their histories.

        Parameters
        ----------
        histories:
            Interactions over the training item ids (same ``n_items``); row ``i`` (internal
            user ``i``) is the history of new user ``i``. Timestamps order the history for
            sequence models (row order when absent); ratings are read where the model was
            trained on ratings.

        Returns
        -------
        torch.Tensor
            ``FloatTensor[histories.n_users, n_items]``; the fitted model is not changed.
        """
        self._check_histories(histories)
        with torch.no_grad():
            return self._score_histories(histories)

    def recommend_histories(
        self, histories: Interactions, k: int, exclude_seen: bool = True, batch_size: int = 1024
    ) -> torch.Tensor:
        """Top-``k`` item ids for users not seen in training, best first, in user batches.

        Parameters
        ----------
        histories:
            As for ``score_histories``.
        k:
            List length.
        exclude_seen:
            Mask each user's history items.
        batch_size:
            New users served at once.

        Returns
        -------
        torch.Tensor
            ``LongTensor[histories.n_users, k]``.
        """
        self._check_histories(histories)
        seen = histories.to_csr() if exclude_seen else None
        out = [top_k(self.score_histories(batch), seen, np.arange(lo, lo + batch.n_users), k)
               for lo, batch in user_batches(histories, batch_size)]
        return torch.cat(out) if out else torch.zeros((0, k), dtype=torch.long)

    def get_params(self) -> dict[str, Any]:
        """Constructor arguments (hyperparameters), for configs and reports."""
        import inspect

        names = [p for p in inspect.signature(type(self).__init__).parameters if p != "self"]
        return {n: getattr(self, n) for n in names if hasattr(self, n)}

    def _start_fit(self, train: Interactions) -> None:
        """What every fit does first: the id spaces, the training matrix, the torch seed."""
        self.n_users_ = train.n_users
        self.n_items_ = train.n_items
        self.train_csr_ = train.to_csr()
        torch.manual_seed(self.seed)

    # ------------------------------------------------------------------ to implement
    def _fit(self, train: Interactions, valid: Interactions | None) -> None:
        raise NotImplementedError

    def _score(self, users: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def _score_histories(self, histories: Interactions) -> torch.Tensor:
        raise NotImplementedError(f"{type(self).__name__} cannot serve users not seen in training")

    def _check_histories(self, histories: Interactions) -> None:
        """NotFittedError before ``fit``; DataError unless ``histories`` uses the training item ids."""
        self._check_fitted()
        if not isinstance(histories, Interactions):
            raise DataError(f"histories: expected an Interactions, got {type(histories).__name__}")
        if histories.n_items != self.n_items_:
            raise DataError(f"histories have n_items={histories.n_items} but {type(self).__name__} was trained "
                            f"on n_items={self.n_items_}; give histories over the training item ids")

    def _check_fitted(self) -> None:
        if not hasattr(self, "n_items_"):
            raise NotFittedError(f"{type(self).__name__} is not fitted yet: call fit(train) first")


def top_k(scores: torch.Tensor, seen: sp.csr_matrix | None, rows: np.ndarray, k: int) -> torch.Tensor:
    """Top-``k`` item ids of each row of ``scores``, the items of ``seen[rows]`` masked first."""
    if seen is not None:
        scores = mask_items(scores, seen, rows)
    return torch.topk(scores, min(k, scores.shape[1]), dim=1).indices


def user_batches(data: Interactions, batch_size: int) -> Iterator[tuple[int, Interactions]]:
    """``(lo, part)`` for consecutive blocks of ``batch_size`` users, ``part`` holding the
    rows of users ``lo, lo + 1, ...`` renumbered from 0 (``Interactions.take_users``)."""
    for lo in range(0, data.n_users, batch_size):
        yield lo, data.take_users(np.arange(lo, min(lo + batch_size, data.n_users)))
