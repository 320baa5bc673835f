"""Full-ranking recommendation metrics: Recall, Precision, Hit, NDCG and MRR at cut-off K.

For a user with relevant set ``T`` (``|T| >= 1``) and a ranked list ``r_1, r_2, ...`` (best
first), let ``h_j = 1[r_j in T]`` and ``hits@K = sum_{j<=K} h_j``. Then

* ``Recall@K    = hits@K / |T|``
* ``Precision@K = hits@K / K``
* ``Hit@K       = 1[hits@K > 0]``
* ``NDCG@K      = DCG@K / IDCG@K`` with binary gains, ``DCG@K = sum_{j<=K} h_j / log2(j + 1)``
  and ``IDCG@K = sum_{j<=min(|T|, K)} 1 / log2(j + 1)`` (the DCG of a perfect list)
* ``MRR@K       = 1 / j*`` for the rank ``j*`` of the first hit within K, else 0.

Averages are taken over users with at least one relevant item; users without any are left out
(their per-user values are NaN) and ``n_users`` counts the users averaged.

``evaluate`` implements the full-ranking protocol of the design: every item is scored, the
user's training items (and any extra ``exclude`` split, e.g. validation when testing) are masked
with ``-inf``, and the top ``max(ks)`` items are compared with the test interactions. Scoring
and ranking run in batches of users with ``torch.topk``; relevance lookup is one vectorised
``searchsorted`` over sorted ``user * n_items + item`` keys, with no per-user Python loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
import torch

from recprivacy.data.interactions import Interactions

MatrixLike = Interactions | sp.spmatrix | sp.sparray


def _as_csr(x: MatrixLike, name: str) -> sp.csr_matrix:
    """An ``Interactions`` or scipy sparse matrix as a CSR user x item matrix."""
    if isinstance(x, Interactions):
        return x.to_csr()
    if sp.issparse(x):
        return sp.csr_matrix(x)
    raise TypeError(f"{name}: expected an Interactions or a scipy sparse matrix, got {type(x).__name__}")


def _check_ks(ks: Sequence[int]) -> tuple[int, ...]:
    ks = tuple(int(k) for k in ks)
    if not ks or min(ks) < 1:
        raise ValueError(f"ks: expected one or more positive cut-offs, got {ks}")
    return ks


def _relevance_keys(truth: sp.csr_matrix) -> np.ndarray:
    """Sorted unique ``row * n_items + item`` keys of the nonzero entries of ``truth``."""
    rows = np.repeat(np.arange(truth.shape[0], dtype=np.int64), np.diff(truth.indptr))
    keys = rows * truth.shape[1] + truth.indices.astype(np.int64)
    return np.unique(keys[truth.data != 0])


def hit_matrix(topk: np.ndarray, truth: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    """``hits[i, j] = 1[topk[i, j] is relevant for row i]`` and the number of relevant items
    per row, from one ``searchsorted`` over sorted keys."""
    n, n_items = truth.shape
    keys = _relevance_keys(truth)
    n_relevant = np.bincount(keys // n_items, minlength=n) if n_items else np.zeros(n, dtype=np.int64)
    if keys.size == 0:
        return np.zeros(topk.shape, dtype=bool), n_relevant
    query = np.arange(n, dtype=np.int64)[:, None] * n_items + topk
    pos = np.minimum(np.searchsorted(keys, query), keys.size - 1)
    return keys[pos] == query, n_relevant


def _check_topk(topk: Any, truth: sp.csr_matrix, k_max: int) -> np.ndarray:
    topk = np.asarray(topk.cpu() if isinstance(topk, torch.Tensor) else topk)
    if topk.ndim != 2:
        raise ValueError(f"topk: expected a 2-D array [n_users, K] of item ids, got shape {topk.shape}")
    if topk.size and not np.issubdtype(topk.dtype, np.integer):
        raise ValueError(f"topk: expected integer item ids, got dtype {topk.dtype}")
    topk = topk.astype(np.int64, copy=False)
    n, n_items = truth.shape
    if topk.shape[0] != n:
        raise ValueError(f"topk has {topk.shape[0]} rows but truth has {n}; expected one row per user")
    if topk.shape[1] < min(k_max, n_items):
        raise ValueError(f"topk has {topk.shape[1]} columns but ks asks for {k_max}; pass at least max(ks) items")
    if topk.size and (topk.min() < 0 or topk.max() >= n_items):
        raise ValueError(f"topk: item ids must lie in [0, {n_items}) (truth has {n_items} columns)")
    if topk.shape[1] > 1:
        s = np.sort(topk, axis=1)
        dup = np.flatnonzero((s[:, 1:] == s[:, :-1]).any(axis=1))
        if dup.size:
            raise ValueError(f"topk: row {dup[0]} recommends the same item twice; expected distinct items")
    return topk


def _metrics_at_k(hits: np.ndarray, n_relevant: np.ndarray, k: int) -> dict[str, np.ndarray]:
    """Per-row metrics at cut-off ``k`` (see the module docstring for the equations)."""
    h = hits[:, :k].astype(np.float64)
    discount = 1.0 / np.log2(np.arange(2, k + 2))  # 1 / log2(rank + 1), rank = 1..k
    n_hits = h.sum(axis=1)
    ideal = np.concatenate(([0.0], np.cumsum(discount)))[np.minimum(n_relevant, k)]
    first = np.argmax(h, axis=1) if h.shape[1] else np.zeros(len(h), dtype=np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return {
            f"recall@{k}": n_hits / n_relevant,
            f"precision@{k}": n_hits / k,
            f"hit@{k}": (n_hits > 0).astype(np.float64),
            f"ndcg@{k}": (h * discount[: h.shape[1]]).sum(axis=1) / ideal,
            f"mrr@{k}": np.where(n_hits > 0, 1.0 / (first + 1), 0.0),
        }


def ranking_metrics(
    topk: np.ndarray | torch.Tensor,
    truth: sp.spmatrix | sp.sparray,
    ks: Sequence[int] = (10, 20),
    per_user: bool = False,
) -> dict[str, Any]:
    """Recall, Precision, Hit, NDCG and MRR at every cut-off in ``ks``.

    Parameters
    ----------
    topk:
        ``[n, K]`` recommended item ids per row, best first, distinct within a row;
        ``K >= max(ks)`` unless the catalogue has fewer items.
    truth:
        ``[n, n_items]`` sparse matrix; the nonzero entries of row ``i`` are row ``i``'s
        relevant items.
    ks:
        Cut-offs.
    per_user:
        Return per-row arrays instead of averages.

    Returns
    -------
    dict
        ``{"recall@K", "precision@K", "hit@K", "ndcg@K", "mrr@K"}`` for each K. Averages are
        over rows with at least one relevant item, and ``n_users`` is how many such rows there
        were. With ``per_user`` each value is a length-``n`` float array (NaN for rows without
        relevant items) and ``n_relevant`` holds ``|T|`` per row.
    """
    ks = _check_ks(ks)
    truth = _as_csr(truth, "truth")
    topk = _check_topk(topk, truth, max(ks))
    hits, n_relevant = hit_matrix(topk, truth)
    valid = n_relevant > 0
    out: dict[str, Any] = {}
    for k in ks:
        for name, values in _metrics_at_k(hits, n_relevant, k).items():
            out[name] = np.where(valid, values, np.nan) if per_user else _mean(values[valid])
    if per_user:
        out["n_relevant"] = n_relevant
    else:
        out["n_users"] = int(valid.sum())
    return out


def _mean(values: np.ndarray) -> float:
    return float(values.mean()) if values.size else float("nan")


def _exclusion_matrix(model: Any, exclude: MatrixLike | None, n_users: int, n_items: int) -> sp.csr_matrix:
    """Boolean CSR of the items to mask: the model's training items plus ``exclude``."""
    train = getattr(model, "train_csr_", None)
    if train is None:
        raise ValueError(f"model: {type(model).__name__} has no train_csr_; fit it before evaluating")
    mask = sp.csr_matrix(train) != 0
    if exclude is not None:
        extra = _as_csr(exclude, "exclude")
        if extra.shape != mask.shape:
            raise ValueError(f"exclude has shape {extra.shape} but the model was trained on {mask.shape}")
        mask = mask + (extra != 0)
    if mask.shape != (n_users, n_items):
        raise ValueError(f"test has shape {(n_users, n_items)} but the model was trained on {mask.shape}")
    return sp.csr_matrix(mask)


