"""The selection module of UPC-SDG (paper 003, §4.2.1): which of a user's items to replace.

For user ``u`` with training items ``I_u`` and frozen embeddings ``p_u``, ``q_i``:

* attention logit (Eq. 4): ``v_ui = hᵀ ReLU(W_1 [p_u; q_i] + b_1)`` (hidden size d, ``h``
  without bias, as the paper writes it);
* attention weight (Eq. 5): ``a_ui = exp(v_ui) / (Σ_{j∈I_u} exp(v_uj))^β``, computed in the log
  domain (``β = 1`` by default, so the weights of a user sum to 1);
* pooled user (Eq. 3): ``t_u = (1/|I_u|) Σ_i a_ui q_i`` (the ``1/|I_u|`` factor behind
  ``mean_pool``, default on);
* loss (Eq. 6, a batch mean where the paper sums): ``L_D = mean_u ‖f(t_u) − p_u‖²`` with ``f`` an MLP
  with dropout, ``Linear(d,d) → ReLU → Dropout(0.1) → Linear(d,d)`` (the paper does not give ``f``), or the
  released code's ``BatchNorm1d(d) → Linear(d,d)`` (``transform="code"``);
* selection (Eq. 7): the ``round(k_u |I_u|)`` items with the *smallest* attention. The
  denominator of Eq. 5 is shared by a user's items, so ranking by ``a_ui`` is ranking by
  ``v_ui``; ties go to the lower item id. Selection is a hard top-k with no gradient.

A batch of users is held as flat ``(user, item)`` pairs grouped by user (``PairBatch``), so
segment sums replace padding; no per-user Python loop.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import torch
from torch import nn

from recprivacy.errors import ConfigError

TRANSFORMS = ("mlp", "code")


@dataclass(frozen=True)
class PairBatch:
    """The training pairs of a batch of users: ``users [B]`` (internal ids), ``seg [P]`` (row of
    ``users`` each pair belongs to, non-decreasing), ``items [P]`` and ``sizes [B] = |I_u|``."""

    users: torch.Tensor
    seg: torch.Tensor
    items: torch.Tensor
    sizes: torch.Tensor

    @classmethod
    def from_csr(cls, csr: sp.csr_matrix, users: np.ndarray) -> "PairBatch":
        """Pairs of ``users`` (rows of the binary training matrix ``csr``), items ascending."""
        users = np.asarray(users, dtype=np.int64)
        sub = csr[users]
        sub.sort_indices()
        sizes = np.diff(sub.indptr)
        seg = np.repeat(np.arange(len(users)), sizes)
        return cls(*(torch.from_numpy(np.ascontiguousarray(a, dtype=np.int64)) for a in (users, seg, sub.indices, sizes)))

    @property
    def pair_users(self) -> torch.Tensor:
        """Internal user id of every pair."""
        return self.users[self.seg]


def replacement_counts(k: np.ndarray, sizes: np.ndarray, min_replace: int = 0) -> np.ndarray:
    """``round(k_u |I_u|)`` with halves rounded up, at least ``min(min_replace, |I_u|)``
    (``k_u`` is the replaced share). A 1e-9 guard keeps float error (0.3·5 = 1.4999…) from moving a half."""
    sizes = np.asarray(sizes, dtype=np.int64)
    counts = np.floor(np.asarray(k, dtype=np.float64) * sizes + 0.5 + 1e-9).astype(np.int64)
    return np.minimum(np.maximum(counts, np.minimum(min_replace, sizes)), sizes)


def select_lowest(scores: torch.Tensor, batch: PairBatch, counts: torch.Tensor) -> torch.Tensor:
    """Indices of the selected pairs: per user the ``counts[row]`` pairs with the lowest
    ``scores`` (ties: lower item id), listed by user and then ascending score (Eq. 7)."""
    seg = batch.seg.numpy()
    order = np.lexsort((batch.items.numpy(), scores.detach().double().numpy(), seg))
    first = np.searchsorted(seg, seg)
    rank = np.arange(len(order)) - first[order]
    return torch.from_numpy(order[rank < counts.numpy()[seg[order]]])


def segment_logsumexp(values: torch.Tensor, seg: torch.Tensor, n: int) -> torch.Tensor:
    """``log Σ exp(values)`` within each segment (``n`` segments), numerically stable."""
    top = torch.full((n,), -torch.inf, dtype=values.dtype).scatter_reduce(0, seg, values.detach(), "amax")
    sums = torch.zeros(n, dtype=values.dtype).index_add(0, seg, torch.exp(values - top[seg]))
    return torch.log(sums) + top


class SelectionModule(nn.Module):
    """Attention over a user's items and the reconstruction loss ``L_D`` (Eqs. 3-6)."""

    def __init__(self, dim: int, hidden: int | None = None, beta: float = 1.0, mean_pool: bool = True,
                 transform: str = "mlp", dropout: float = 0.1) -> None:
        super().__init__()
        if transform not in TRANSFORMS:
            raise ConfigError(f"transform: expected one of {TRANSFORMS}, got {transform!r}")
        if not 0.0 <= beta <= 1.0:
            raise ConfigError(f"beta: expected a number in [0, 1], got {beta!r}")
        hidden = hidden or dim
        self.beta = beta
        self.mean_pool = mean_pool
        self.w1 = nn.Linear(2 * dim, hidden)
        self.h = nn.Linear(hidden, 1, bias=False)
        if transform == "mlp":
            self.f = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Dropout(dropout), nn.Linear(dim, dim))
        else:
            self.f = nn.Sequential(nn.BatchNorm1d(dim), nn.Linear(dim, dim))

    def logits(self, p_u: torch.Tensor, q_i: torch.Tensor) -> torch.Tensor:
        """Eq. 4 for aligned rows ``p_u [P, d]``, ``q_i [P, d]``: ``[P]``."""
        return self.h(torch.relu(self.w1(torch.cat([p_u, q_i], dim=-1)))).squeeze(-1)

    def weights(self, logits: torch.Tensor, seg: torch.Tensor, n_users: int) -> torch.Tensor:
        """Eq. 5: ``a_ui = exp(v_ui − β log Σ_j exp v_uj)``."""
        return torch.exp(logits - self.beta * segment_logsumexp(logits, seg, n_users)[seg])

    def pooled(self, weights: torch.Tensor, q_i: torch.Tensor, batch: PairBatch) -> torch.Tensor:
        """Eq. 3: ``t_u`` for each user of the batch, ``[B, d]``."""
        total = torch.zeros(len(batch.users), q_i.shape[1], dtype=q_i.dtype).index_add(0, batch.seg, weights[:, None] * q_i)
        return total / batch.sizes[:, None].clamp_min(1).to(q_i.dtype) if self.mean_pool else total

    def forward(self, users: torch.Tensor, items: torch.Tensor, batch: PairBatch) -> tuple[torch.Tensor, torch.Tensor]:
        """``(L_D, logits [P])`` for a batch, from the frozen tables ``users``, ``items``."""
        p_u = users[batch.users]
        q_i = items[batch.items]
        logits = self.logits(p_u[batch.seg], q_i)
        t_u = self.pooled(self.weights(logits, batch.seg, len(batch.users)), q_i, batch)
        loss = (self.f(t_u) - p_u).pow(2).sum(dim=1).mean()
        return loss, logits
