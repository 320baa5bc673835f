"""Fold-in: the parameters of users not seen in training, fitted with everything else frozen.

A deployed recommender serves a new user from the user's history without retraining: the item
side (and any network) stays as trained, and only the new user's own parameters are solved
for, on the model's own training loss restricted to them. Two solvers serve every factor model:

* ``ridge_fold_in`` (squared loss, LFM): the exact minimiser, in closed form, of the training
  objective restricted to ``p_u``, in expectation over the sampled negatives::

      J(p) = Σ_{i∈S} (r_i − pᵀq_i)² + ρ n Σ_{j∉S} (pᵀq_j)² / (m − n) + λ n (1 + ρ) ‖p‖²
      p_u  = (Q_SᵀQ_S + ρ n C_S + λ n (1 + ρ) I)⁻¹ Q_Sᵀ r_S,   C_S = (QᵀQ − Q_SᵀQ_S) / (m − n)

  for history ``S`` of ``n`` items out of ``m``, targets ``r_S`` (1 for implicit feedback,
  ratings otherwise), ``ρ`` negatives per positive (0 for ratings) and the per-sample L2
  coefficient ``λ`` of training (each sample of the user adds ``λ ‖p_u‖²``). With ``ρ = 0``
  this is the ridge solve ``(Q_SᵀQ_S + λ n I)⁻¹ Q_Sᵀ r_S``. Solved for all users at once by
  a batched LU solve; singular systems get the minimum-norm least-squares solution (so an
  empty history gives ``p = 0``).
* ``gradient_fold_in`` (BPR-MF, NCF): full-batch Adam steps on the summed training loss of the
  new rows, starting from zero, with fresh uniform negatives (outside each user's history)
  every step. The loss is a sum over users, so each user's rows move independently. A loss may
  provide its own gradient (``AnalyticFoldInLoss``, e.g. BPR-MF's closed-form one, which builds
  no autograd graph per step); otherwise autograd differentiates it (NCF's network). The steps
  run on one PyTorch thread, as training does (``training.torch_threads``; measured:
  docs/decisions.md, "Serving users not seen in training").
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import scipy.sparse as sp
import torch

from recprivacy.errors import ConfigError
from recprivacy.models.training import NegativeSampler, torch_threads

#: a fold-in loss: ``(new rows, pair users, pair items, negatives [n_pairs, n_neg]) -> scalar``
FoldInLoss = Callable[[list[torch.Tensor], torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]
#: the gradient of a fold-in loss over fixed pairs: ``(new rows, negatives) -> ∂loss/∂rows``, one per table
FoldInGradient = Callable[[list[torch.Tensor], torch.Tensor], list[torch.Tensor]]


@runtime_checkable
class AnalyticFoldInLoss(Protocol):
    """A ``FoldInLoss`` that also provides its gradient in closed form."""

    def __call__(self, rows: list[torch.Tensor], users: torch.Tensor, items: torch.Tensor,
                 negatives: torch.Tensor) -> torch.Tensor: ...  # fmt: skip

    def gradient(self, users: torch.Tensor, items: torch.Tensor) -> FoldInGradient:
        """The loss's gradient over the pairs ``(users, items)``; what the pairs fix (their item
        rows) may be prepared once here, outside the steps."""
        ...


def loss_gradient(loss: FoldInLoss, users: torch.Tensor, items: torch.Tensor) -> FoldInGradient:
    """``∂loss/∂rows`` over the pairs ``(users, items)``: the loss's own closed form where it
    provides one (``AnalyticFoldInLoss``), else autograd of ``loss`` (frozen parts get no grad)."""
    if isinstance(loss, AnalyticFoldInLoss):
        return loss.gradient(users, items)

    def autograd(rows: list[torch.Tensor], negatives: torch.Tensor) -> list[torch.Tensor]:
        with torch.enable_grad():
            return list(torch.autograd.grad(loss(rows, users, items, negatives), rows))

    return autograd


def history_pairs(history: sp.csr_matrix) -> tuple[torch.Tensor, torch.Tensor]:
    """``(users, items)`` int64 tensors of the nonzero cells of ``history``, row by row."""
    history = history.tocsr()
    users = np.repeat(np.arange(history.shape[0], dtype=np.int64), np.diff(history.indptr))
    return torch.from_numpy(users), torch.from_numpy(history.indices.astype(np.int64))


def history_gram(history: sp.csr_matrix, table: torch.Tensor, max_cells: int = 1 << 24) -> torch.Tensor:
    """``G[u] = Σ_{i ∈ S_u} q_i q_iᵀ`` (``[n, d, d]``, float64, in the rows' order) for the binary
    history rows: ``G[u] = X_uᵀX_u`` for ``X_u`` the user's item rows, by batched products over
    the chunks of ``length_chunks``, each user's rows zero-padded to the longest history of its
    chunk: about ``max_cells`` gathered cells at a time at most, and fewer than twice as many
    rows gathered as the history has non-zeros. An empty history gives ``G[u] = 0``."""
    history = history.tocsr()
    lengths = np.diff(history.indptr)
    d = table.shape[1]
    padded = torch.cat([table.double(), torch.zeros(1, d, dtype=torch.float64)])  # row m: the padding
    order = np.argsort(-lengths, kind="stable")
    out = torch.zeros((history.shape[0], d, d), dtype=torch.float64)
    for lo, hi in length_chunks(lengths[order], max(1, max_cells // d)):
        users = order[lo:hi]
        pos = np.arange(lengths[users[0]])
        valid = pos[None, :] < lengths[users, None]
        flat = np.where(valid, history.indptr[users, None] + pos[None, :], 0)
        items = np.where(valid, history.indices[flat], table.shape[0])
        x = padded[torch.from_numpy(items.astype(np.int64))]
        out[torch.from_numpy(users)] = x.transpose(1, 2) @ x
    return out


def length_chunks(lengths: np.ndarray, max_rows: int) -> Iterator[tuple[int, int]]:
    """``[lo, hi)`` chunks of the non-increasing ``lengths`` (zeros left out): each starts at its
    longest, ``w = lengths[lo]``, and holds the following entries of at least ``w / 2`` within
    ``w · (hi − lo) ≤ max_rows`` (at least one), so the padded cells ``w · (hi − lo)`` are fewer
    than twice the chunk's own ``Σ lengths``."""
    ascending = -lengths
    lo, n = 0, int(np.count_nonzero(lengths))
    while lo < n:
        width = int(lengths[lo])
        shorter = int(np.searchsorted(ascending, -(width / 2), side="right"))  # first entry below w / 2
        hi = min(shorter, lo + max(1, max_rows // width), n)
        yield lo, hi
        lo = hi


def ridge_fold_in(item_factors: torch.Tensor, history: sp.csr_matrix, reg: float, neg_ratio: int = 0) -> torch.Tensor:
    """Closed-form fold-in of the squared loss (module docstring), ``[n, d]`` float32.

    Parameters
    ----------
    item_factors:
        Frozen ``Q`` (``[m, d]``).
    history:
        ``[n, m]`` CSR of the new users' targets ``r_ui`` (1 for implicit feedback).
    reg:
        Per-sample L2 coefficient ``λ``.
    neg_ratio:
        Negatives (target 0) per positive in training, ``ρ``.

    Returns
    -------
    torch.Tensor
        ``P`` with row ``u`` minimising ``J`` for history row ``u``.
    """
    q = item_factors.double()
    m, d = q.shape
    gram = history_gram(history.astype(bool), q)
    n = torch.as_tensor(np.diff(history.tocsr().indptr), dtype=torch.float64)[:, None, None]
    rest = (q.T @ q)[None] - gram
    lhs = gram + neg_ratio * n * rest / (m - n).clamp(min=1) + reg * n * (1 + neg_ratio) * torch.eye(d, dtype=q.dtype)
    rhs = torch.from_numpy(np.asarray(history @ q.numpy()))[..., None]
    solution, info = torch.linalg.solve_ex(lhs, rhs)
    singular = info != 0  # e.g. an empty history, or λ = 0 with fewer items than factors
    if singular.any():
        solution[singular] = torch.linalg.lstsq(lhs[singular], rhs[singular], driver="gelsd").solution
    return solution[..., 0].float()


def gradient_fold_in(
    sizes: Sequence[int],
    history: sp.csr_matrix,
    loss: FoldInLoss,
    n_neg: int,
    steps: int,
    lr: float,
    seed: int,
) -> list[torch.Tensor]:
    """New rows fitted by ``steps`` full-batch Adam steps on ``loss`` from zero.

    Parameters
    ----------
    sizes:
        Width of each new table (one row per history row), e.g. ``[d]`` for BPR-MF or the GMF
        and MLP embedding sizes for NeuMF.
    history:
        ``[n, m]`` binary CSR of the new users' items (the positives).
    loss:
        Summed training loss of the positives and their negatives (``FoldInLoss``), differentiated
        by ``loss_gradient``.
    n_neg:
        Negatives drawn per positive and step, uniformly outside the user's history.
    steps, lr:
        Adam steps and learning rate.
    seed:
        Seeds the negatives.

    Returns
    -------
    list of torch.Tensor
        The fitted ``[n, size]`` tables, detached.
    """
    users, items = history_pairs(history)
    sampler = NegativeSampler(history, np.random.default_rng(seed))
    rows = [torch.zeros(history.shape[0], size, requires_grad=True) for size in sizes]
    gradient = loss_gradient(loss, users, items)
    optimizer = torch.optim.Adam(rows, lr=lr)
    with torch_threads(1):
        for _ in range(steps if len(users) else 0):
            negatives = torch.from_numpy(sampler.sample(users.numpy(), n_neg))
            for row, grad in zip(rows, gradient(rows, negatives)):
                row.grad = grad
            optimizer.step()
    return [r.detach() for r in rows]


def check_fold_in(name: str, steps: int, lr: float) -> int:
    """``steps`` if it is a positive integer and ``lr`` a positive number, else ConfigError."""
    if not isinstance(steps, (int, np.integer)) or isinstance(steps, bool) or steps < 1:
        raise ConfigError(f"{name}.fold_in_steps: expected a positive integer, got {steps!r}")
    if not isinstance(lr, (int, float, np.floating)) or isinstance(lr, bool) or not lr > 0:
        raise ConfigError(f"{name}.fold_in_lr: expected a positive number, got {lr!r}")
    return steps
