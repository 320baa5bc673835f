"""Preprocessing filters: deduplication, implicit feedback, k-core and minimum-activity filters.

Every function returns a new :class:`Interactions` (id spaces unchanged; call ``reindex()`` or
:func:`preprocess` to drop emptied users/items), records one provenance step with its
parameters and what it removed, and raises ``DataError("<name>: dataset is empty after
<step>(...)")`` rather than returning an empty table. Filters count interaction *rows*, so run
:func:`deduplicate` first when a user-item pair may repeat (as :func:`preprocess` does).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from recprivacy.data.interactions import Interactions
from recprivacy.errors import ConfigError, DataError


def _keep(data: Interactions, mask: np.ndarray, step: str, **params: Any) -> Interactions:
    """Select the rows in ``mask`` (a boolean array), or fail if none is left."""
    if not mask.any():
        args = ", ".join(f"{k}={v!r}" for k, v in params.items())
        raise DataError(f"{data.name}: dataset is empty after {step}({args}); relax the filter")
    return data.select(mask, step, **params, removed=int(len(mask) - mask.sum()))


def deduplicate(data: Interactions, keep: str = "last") -> Interactions:
    """Keep one row per (user, item) pair: the ``last`` or ``first`` by timestamp (ties and
    data without timestamps: by row order). Surviving rows keep their original order."""
    if keep not in ("last", "first"):
        raise ConfigError(f"deduplicate: keep must be 'last' or 'first', got {keep!r}")
    ts = data.timestamps if data.timestamps is not None else np.zeros(len(data), dtype=np.int64)
    idx = np.lexsort((np.arange(len(data)), ts, data.items, data.users))
    u, i = data.users[idx], data.items[idx]
    new_pair = np.ones(len(idx), dtype=bool)
    new_pair[1:] = (u[1:] != u[:-1]) | (i[1:] != i[:-1])
    chosen = np.roll(new_pair, -1) if keep == "last" else new_pair
    mask = np.zeros(len(data), dtype=bool)
    mask[idx[chosen]] = True
    return _keep(data, mask, "deduplicate", keep=keep)


def to_implicit(data: Interactions, threshold: float = 4.0) -> Interactions:
    """Keep the rows with ``rating >= threshold`` as positive feedback; their ratings become 1."""
    if data.ratings is None:
        raise DataError(f"{data.name}: to_implicit(threshold={threshold}) needs ratings; this dataset has none")
    out = _keep(data, data.ratings >= threshold, "to_implicit", threshold=threshold)
    return out.with_changes(ratings=np.ones(len(out)))


def kcore(data: Interactions, user_k: int = 10, item_k: int = 10) -> Interactions:
    """Iterative k-core: drop rows of users with fewer than ``user_k`` rows or items with fewer
    than ``item_k`` rows, and repeat until every remaining user and item meets its threshold
    (removing an item can push a user below ``user_k`` and vice versa)."""
    if user_k < 0 or item_k < 0:
        raise ConfigError(f"kcore: user_k and item_k must be >= 0, got user_k={user_k}, item_k={item_k}")
    alive = np.ones(len(data), dtype=bool)
    rounds = 0
    while True:
        users, items = data.users[alive], data.items[alive]
        ok_user = np.bincount(users, minlength=data.n_users) >= user_k
        ok_item = np.bincount(items, minlength=data.n_items) >= item_k
        drop = ~(ok_user[users] & ok_item[items])
        if not drop.any():
            break
        alive[np.flatnonzero(alive)[drop]] = False
        rounds += 1
    return _keep(data, alive, "kcore", user_k=user_k, item_k=item_k, rounds=rounds)


def min_user_interactions(data: Interactions, n: int) -> Interactions:
    """Drop users with fewer than ``n`` rows (one pass; items are not filtered)."""
    counts = data.user_counts()
    return _keep(data, counts[data.users] >= n, "min_user_interactions", n=n)


def keep_recent(data: Interactions, n: int) -> Interactions:
    """Keep each user's ``n`` most recent rows (by timestamp; ties and data without timestamps:
    by row order), e.g. DIPSGNN's maximum sequence length applied after the k-core filter."""
    if n < 1:
        raise ConfigError(f"keep_recent: n must be >= 1, got {n}")
    order = data.order()
    users = data.users[order]
    from_end = data.user_counts()[users] - 1 - (np.arange(len(order)) - np.searchsorted(users, users))
    mask = np.zeros(len(data), dtype=bool)
    mask[order] = from_end < n
    return _keep(data, mask, "keep_recent", n=n)


def preprocess(
    data: Interactions,
    implicit_threshold: float | None = None,
    kcore: int | tuple[int, int] | None = None,
    min_user: int | None = None,
    dedup: bool = True,
    reindex: bool = True,
) -> Interactions:
    """The standard pipeline, in this order: :func:`deduplicate` (keep the latest), then
    :func:`to_implicit`, :func:`min_user_interactions`, :func:`kcore` (an int applies to users
    and items alike, a pair is ``(user_k, item_k)``) and ``Interactions.reindex``, each only
    when asked for."""
    out = deduplicate(data) if dedup else data
    if implicit_threshold is not None:
        out = to_implicit(out, implicit_threshold)
    if min_user is not None:
        out = min_user_interactions(out, min_user)
    if kcore is not None:
        out = _kcore_from_spec(out, kcore)
    return out.reindex() if reindex else out


def _kcore_from_spec(data: Interactions, spec: int | tuple[int, int]) -> Interactions:
    """:func:`kcore` from the pipeline's ``kcore`` argument (an int or a ``(user_k, item_k)`` pair)."""
    pair = (spec, spec) if isinstance(spec, (int, np.integer)) else tuple(spec)
    if len(pair) != 2:
        raise ConfigError(f"preprocess: kcore must be an int or a (user_k, item_k) pair, got {spec!r}")
    return kcore(data, int(pair[0]), int(pair[1]))
