"""Item-level similarity ``f_sim`` of UPC-SDG (paper 003, Eq. 2) on frozen item embeddings.

Three modes (the paper calls ``f_sim`` a cosine but writes dot products, and its denominator
``q_iᵀq_i`` need not be the largest):

* ``paper`` (default), Eq. 2 with dot products anchored on the original item ``i``::

      f_sim(q_i, q_v) = (q_iᵀq_v − m_i) / (q_iᵀq_i − m_i),   m_i = min_j q_iᵀq_j

  so ``f_sim(q_i, q_i) = 1`` and the least similar item to ``i`` scores 0. ``q_iᵀq_i`` is not
  guaranteed to be the largest dot product, so values above 1 can occur; they are reported,
  never clamped.
* ``code``, the authors' released code: min-max over the *generated* item's dot products::

      f_sim = (q_vᵀq_i − min_j q_vᵀq_j) / (max_j q_vᵀq_j − min_j q_vᵀq_j)

* ``cosine``: ``(cos(i, v) − min_j cos(i, j)) / (1 − min_j cos(i, j))``.

Denominators are guarded by ``eps``. The per-item constants (``m_i``, self dot products, the
min/max of each item's dot products) are computed once, in chunks of items, because the
embeddings are frozen. ``pairs`` is differentiable in ``q_v`` (the generator feeds
``q_v = y E`` from a straight-through Gumbel sample); ``rows`` gives ``f_sim(q_i, q_j)`` for
every candidate ``j``, used by the fixed-similarity ablation and by reports.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

SIM_MODES = ("paper", "code", "cosine")


def _chunked_extremes(a: torch.Tensor, b: torch.Tensor, chunk: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Row-wise min and max of ``a @ b.T`` without holding the full matrix."""
    mins, maxs = [], []
    for lo in range(0, len(a), chunk):
        block = a[lo : lo + chunk] @ b.T
        mins.append(block.min(dim=1).values)
        maxs.append(block.max(dim=1).values)
    return torch.cat(mins), torch.cat(maxs)


class ItemSimilarity:
    """``f_sim`` between items of a frozen embedding table ``items [n_items, d]``."""

    def __init__(self, items: torch.Tensor, mode: str = "paper", eps: float = 1e-8, chunk: int = 2048) -> None:
        if mode not in SIM_MODES:
            raise ValueError(f"sim_mode must be one of {SIM_MODES}, got {mode!r}")
        self.mode = mode
        self.eps = eps
        self.items = items.detach()
        self.unit = F.normalize(self.items, dim=1)
        with torch.no_grad():
            if mode == "cosine":
                self.low = _chunked_extremes(self.unit, self.unit, chunk)[0]
            else:
                self.low, self.high = _chunked_extremes(self.items, self.items, chunk)
                self.self_dot = (self.items * self.items).sum(dim=1)

    def pairs(self, originals: torch.Tensor, q_v: torch.Tensor) -> torch.Tensor:
        """``f_sim(q_i, q_v)`` for ``originals [P]`` (item ids) and embeddings ``q_v [P, d]``
        (differentiable in ``q_v``)."""
        q_i = self.items[originals]
        if self.mode == "paper":
            low = self.low[originals]
            return ((q_i * q_v).sum(-1) - low) / (self.self_dot[originals] - low).clamp_min(self.eps)
        if self.mode == "cosine":
            low = self.low[originals]
            return (F.cosine_similarity(q_i, q_v, dim=-1) - low) / (1.0 - low).clamp_min(self.eps)
        dots = q_v @ self.items.T
        low, high = dots.min(dim=1).values, dots.max(dim=1).values
        return ((q_i * q_v).sum(-1) - low) / (high - low).clamp_min(self.eps)

    def of_items(self, originals: torch.Tensor, replacements: torch.Tensor) -> torch.Tensor:
        """``f_sim`` between item ids (no gradient)."""
        with torch.no_grad():
            return self.pairs(originals, self.items[replacements])

    def cosine(self, originals: torch.Tensor, replacements: torch.Tensor) -> torch.Tensor:
        """Plain cosine similarity between item ids (reported beside ``f_sim``)."""
        return (self.unit[originals] * self.unit[replacements]).sum(-1)

    @property
    def table(self) -> torch.Tensor:
        """The embeddings whose dot products ``f_sim`` rescales: unit rows (cosine) or raw."""
        return self.unit if self.mode == "cosine" else self.items

    def rows(self, originals: torch.Tensor) -> torch.Tensor:
        """``f_sim(q_i, q_j)`` of each original ``i`` against every item ``j``: ``[P, n_items]``."""
        with torch.no_grad():
            return self.from_dots(originals, self.table[originals] @ self.table.T)

    def from_dots(self, originals: torch.Tensor, dots: torch.Tensor, candidates: torch.Tensor | None = None) -> torch.Tensor:
        """``f_sim(q_i, q_j)`` from the dot products ``dots [P, C]`` of ``table`` rows of each
        original ``i`` with its candidates ``j`` (``candidates [P, C]`` item ids; None: every
        item, in order)."""
        if self.mode == "code":
            low, high = (self.low, self.high) if candidates is None else (self.low[candidates], self.high[candidates])
            return (dots - low) / (high - low).clamp_min(self.eps)
        low = self.low[originals, None]
        top = 1.0 if self.mode == "cosine" else self.self_dot[originals, None]
        return (dots - low) / (top - low).clamp_min(self.eps)