def _masked_topk(model: Any, users: np.ndarray, mask: sp.csr_matrix, k: int) -> torch.Tensor:
    """Top-``k`` item ids of ``model.score(users)`` with the items in ``mask`` set to -inf."""
    scores = torch.as_tensor(model.score(users))
    if scores.shape != (len(users), mask.shape[1]):
        raise ValueError(f"model.score returned shape {tuple(scores.shape)}, expected {(len(users), mask.shape[1])}")
    if not scores.is_floating_point():
        scores = scores.double()
    if torch.isnan(scores).any():
        raise ValueError("model.score returned NaN scores; expected finite numbers")
    return torch.topk(mask_items(scores, mask, users), k, dim=1).indices


def mask_items(scores: torch.Tensor, csr: sp.csr_matrix, users: np.ndarray, value: float = -float("inf")) -> torch.Tensor:
    """A copy of ``scores`` with each row's items in ``csr[users]`` set to ``value``
    (row ``r`` of ``scores`` belongs to internal user ``users[r]``)."""
    sub = csr[np.asarray(users)]
    rows = torch.as_tensor(np.repeat(np.arange(len(users)), np.diff(sub.indptr)))
    cols = torch.as_tensor(sub.indices.astype(np.int64))
    return scores.index_put((rows, cols), torch.tensor(value, dtype=scores.dtype))


