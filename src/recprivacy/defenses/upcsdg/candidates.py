"""Candidate pools: UPC-SDG's generator scored on a per-user share of the catalogue (issue 33).

The paper scores every selected pair against every item (Eq. 9, ``h = R_ui E_Iᵀ``), so one
release costs ``selected pairs x items x d``: at ML-20M's shape (4M selected pairs at k = 0.2,
26,744 items) that is 7 TFLOP for the scores alone, and as much again for the similarity cap.
With ``UPCSDG(pool_size=C)`` the export instead takes, for each user, the argmax over a pool
of ``C`` items the user has not interacted with (decision, issue 33):

* **neighbours**, ``C − ⌊C/2⌋`` slots: the items that occur most often among the
  ``NEIGHBOURS`` nearest items (largest ``q_iᵀq_j`` on the frozen features) of the user's
  items ``I_u``, ties to the lower item id. The generator's utility term rewards large
  ``p_uᵀq_v``, and ``p_u`` was fitted to score ``I_u`` high, so the high-scoring region is
  the neighbourhood of ``I_u``;
* **sampled**, ``⌊C/2⌋`` slots: items drawn uniformly (with replacement, repeats merged) from
  the release's noise source, so that candidates far from every original remain for small
  ``γ`` (the cap masks a pair's near neighbours).

Items of ``I_u`` are removed and repeats merged; a pool can hold fewer than ``C`` items
(padding ``NO_ITEM``). The pool is shared by all of a user's selected pairs, so the scores
of a user's pairs are one ``[pairs_u, d] x [d, C]`` product (``grouped_product``) and the
export costs ``selected pairs x C x d``, linear in the data. The nearest-neighbour table costs
``items² d`` once (26,744 items: 46 GFLOP, done in chunks), independent of the users.

What this changes: the argmax is over the pool, not the catalogue, so a replacement scores at
most as high as the full-catalogue choice, and a pair whose pool holds nothing within the cap
is dropped where the catalogue might have held something. Privacy accounting is unchanged
(UPC-SDG has no formal guarantee); the recovery attack of the audit measures the release as
it is. The pool's neighbour half is a function of ``I_u``, including the replaced items, as
is the generator's query ``R_ui`` itself; the sampled half comes from the noise source
(OS entropy by default), so it cannot be replayed from the seed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import torch

NEIGHBOURS = 20
"""Nearest items kept per item for the neighbour half of a pool."""

NO_ITEM = -1
"""Padding of a pool row that holds fewer than ``C`` items."""


def nearest_items(items: torch.Tensor, k: int, chunk: int = 1024) -> np.ndarray:
    """The ``k`` items with the largest ``q_iᵀq_j`` (``j ≠ i``) of each item: ``[n_items, k]``."""
    k = min(k, len(items) - 1)
    out = np.empty((len(items), max(k, 0)), dtype=np.int64)
    with torch.no_grad():
        for lo in range(0, len(items), chunk):
            dots = items[lo : lo + chunk] @ items.T
            dots[torch.arange(len(dots)), torch.arange(lo, lo + len(dots))] = -torch.inf
            out[lo : lo + len(dots)] = torch.topk(dots, k, dim=1).indices.numpy()
    return out


def _most_frequent(keys: np.ndarray, n_items: int, limit: int) -> np.ndarray:
    """Of the occurrences ``keys = user * n_items + item``, each user's ``limit`` most frequent
    items (ties to the lower item id), as keys."""
    unique, counts = np.unique(keys, return_counts=True)
    users = unique // n_items
    order = np.lexsort((unique, -counts, users))
    rank = np.arange(len(order)) - np.searchsorted(users[order], users[order])
    return unique[order[rank < limit]]


def _rows(users: np.ndarray, items: np.ndarray, n_rows: int, width: int) -> np.ndarray:
    """``(user, item)`` pairs grouped by user as a padded table ``[n_rows, width]`` (items ascending)."""
    order = np.lexsort((items, users))
    users, items = users[order], items[order]
    position = np.arange(len(users)) - np.searchsorted(users, users)
    table = np.full((n_rows, width), NO_ITEM, dtype=np.int64)
    table[users, position] = items
    return table


@dataclass(frozen=True)
class CandidatePools:
    """Each user's candidate items, ``items [n_users, C]`` (int64, ascending, ``NO_ITEM`` padding)."""

    items: torch.Tensor

    @property
    def size(self) -> int:
        return int(self.items.shape[1])

    @classmethod
    def build(cls, csr: sp.csr_matrix, item_embeddings: torch.Tensor, size: int, rng: np.random.Generator,
              neighbours_per_item: int = NEIGHBOURS, block_users: int = 4096) -> "CandidatePools":
        """Pools of every user of the binary training matrix ``csr`` (module docstring)."""
        neighbours = nearest_items(item_embeddings, neighbours_per_item)
        n_users, n_items = csr.shape
        sampled, near = size // 2, size - size // 2
        table = np.full((n_users, size), NO_ITEM, dtype=np.int64)
        for lo in range(0, n_users, block_users):
            sub = csr[lo : lo + block_users]
            rows = np.repeat(np.arange(sub.shape[0]), np.diff(sub.indptr))
            owned = rows * n_items + sub.indices
            seen = np.repeat(rows, neighbours.shape[1]) * n_items + neighbours[sub.indices].ravel()
            seen = seen[~np.isin(seen, owned)]
            close = _most_frequent(seen, n_items, near)
            drawn = np.repeat(np.arange(sub.shape[0]), sampled) * n_items + rng.integers(0, n_items, sub.shape[0] * sampled)
            keys = np.concatenate([close, np.setdiff1d(drawn, np.concatenate([owned, close]))])
            table[lo : lo + sub.shape[0]] = _rows(keys // n_items, keys % n_items, sub.shape[0], size)
        return cls(torch.from_numpy(table))

    def available(self, users: np.ndarray | torch.Tensor) -> torch.Tensor:
        """``[len(users), C]``: True where the pool holds an item."""
        return self.items[torch.as_tensor(users)] != NO_ITEM

    def embeddings(self, users: np.ndarray | torch.Tensor, table: torch.Tensor) -> torch.Tensor:
        """Rows of ``table`` for each user's pool, ``[len(users), C, d]`` (padding gets row 0)."""
        return table[self.items[torch.as_tensor(users)].clamp_min(0)]


def grouped_product(left: torch.Tensor, seg: torch.Tensor, right: torch.Tensor, group: int = 64) -> torch.Tensor:
    """``out[p] = right[seg[p]] @ left[p]``: each row of ``left [P, d]`` against the ``C`` rows
    of its group's ``right [B, C, d]`` (``seg [P]`` non-decreasing), ``[P, C]``.

    Groups are padded to a common length in batches of ``group`` groups of similar size (sorted
    by size), so padding costs little when group sizes vary. No gradient (export only)."""
    n_groups = right.shape[0]
    counts = torch.bincount(seg, minlength=n_groups)
    first = torch.cumsum(counts, 0) - counts
    out = left.new_empty(len(left), right.shape[1])
    for batch in torch.argsort(counts).split(group):
        width = int(counts[batch].max())
        if width == 0:
            continue
        offsets = torch.arange(width)
        valid = offsets[None, :] < counts[batch, None]
        index = (first[batch, None] + offsets[None, :]).where(valid, torch.zeros((), dtype=torch.long))
        products = torch.bmm(left[index], right[batch].transpose(1, 2))
        out[index[valid]] = products[valid]
    return out
