"""User feature vectors of the membership attack (paper 001, §2.4 and §3.5 / Figure 10).

With item vectors ``V`` (one row per item), a user's interactions ``I_u`` and the ordered
recommendation list ``r_1 .. r_k``:

* **Origin** (the attack's feature; §2.4)::

      z_u = (1 / |I_u|) Σ_{i ∈ I_u} V_i  −  Σ_{j=1..k} w_j V_{r_j}

  with rank-linear weights ``w_j = (k − j + 1) / Σ_{n=1..k} n = 2(k − j + 1) / (k(k + 1))``
  (default: Figure 8c and the authors' MLP code) or uniform ``w_j = 1/k``.
* **ConcatN**: the vectors of the first ``n_int`` interactions and the first ``n_rec``
  recommendations, concatenated: Concat10 = (10, 10) → 20·l, Concat20 = (20, 20) → 40·l,
  Concat100 = (20, 100) → 120·l. "First" interactions are chronological when the data have
  timestamps, otherwise by ascending item id (the authors' file order).
* **Hadamard**: element-wise product of all interaction vectors minus that of all
  recommendation vectors, computed exactly in float64 as specified (long
  histories underflow towards 0, which is the method's weakness the paper reports).
* **Similarity**: for each recommendation ``r_j`` the mean dot product with the interaction
  vectors, ``V_{r_j} · Ū_u``; the ``k`` values form the feature.

Every function is vectorised over users (sparse products, gathers and ``einsum``).
"""

from __future__ import annotations

import numpy as np

from recprivacy.data.interactions import Interactions
from recprivacy.errors import ConfigError

WEIGHTINGS = ("rank", "uniform")
#: Concat variants: (first interactions, first recommendations)
CONCAT = {"concat10": (10, 10), "concat20": (20, 20), "concat100": (20, 100)}
FEATURE_METHODS = ("origin", *CONCAT, "hadamard", "similarity")


def recommendation_weights(k: int, weighting: str = "rank") -> np.ndarray:
    """Position weights ``w_1 .. w_k`` (sum 1): rank-linear ``2(k − j + 1)/(k(k + 1))`` or ``1/k``."""
    if weighting not in WEIGHTINGS:
        raise ConfigError(f"weighting: expected one of {list(WEIGHTINGS)}, got {weighting!r}")
    if weighting == "uniform":
        return np.full(k, 1.0 / k)
    return 2.0 * np.arange(k, 0, -1) / (k * (k + 1))


def interaction_centres(data: Interactions, users: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """``Ū_u``: mean vector of each user's interacted items, ``[len(users), l]`` (float64)."""
    rows = data.to_csr()[np.asarray(users)]
    counts = np.asarray(rows.sum(axis=1)).ravel()
    if (counts == 0).any():
        raise ConfigError(f"user {int(np.asarray(users)[np.argmin(counts)])} has no interaction in {data.name}")
    return (rows @ vectors.astype(np.float64)) / counts[:, None]


def origin_features(
    data: Interactions, users: np.ndarray, lists: np.ndarray, vectors: np.ndarray, weighting: str = "rank"
) -> np.ndarray:
    """``z_u = Ū_u − Σ_j w_j V_{r_j}`` for each user (module docstring), ``[n, l]``."""
    w = recommendation_weights(lists.shape[1], weighting)
    return interaction_centres(data, users, vectors) - np.einsum("j,njl->nl", w, vectors[lists].astype(np.float64))


def first_interactions(data: Interactions, users: np.ndarray, n: int) -> np.ndarray:
    """``[len(users), n]`` item ids of each user's first ``n`` interactions (chronological with
    timestamps, else by ascending item id)."""
    if data.timestamps is not None:
        order = data.order()
    else:
        order = np.lexsort((data.items, data.users))
    sorted_users = data.users[order]
    starts = np.searchsorted(sorted_users, np.arange(data.n_users))
    counts = data.user_counts()[np.asarray(users)]
    if (counts < n).any():
        raise ConfigError(f"concat features need {n} interactions per user; a user of {data.name} has {int(counts.min())}")
    index = starts[np.asarray(users)][:, None] + np.arange(n)
    return data.items[order][index]


def concat_features(
    data: Interactions, users: np.ndarray, lists: np.ndarray, vectors: np.ndarray, n_int: int, n_rec: int
) -> np.ndarray:
    """Vectors of the first ``n_int`` interactions and first ``n_rec`` recommendations, flattened."""
    if lists.shape[1] < n_rec:
        raise ConfigError(f"concat features need lists of at least {n_rec} items, got k={lists.shape[1]}")
    inter = vectors[first_interactions(data, users, n_int)]
    recs = vectors[lists[:, :n_rec]]
    return np.concatenate([inter.reshape(len(users), -1), recs.reshape(len(users), -1)], axis=1).astype(np.float64)


def hadamard_features(data: Interactions, users: np.ndarray, lists: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """``⊙_{i ∈ I_u} V_i − ⊙_j V_{r_j}`` in float64, ``[n, l]``."""
    rows = data.to_csr()[np.asarray(users)]
    if (np.diff(rows.indptr) == 0).any():
        raise ConfigError(f"a user has no interaction in {data.name}")
    v = vectors.astype(np.float64)
    with np.errstate(under="ignore"):
        inter = np.multiply.reduceat(v[rows.indices], rows.indptr[:-1], axis=0)
        recs = np.prod(v[lists], axis=1)
    return inter - recs


def similarity_features(data: Interactions, users: np.ndarray, lists: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """``[n, k]``: mean dot product of each recommendation with the user's interactions."""
    centres = interaction_centres(data, users, vectors)
    return np.einsum("nkl,nl->nk", vectors[lists].astype(np.float64), centres)


def user_features(
    method: str,
    data: Interactions,
    users: np.ndarray,
    lists: np.ndarray,
    vectors: np.ndarray,
    weighting: str = "rank",
) -> np.ndarray:
    """The feature matrix of ``users`` (rows aligned with ``lists``) by feature ``method``."""
    if method == "origin":
        return origin_features(data, users, lists, vectors, weighting)
    if method in CONCAT:
        return concat_features(data, users, lists, vectors, *CONCAT[method])
    if method == "hadamard":
        return hadamard_features(data, users, lists, vectors)
    if method == "similarity":
        return similarity_features(data, users, lists, vectors)
    raise ConfigError(f"feature method: expected one of {list(FEATURE_METHODS)}, got {method!r}")