def evaluate(
    model: Any,
    test: MatrixLike,
    ks: Sequence[int] = (10, 20),
    exclude: MatrixLike | None = None,
    users: np.ndarray | None = None,
    batch_size: int = 1024,
    per_user: bool = False,
) -> dict[str, Any]:
    """Full-ranking evaluation of a fitted recommender against held-out interactions.

    Parameters
    ----------
    model:
        Any object with ``score(users) -> [len(users), n_items]`` scores (higher = better) and
        ``train_csr_`` (the user x item training matrix); training items are never recommended.
    test:
        Held-out interactions (``Interactions`` or sparse matrix) in the model's id spaces.
    ks:
        Cut-offs; the top ``max(ks)`` items are ranked.
    exclude:
        Further interactions to mask, e.g. the validation split when evaluating on test.
    users:
        Internal ids of the users to evaluate; default: every user with a test interaction.
    batch_size:
        Users scored at once (memory is ``batch_size * n_items`` scores).
    per_user:
        Return per-user arrays (see ``ranking_metrics``), aligned with ``users`` (returned too).

    Returns
    -------
    dict
        ``ranking_metrics`` of the masked top-``max(ks)`` lists against ``test``.
    """
    ks = _check_ks(ks)
    truth = _as_csr(test, "test")
    mask = _exclusion_matrix(model, exclude, *truth.shape)
    if users is None:
        users = np.flatnonzero(np.diff(truth.indptr) > 0)
    users = np.asarray(users, dtype=np.int64)
    if users.size and (users.min() < 0 or users.max() >= truth.shape[0]):
        raise ValueError(f"users: internal ids must lie in [0, {truth.shape[0]})")
    if batch_size < 1:
        raise ValueError(f"batch_size: expected a positive integer, got {batch_size}")
    k = min(max(ks), truth.shape[1])
    batches = [_masked_topk(model, users[lo : lo + batch_size], mask, k) for lo in range(0, len(users), batch_size)]
    topk = torch.cat(batches).numpy() if batches else np.zeros((0, k), dtype=np.int64)
    out = ranking_metrics(topk, truth[users], ks, per_user=per_user)
    if per_user:
        out["users"] = users
    return out
