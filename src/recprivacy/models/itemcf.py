"""Item-based collaborative filtering (Sarwar et al., WWW 2001), as used by paper 001 (§3.1).

On the binary user x item matrix ``R`` with ``N(i)`` the users of item ``i``:

* similarity (cosine on binary item columns), diagonal removed::

      sim(i, j) = |N(i) ∩ N(j)| / sqrt(|N(i)| · |N(j)|)

* optional neighbour truncation: for each target item ``j`` only its ``n_neighbors`` most
  similar items ``i`` are kept (Sarwar's "k most similar items"), which makes ``W`` sparse;
* score: ``score(u, j) = Σ_{i ∈ N(u)} W[i, j]``, i.e. ``R_u · W``; a user not seen in
  training is scored the same way from the history given to ``score_histories``.

Ties, including the unscored items of users with short histories, are broken towards the more
popular item, which pads a short list with popular items (paper 001 does not say how; its
authors' files show padded lists).
Everything is scipy.sparse: ``RᵀR`` once, a per-row top-k over dense chunks of rows
(``torch.topk``), and sparse products at scoring time.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import torch

from recprivacy.data.interactions import Interactions
from recprivacy.errors import ConfigError
from recprivacy.models.base import Recommender

#: weight of the popularity tie-break: far below any similarity difference that matters
TIE_BREAK = 1e-6

SIMILARITIES = ("cosine",)


def cosine_similarity(csr: sp.csr_matrix) -> sp.csr_matrix:
    """Item x item binary cosine similarity with a zero diagonal (float32 CSR, symmetric)."""
    binary = csr.astype(bool).astype(np.float32)
    sim = (binary.T.tocsr() @ binary).tocsr()  # co-occurrence counts, exact in float32
    degree = sim.diagonal()
    inv = np.zeros_like(degree)
    np.divide(1.0, np.sqrt(degree), out=inv, where=degree > 0)
    rows = np.repeat(np.arange(sim.shape[0]), np.diff(sim.indptr))
    sim.data *= inv[rows] * inv[sim.indices]
    sim.data[rows == sim.indices] = 0.0
    sim.eliminate_zeros()
    return sim


def top_k_per_row(m: sp.csr_matrix, k: int, chunk_cells: int = 1 << 24) -> sp.csr_matrix:
    """Keep the ``k`` largest entries of each row, dropping zeros (float32 CSR).

    Rows are densified in chunks of about ``chunk_cells`` cells and cut with ``torch.topk``
    (ties are resolved deterministically by ``topk``, not by item id).
    """
    m = m.tocsr()
    n_rows, n_cols = m.shape
    k = min(k, n_cols)
    step = max(1, chunk_cells // max(n_cols, 1))
    rows, cols, vals = [], [], []
    for lo in range(0, n_rows, step):
        dense = torch.from_numpy(m[lo : lo + step].toarray().astype(np.float32))
        values, index = torch.topk(dense, k, dim=1)
        keep = values != 0
        rows.append(np.repeat(np.arange(lo, lo + len(dense)), keep.sum(1).numpy()))
        cols.append(index[keep].numpy())
        vals.append(values[keep].numpy())
    if not rows:
        return sp.csr_matrix(m.shape, dtype=np.float32)
    return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=m.shape)


class ItemCF(Recommender):
    """Item-based CF with binary cosine similarity.

    Parameters
    ----------
    n_neighbors:
        Keep, for each target item, only this many most similar items (``None``: all).
    similarity:
        ``"cosine"`` (binary cosine, the only measure the papers use).
    seed:
        Unused (the model is deterministic).

    Attributes
    ----------
    weights_:
        ``scipy.sparse.csr_matrix[n_items, n_items]``: ``W[i, j]`` = weight of history item
        ``i`` when scoring item ``j`` (the similarity after truncation).
    popularity_:
        ``FloatTensor[n_items]``: training interaction counts, used to break ties.
    """

    def __init__(self, n_neighbors: int | None = None, similarity: str = "cosine", seed: int = 0) -> None:
        super().__init__(seed=seed)
        if n_neighbors is not None and (not isinstance(n_neighbors, int) or n_neighbors < 1):
            raise ConfigError(f"ItemCF.n_neighbors: expected a positive integer or None, got {n_neighbors!r}")
        if similarity not in SIMILARITIES:
            raise ConfigError(f"ItemCF.similarity: expected one of {list(SIMILARITIES)}, got {similarity!r}")
        self.n_neighbors = n_neighbors
        self.similarity = similarity

    def _fit(self, train: Interactions, valid: Interactions | None) -> None:
        sim = cosine_similarity(self.train_csr_)  # symmetric: W = sim
        if self.n_neighbors is not None:
            sim = top_k_per_row(sim, self.n_neighbors).T.tocsr()  # row j of top_k: neighbours of target j
        self.weights_ = sim
        self.popularity_ = torch.as_tensor(train.item_counts(), dtype=torch.float32)

    def _score(self, users: torch.Tensor) -> torch.Tensor:
        return self._score_rows(self.train_csr_[users.numpy()])

    def _score_histories(self, histories: Interactions) -> torch.Tensor:
        return self._score_rows(histories.to_csr())

    def _score_rows(self, history: sp.csr_matrix) -> torch.Tensor:
        """``R_u · W`` plus the popularity tie-break for binary history rows ``R_u``."""
        scores = torch.from_numpy((history.astype(np.float32) @ self.weights_).toarray())
        tie_break = TIE_BREAK * self.popularity_ / (self.popularity_.max() + 1.0)
        return scores + tie_break
