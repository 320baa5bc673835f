"""The generation module of UPC-SDG (paper 003, §4.2.2): a replacement for each selected item.

For a selected pair ``(u, i)`` with the user's similarity cap ``γ_u``:

* latent query (Eq. 8): ``R_ui = W_2 [p_u; q_i; γ_u] + b_2`` (one linear layer, 2d+1 → d);
* scores against every item (Eq. 9): ``h_ui = R_ui E_Iᵀ``;
* every item of ``I_u`` gets ``−inf`` ("we sample the item not consumed by the user"), in
  training and at export alike (the released code only multiplied the
  original item's score by 0);
* training (Eqs. 11-12, τ = 1 by default): a straight-through Gumbel-softmax sample
  ``y = onehot(argmax(h + g)) − sg(ỹ) + ỹ`` with ``ỹ = softmax((h + g)/τ)``,
  ``g = −log(−log μ)``, ``μ ~ U(0, 1)``: one-hot forward values, gradients of ``ỹ`` backward;
  the generated embedding is ``q_v = y E_I``;
* export: deterministic argmax of the masked scores by default (the released code), or argmax after
  seeded Gumbel noise (a sample from ``softmax(h)``).

``candidates="authors"`` in ``UPCSDG`` reproduces the released code's masking instead, for
comparison only (``zero_original``, ``authors_replacements``): the original item's score is
multiplied by 0 and nothing else is excluded, so a replacement may repeat one of the user's
items, repeat another replacement, or even be the original item when every other score is
negative; such repeats collapse into one interaction in the release.

The Gumbel noise is drawn here from an explicit ``torch.Generator`` rather than with
``torch.nn.functional.gumbel_softmax``, which only uses the global random state: every random
choice of the project takes its own seed.

``assign_replacements`` enforces at export that no user receives the same replacement twice
(so that ``|V_u| = |I_u|``): each user's selected items are processed in ascending attention order, and each
takes its best-scored candidate that is neither one of the user's items nor already given to
the user. The loop runs over *rank positions* with all users of a block at once, so its length
is the largest number of replacements of one user, never the number of users; the scores of a
block's pairs are computed once, before the loop. With candidate pools (``candidates.py``,
issue 33) the same loop runs over the columns of each user's pool instead of the catalogue.

The similarity cap is hard (issue 29): both assignments take a ``blocked`` mask of candidates
that may never be chosen (``UPCSDG`` blocks every candidate with ``f_sim > γ_u``) and apply it
*before* the argmax, so a candidate within the cap is chosen whenever one is left. A pair whose
candidates are all blocked, owned or taken gets ``NO_CANDIDATE`` (the release drops it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import numpy as np
import scipy.sparse as sp
import torch
from torch import nn

from recprivacy.defenses.upcsdg.candidates import CandidatePools
from recprivacy.metrics.ranking import mask_items


def gumbel_noise(shape: tuple[int, ...], generator: torch.Generator, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """``g = −log(−log μ)`` with ``μ ~ U(0, 1)`` kept above 0 (in-place ops: this runs on the
    whole ``pairs x items`` score matrix every step)."""
    mu = torch.rand(shape, generator=generator, dtype=dtype).clamp_(min=torch.finfo(dtype).tiny)
    return mu.log_().neg_().log_().neg_()


def gumbel_softmax(logits: torch.Tensor, tau: float, generator: torch.Generator, hard: bool = True) -> torch.Tensor:
    """Eq. 12 relaxation ``softmax((h + g)/τ)``; with ``hard`` the straight-through one-hot
    sample ``onehot(argmax(h + g)) − sg(ỹ) + ỹ`` (the argmax is the Gumbel-max draw, Eq. 11)."""
    perturbed = logits + gumbel_noise(tuple(logits.shape), generator, logits.dtype)
    soft = torch.softmax(perturbed / tau if tau != 1.0 else perturbed, dim=-1)
    if not hard:
        return soft
    one_hot = torch.zeros_like(soft).scatter_(-1, perturbed.argmax(dim=-1, keepdim=True), 1.0)
    return one_hot - soft.detach() + soft


class GenerationModule(nn.Module):
    """``R_ui = W_2 [p_u; q_i; γ_u] + b_2`` and its scores against all items (Eqs. 8-9)."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.linear = nn.Linear(2 * dim + 1, dim)

    def query(self, p_u: torch.Tensor, q_i: torch.Tensor, gamma: torch.Tensor) -> torch.Tensor:
        """Eq. 8 for aligned rows: ``[P, d]``."""
        return self.linear(torch.cat([p_u, q_i, gamma[:, None].to(p_u.dtype)], dim=-1))

    def scores(self, p_u: torch.Tensor, q_i: torch.Tensor, gamma: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
        """Eq. 9: ``h = R E_Iᵀ``, ``[P, n_items]``."""
        return self.query(p_u, q_i, gamma) @ items.T


def mask_consumed(scores: torch.Tensor, train_csr: sp.csr_matrix, pair_users: torch.Tensor) -> torch.Tensor:
    """``scores`` with each row's user's training items set to ``−inf``."""
    return mask_items(scores, train_csr, pair_users.numpy())


def zero_original(scores: torch.Tensor, originals: torch.Tensor) -> torch.Tensor:
    """The released code's mask: each row's original item's score multiplied by 0 (not −inf)."""
    return scores.index_put((torch.arange(len(originals)), originals), torch.zeros(()))


PairScores = Callable[[torch.Tensor], torch.Tensor]
"""Maps indices of selected pairs ``[R]`` to candidate scores ``[R, n_items]`` (or ``[R, C]``
over each pair's user's pool; higher = better)."""

PairMask = Callable[[torch.Tensor], torch.Tensor]
"""Maps indices of selected pairs ``[R]`` to a boolean ``[R, n_items]`` (or ``[R, C]``): True = never choose."""

NO_CANDIDATE = -1
"""Replacement of a pair with no candidate left (every item blocked, owned or already given)."""


def _pick(scores: torch.Tensor) -> torch.Tensor:
    """Row-wise argmax, ``NO_CANDIDATE`` where every score is ``−inf``."""
    choice = scores.argmax(dim=1)
    return choice.masked_fill(torch.isneginf(scores.gather(1, choice[:, None])).squeeze(1), NO_CANDIDATE)


def _blocks(starts: np.ndarray, ends: np.ndarray, max_pairs: int) -> list[slice]:
    """Consecutive runs of users (``starts``/``ends`` of their pairs) holding at most
    ``max_pairs`` pairs each (a user with more forms a block of its own)."""
    blocks, lo = [], 0
    while lo < len(starts):
        hi = max(int(np.searchsorted(ends, starts[lo] + max_pairs, side="right")), lo + 1)
        blocks.append(slice(lo, hi))
        lo = hi
    return blocks


def assign_replacements(
    pair_users: np.ndarray, train_csr: sp.csr_matrix, pair_scores: PairScores, blocked: PairMask | None = None,
    pools: CandidatePools | None = None, max_cells: int = 1 << 24,
) -> np.ndarray:
    """Replacement item of every selected pair, without duplicates within a user.

    ``pair_users [R]`` lists the user of each selected pair, grouped by user and, within a user,
    in the order replacements are chosen (ascending attention). ``pair_scores`` and ``blocked``
    are called once per block of users with the block's pair indices (a contiguous range);
    ``blocked`` candidates are masked before the pick. Candidates are the catalogue's items
    (columns = item ids; the user's training items are excluded), or with ``pools`` the
    columns of each user's pool (``candidates.CandidatePools``; its padding is excluded).
    Blocks hold at most ``max_cells`` scores. Returns item ids ``[R]``, ``NO_CANDIDATE`` where
    none is left.
    """
    pair_users = np.asarray(pair_users, dtype=np.int64)
    out = np.empty(len(pair_users), dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, pair_users[1:] != pair_users[:-1]]) if len(pair_users) else np.zeros(0, int)
    ends = np.r_[starts[1:], len(pair_users)].astype(np.int64)
    width = train_csr.shape[1] if pools is None else pools.size
    for block in _blocks(starts, ends, max(max_cells // max(width, 1), 1)):
        first, stop = starts[block], ends[block]
        users, base = pair_users[first], int(first[0])
        taken = torch.from_numpy(train_csr[users].toarray() != 0) if pools is None else ~pools.available(users)
        index = torch.arange(base, int(stop[-1]))
        scores = pair_scores(index) if blocked is None else pair_scores(index).masked_fill_(blocked(index), -torch.inf)
        for rank in range(int((stop - first).max())):
            rows = np.flatnonzero(first + rank < stop)
            pairs = first[rows] + rank
            choice = _pick(scores[torch.from_numpy(pairs - base)].masked_fill(taken[rows], -torch.inf))
            found = choice != NO_CANDIDATE
            taken[torch.from_numpy(rows)[found], choice[found]] = True
            if pools is not None:
                choice[found] = pools.items[torch.from_numpy(users[rows])[found], choice[found]]
            out[pairs] = choice.numpy()
    return out


def authors_replacements(originals: np.ndarray, pair_scores: PairScores, exclude: Literal["zero", "inf"] = "zero",
                         blocked: PairMask | None = None, block_pairs: int = 4096) -> np.ndarray:
    """Argmax replacement of every selected pair as the released code chose it: only the
    original item is masked (``exclude="zero"``: its score times 0; ``"inf"``: −inf, for the
    random and fixed-similarity ablations, whose scores are never positive or never negative),
    and repeats within a user are allowed. ``blocked`` candidates are masked after that, before
    the pick (``NO_CANDIDATE`` where every candidate is blocked)."""
    if exclude not in ("zero", "inf"):
        raise ValueError(f"exclude: expected 'zero' or 'inf', got {exclude!r}")
    originals = np.asarray(originals, dtype=np.int64)
    out = np.empty(len(originals), dtype=np.int64)
    for lo in range(0, len(originals), block_pairs):
        pairs = torch.arange(lo, min(lo + block_pairs, len(originals)))
        scores, own = pair_scores(pairs), torch.from_numpy(originals[lo : lo + len(pairs)])
        if exclude == "zero":
            scores = zero_original(scores, own)
        else:
            scores = scores.index_put((torch.arange(len(pairs)), own), torch.tensor(-torch.inf))
        if blocked is not None:
            scores = scores.masked_fill(blocked(pairs), -torch.inf)
        out[lo : lo + len(pairs)] = _pick(scores).numpy()
    return out
