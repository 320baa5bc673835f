"""What an audit examines: a :class:`Target` serves top-k lists to the audit's users.

Four ways in, one interface (``serve``):

* ``Target.from_model(obj)``: any fitted object with ``recommend(histories, k)``, or a callable
  ``(histories, k)``, returning ``k`` item ids per history (an ``[n, k]`` array or tensor, or
  one sequence per history). ``histories`` is a list with one 1-D numpy array of item ids per
  user, in the data's own (original) id space, oldest first; every audited user of a request
  comes in the one call, and the target serves each from that history alone, as a production
  system serves a new user.
  A built-in ``Recommender`` is accepted only when it can serve users it was not trained on
  (a ``recommend_histories`` method).
* ``Target.from_training(fit_fn)``: ``fit_fn(frame) -> model or callable`` where ``frame`` holds
  ``user_id, item_id`` (original ids; ``rating`` / ``timestamp`` when the data have them). The
  audit fits it on the members' training interactions, and the membership attack trains
  shadows of the same algorithm with it.
* ``Target.from_lists(path_or_frame)``: logged lists (``user_id, rank, item_id``) of members
  and of users who were not in training; no model code at all.
* ``Target.from_recommender(model)``: a built-in recommender fitted on the audit's id spaces
  (what ``recprivacy audit --model`` trains). Members are served with ``recommend(users, k)``;
  users it was not trained on only through ``recommend_histories`` when the model has one.
* ``Target.from_endpoint(url, ...)``: a live service queried over HTTP (black-box top-k
  lists, :mod:`recprivacy.experiments.endpoint`): members by their original id, users it was
  not trained on by their history, when the endpoint has a history request.

Sections ask ``serve(users, k, histories, trained)``: ``users`` are internal ids of the audit's
data, ``histories`` the interactions the target may know of them, ``trained`` whether they are
members. The result is an ``[n, k]`` int64 array of internal item ids, best first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import torch

from recprivacy.data.interactions import Interactions
from recprivacy.data.served_lists import ServedLists, read_served_lists, shown
from recprivacy.errors import ConfigError, DataError
from recprivacy.models import MODELS
from recprivacy.models.base import Recommender

if TYPE_CHECKING:
    from recprivacy.experiments.endpoint.client import EndpointClient
    from recprivacy.experiments.endpoint.spec import EndpointSpec

ServeFn = Callable[[list[list[Any]], int], Any]
FitFn = Callable[[pd.DataFrame], Any]
UNSEEN_METHOD = "recommend_histories"


@dataclass(frozen=True)
class Target:
    """The audited system (module docstring); build one with a ``from_*`` constructor.

    Attributes
    ----------
    kind:
        ``"model"``, ``"training"``, ``"lists"``, ``"recommender"`` or ``"endpoint"``.
    description:
        One line naming the target in reports.
    """

    kind: str
    description: str
    serve_fn: ServeFn | None = None
    fit_fn: FitFn | None = None
    lists: ServedLists | None = None
    recommender: Recommender | None = None
    endpoint: EndpointClient | None = None

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_model(cls, obj: Any) -> "Target":
        """A fitted model or callable that serves any user from a history of item ids.

        Parameters
        ----------
        obj:
            An object with ``recommend(histories, k)``, or a callable ``(histories, k)``;
            a built-in ``Recommender`` needs ``recommend_histories``.

        Returns
        -------
        Target
        """
        if isinstance(obj, Recommender):
            if not obj.serves_new_users:
                raise ConfigError(f"Target.from_model: {type(obj).__name__} cannot serve users it was not trained on; "
                                  f"expected a {UNSEEN_METHOD}(histories, k) method (or use Target.from_recommender)")  # fmt: skip
            return cls.from_recommender(obj)
        fn = getattr(obj, "recommend", None) if not isinstance(obj, type) else None
        if fn is None and not callable(obj):
            raise ConfigError(f"Target.from_model: {type(obj).__name__} has no recommend(histories, k) method and is "
                              "not callable; expected a fitted model or a function (histories, k) -> item ids")  # fmt: skip
        return cls("model", _name(obj), serve_fn=fn or obj)

    @classmethod
    def from_training(cls, fit_fn: FitFn) -> "Target":
        """A training function the audit fits on the members (and on shadows).

        Parameters
        ----------
        fit_fn:
            ``fit_fn(frame) -> model or callable`` (see :meth:`from_model` for what it returns).

        Returns
        -------
        Target
        """
        if not callable(fit_fn):
            raise ConfigError(f"Target.from_training: expected a function frame -> model, got {type(fit_fn).__name__}")
        return cls("training", f"{_name(fit_fn)} (trained by the audit)", fit_fn=fit_fn)

    @classmethod
    def from_lists(cls, source: str | Path | pd.DataFrame | ServedLists, user_col: str = "user_id", rank_col: str = "rank",
                   item_col: str = "item_id") -> "Target":  # fmt: skip
        """Logged served lists read from a CSV/Parquet file or a DataFrame (or already read).

        Parameters
        ----------
        source:
            File path or frame with one row per served item, or ``ServedLists``.
        user_col, rank_col, item_col:
            Column names of the user id, the rank (1 = first) and the item id.

        Returns
        -------
        Target
        """
        lists = source if isinstance(source, ServedLists) else read_served_lists(source, user_col, rank_col, item_col)
        return cls("lists", f"logged lists from {lists.source}", lists=lists)

    @classmethod
    def from_recommender(cls, model: Recommender) -> "Target":
        """A built-in recommender fitted on the audit's own id spaces.

        Parameters
        ----------
        model:
            A fitted ``recprivacy.models`` recommender.

        Returns
        -------
        Target
        """
        return cls("recommender", f"{type(model).__name__} (built-in)", recommender=model)

    @classmethod
    def from_endpoint(cls, url: str | EndpointSpec, *, cache: str | Path | None = None, **options: Any) -> "Target":
        """A live recommender queried over HTTP (needs the ``serve`` extra: httpx).

        Parameters
        ----------
        url:
            The service's base URL (``http://host:port/prefix``; request paths are appended),
            or a ready ``EndpointSpec`` (``options`` are then ignored).
        cache:
            A file keeping every answer (``endpoint.cache``), so that the same query is never
            sent twice; None keeps nothing.
        **options:
            ``user_request``, ``history_request`` (None: the service cannot serve a history),
            ``items_path``, ``auth_env`` (see ``endpoint.spec.EndpointSpec``), and ``qps``,
            ``concurrency``, ``timeout``, ``retries``, ``backoff``, ``max_wait``, ``budget``
            (``endpoint.spec.Politeness``).

        Returns
        -------
        Target
        """
        from recprivacy.experiments.endpoint import endpoint_client

        client = endpoint_client(url, cache, **options)
        return cls("endpoint", f"live endpoint {client.spec.shown}", endpoint=client)

    # ------------------------------------------------------------------ capabilities
    @property
    def algorithm(self) -> str | None:
        """Registry name of a built-in recommender target (None otherwise)."""
        if self.recommender is None:
            return None
        return next((name for name, klass in MODELS.items() if type(self.recommender) is klass), None)

    @property
    def params(self) -> dict[str, Any]:
        """Hyperparameters of a built-in recommender target, without its seed."""
        if self.recommender is None:
            return {}
        return {k: v for k, v in self.recommender.get_params().items() if k != "seed"}

    @property
    def can_retrain(self) -> bool:
        """Whether shadows of the same algorithm can be trained (training function or built-in)."""
        return self.fit_fn is not None or self.algorithm is not None

    @property
    def serves_unseen(self) -> bool:
        """Whether the target can serve users it was not trained on."""
        if self.endpoint is not None:
            return self.endpoint.serves_histories
        return self.recommender is None or self.recommender.serves_new_users

    @property
    def fitted(self) -> bool:
        """Whether the target can serve now (a training target must be fitted first)."""
        return self.kind != "training" or self.serve_fn is not None

    def fit(self, train: Interactions) -> "Target":
        """This target fitted on ``train`` when it is a training target (else itself).

        Parameters
        ----------
        train:
            Interactions it learns from (passed to ``fit_fn`` as a frame of original ids).

        Returns
        -------
        Target
        """
        if self.fit_fn is None:
            return self
        model = self.fit_fn(training_frame(train))
        served = Target.from_model(model)
        return replace(self, serve_fn=served.serve_fn, recommender=served.recommender)

    # ------------------------------------------------------------------ serving
    def serve(self, users: np.ndarray, k: int, histories: Interactions, trained: bool) -> np.ndarray:
        """``[len(users), k]`` internal item ids served to ``users``, best first.

        Parameters
        ----------
        users:
            Internal user ids of ``histories``' id space.
        k:
            List length.
        histories:
            What the target may know of the users (members' training interactions, or a
            non-member's whole history).
        trained:
            Whether the users are members (a built-in model then scores them by id).

        Returns
        -------
        numpy.ndarray
        """
        users = np.asarray(users, dtype=np.int64)
        if len(users) == 0:  # nobody to serve (np.split would hand the target one empty history)
            return np.empty((0, k), dtype=np.int64)
        if self.lists is not None:
            return self.lists.top(histories.user_ids[users], k, histories.item_ids)
        if self.recommender is not None:
            return self._serve_recommender(users, k, histories, trained)
        if self.endpoint is not None:
            return self._serve_endpoint(users, k, histories, trained)
        if self.serve_fn is None:
            raise ConfigError(f"{self.description}: the training target is not fitted; call Target.fit(train) first")
        return self._serve_histories(users, k, histories)

    def _serve_recommender(self, users: np.ndarray, k: int, histories: Interactions, trained: bool) -> np.ndarray:
        model = self.recommender
        if trained:
            return model.recommend(users, k).numpy()
        if not model.serves_new_users:
            raise ConfigError(f"{self.description} cannot serve users it was not trained on; "
                              f"expected a {UNSEEN_METHOD}(histories, k) method")  # fmt: skip
        return np.asarray(getattr(model, UNSEEN_METHOD)(histories.take_users(users), k), dtype=np.int64)

    def _serve_histories(self, users: np.ndarray, k: int, histories: Interactions) -> np.ndarray:
        """Every user's history served in one call."""
        served = self.serve_fn(item_histories(users, histories), k)
        return _internal_lists(served, users, k, histories)

    def _serve_endpoint(self, users: np.ndarray, k: int, histories: Interactions, trained: bool) -> np.ndarray:
        """Members asked for by original id, other users by history; an answer the audit cannot
        use is an ``EndpointError`` naming the endpoint."""
        from recprivacy.experiments.endpoint.client import EndpointError

        if trained:
            served = self.endpoint.by_user(histories.user_ids[users].tolist(), k)
        else:
            served = self.endpoint.by_history([h.tolist() for h in item_histories(users, histories)], k)
        try:
            return _internal_lists(served, users, k, histories)
        except DataError as err:
            raise EndpointError(f"{self.endpoint.spec.shown}: HTTP 200 but {err}; the audit stopped, results would be "
                                "partial") from None  # fmt: skip


# ---------------------------------------------------------------------------- helpers


def _name(obj: Any) -> str:
    return getattr(obj, "__qualname__", None) or type(obj).__name__


def item_histories(users: np.ndarray, histories: Interactions) -> list[np.ndarray]:
    """Each user's original item ids, oldest first (one array per user of ``users``)."""
    rows = histories.take_users(users)
    items = rows.item_ids[rows.items[rows.order()]]
    return np.split(items, np.cumsum(rows.user_counts())[:-1])


def training_frame(train: Interactions) -> pd.DataFrame:
    """``user_id, item_id`` (original ids; ``rating`` / ``timestamp`` when present) of ``train``."""
    return train.to_frame().drop(columns=["user", "item"])


def _internal_lists(served: Any, users: np.ndarray, k: int, histories: Interactions) -> np.ndarray:
    """Validate what a served function returned and map its original item ids to internal ids."""
    if isinstance(served, torch.Tensor):
        served = served.numpy()
    rows = served if isinstance(served, np.ndarray) and served.ndim == 2 else list(served)
    if len(rows) != len(users):
        raise DataError(f"the target returned {len(rows)} lists for {len(users)} histories; expected one list per history")
    table = _first_k(rows, k, users, histories)
    found = pd.Index(histories.item_ids).get_indexer(table.ravel())
    if (found < 0).any():
        raise DataError(f"the target returned item id {shown(table.ravel()[int(np.argmin(found))])!r}, which is not in the interactions")
    served = found.reshape(len(users), k).astype(np.int64)
    ordered = np.sort(served, axis=1)
    twice = ordered[:, 1:] == ordered[:, :-1]
    if twice.any():
        row, col = np.argwhere(twice)[0]
        raise DataError(f"the target returned item id {shown(histories.item_ids[ordered[row, col]])!r} twice for user "
                        f"{shown(histories.user_ids[users[row]])!r}; expected k = {k} distinct items")  # fmt: skip
    return served


def _first_k(rows: np.ndarray | list[Any], k: int, users: np.ndarray, histories: Interactions) -> np.ndarray:
    """``[len(rows), k]``: the first ``k`` original item ids of every served row (``DataError``
    naming the first user served fewer)."""
    if isinstance(rows, np.ndarray):
        lengths = np.full(len(rows), rows.shape[1], dtype=np.int64)
    else:
        lengths = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
    short = lengths < k
    if short.any():
        j = int(np.argmax(short))
        raise DataError(f"the target returned {lengths[j]} items for user {shown(histories.user_ids[users[j]])!r}; expected k = {k}")
    if isinstance(rows, np.ndarray):
        return rows[:, :k]
    flat = np.asarray(list(chain.from_iterable(rows)))
    starts = np.cumsum(lengths) - lengths
    return flat[starts[:, None] + np.arange(k)] if len(flat) else flat.reshape(0, k)
