"""Row-wise (sparse) optimisation of embedding tables: a step reads and writes only the rows of
its batch, so its cost grows with the batch, not with the number of users and items.

``RowAdam`` is Adam restricted to the touched rows ("lazy" Adam, the rule of
``torch.optim.SparseAdam``). For a table ``θ``, the distinct rows ``R`` of a step, the summed
gradient ``g_r`` of each (a row drawn twice in a batch gets both gradients) and the step count
``t`` of the optimiser::

    m_r ← β₁ m_r + (1 − β₁) g_r          v_r ← β₂ v_r + (1 − β₂) g_r²
    θ_r ← θ_r − lr · (m_r / (1 − β₁ᵗ)) / (sqrt(v_r / (1 − β₂ᵗ)) + ε)      for r ∈ R

Rows outside ``R`` and their moments are left as they are, whereas dense Adam would decay every
row's moments and keep moving untouched rows along their momentum.

Decision: the moments and the update are applied with ``index_select`` / ``index_copy_`` /
``index_add_`` instead of autograd with ``nn.Embedding(sparse=True)`` and
``torch.optim.SparseAdam``: on a BPR-MF batch of 2048 triples (d = 64, one thread, the shared
2-core machine) autograd with SparseAdam was about 1.3x slower per step than dense autograd with
Adam, and this path with the closed-form gradient of ``bpr.bpr_gradients`` about 1.7x faster
(whole fits: ``benchmarks/model_speed.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch


def row_sums(index: torch.Tensor, values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The distinct rows of ``index`` (sorted) and ``Σ values[k]`` over the ``k`` naming each."""
    rows, inverse = torch.unique(index, return_inverse=True)
    sums = torch.zeros(len(rows), values.shape[1], dtype=values.dtype).index_add_(0, inverse, values)
    return rows, sums


class RowAdam:
    """Adam on the rows of ``tables`` that a step touches (module docstring).

    Parameters
    ----------
    tables:
        Float tensors ``[n_rows, d]`` updated in place (parameters are updated without
        autograd).
    lr:
        Step size.
    betas, eps:
        Adam's moment decays and denominator term (PyTorch's defaults).
    """

    def __init__(self, tables: Sequence[torch.Tensor], lr: float, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8) -> None:  # fmt: skip
        self.tables = list(tables)
        self.lr = lr
        self.betas = betas
        self.eps = eps
        self.first = [torch.zeros_like(t, requires_grad=False) for t in self.tables]
        self.second = [torch.zeros_like(t, requires_grad=False) for t in self.tables]
        self.t = 0

    def step(self, gradients: Sequence[tuple[torch.Tensor, torch.Tensor]]) -> None:
        """Apply one step; ``gradients[k] = (rows, grads)`` gives table ``k``'s row index of each
        gradient row (repeats allowed, summed) and the gradients ``[len(rows), d]``."""
        self.t += 1
        with torch.no_grad():
            for table, first, second, (index, grads) in zip(self.tables, self.first, self.second, gradients):
                rows, g = row_sums(index, grads)
                self._update(table, first, second, rows, g)

    def _update(self, table: torch.Tensor, first: torch.Tensor, second: torch.Tensor, rows: torch.Tensor,
                g: torch.Tensor) -> None:  # fmt: skip
        beta1, beta2 = self.betas
        m = first.index_select(0, rows).mul_(beta1).add_(g, alpha=1 - beta1)
        v = second.index_select(0, rows).mul_(beta2).addcmul_(g, g, value=1 - beta2)
        first.index_copy_(0, rows, m)
        second.index_copy_(0, rows, v)
        denom = v.div_(1 - beta2**self.t).sqrt_().add_(self.eps)
        table.index_put_((rows,), m.div_(denom).mul_(-self.lr / (1 - beta1**self.t)), accumulate=True)
