"""LightGCN (He et al., SIGIR 2020): linear propagation on the user-item graph, BPR loss.

With the bipartite adjacency ``A = [[0, R], [Rᵀ, 0]]`` of the binary training matrix ``R`` and
node degrees ``d``, the symmetric normalisation is::

    Â = D^{-1/2} A D^{-1/2},   Â[u, i] = 1 / sqrt(d_u · d_i)  for every training pair (u, i)

Layer ``k + 1`` is ``E^(k+1) = Â E^(k)`` from the ego embeddings ``E^(0)`` (no weights, no
non-linearity), and the final representation is the layer mean
``E = 1/(K+1) Σ_{k=0..K} E^(k)``. Scores are ``s_ui = e_uᵀ e_i``; training is the BPR loss with
L2 on the batch's ego embeddings (``bpr.PairwiseRecommender``). Nodes without a training
interaction have degree 0; their rows of ``Â`` are zero.

Defaults follow the LightGCN paper and its reference code, as paper 003 uses them (d = 64, K = 3, λ = 1e-4, batch 2048,
N(0, 0.1²) initialisation) except the learning rate: 2e-3 instead of the paper's 1e-3, the
value RecBole-GNN's tuning selected for LightGCN on ml-1m (results/general/ml-1m.md): on
ml-100k lr 1e-3 was still improving after 200 epochs, while 2e-3 peaked earlier and higher,
better within a CPU budget (docs/decisions.md, "LightGCN learning rate").
After training the propagated embeddings are cached as ``user_factors_`` / ``item_factors_``,
so scoring is one matrix product.

A user not seen in training (``score_histories``) is propagated into the trained graph without
changing it: with ``N_u`` the user's history items, ``|N_i|`` the training degrees and the
trained item layers ``e_i^(k)``::

    e_u^(k+1) = Σ_{i ∈ N_u} e_i^(k) / sqrt(|N_u| · |N_i|),    e_u = 1/(K+1) Σ_{k=0..K} e_u^(k)

Decision: ``e_u^(0) = 0``. The ego embedding enters ``e_u`` only through its ``1/(K+1)`` share
(it would reach the items only through the new user's own edges, which the trained item layers
do not contain), so the history alone determines the representation, deterministically and
without an optimisation per request; with K = 0 a new user therefore scores 0 everywhere.
"""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import scipy.sparse as sp
import torch

from recprivacy.data.interactions import Interactions
from recprivacy.errors import ConfigError
from recprivacy.models.bpr import PairwiseRecommender
from recprivacy.models.examples import ExampleTask
from recprivacy.models.lfm import FactorTables


def normalized_adjacency(csr: sp.csr_matrix) -> sp.csr_matrix:
    """``D^{-1/2} A D^{-1/2}`` of the bipartite graph; users first, then items (float64 CSR)."""
    binary = csr.astype(bool).astype(np.float64)
    adjacency = sp.bmat([[None, binary], [binary.T, None]], format="csr")
    inv_sqrt = inverse_sqrt(np.asarray(adjacency.sum(axis=1)).ravel())
    return (sp.diags(inv_sqrt) @ adjacency @ sp.diags(inv_sqrt)).tocsr()


def inverse_sqrt(degree: np.ndarray) -> np.ndarray:
    """``1 / sqrt(d)`` elementwise, 0 where ``d = 0`` (float64)."""
    degree = np.asarray(degree, dtype=np.float64)
    out = np.zeros_like(degree)
    np.divide(1.0, np.sqrt(degree), out=out, where=degree > 0)
    return out


def history_adjacency(history: sp.csr_matrix, item_degree: np.ndarray) -> sp.csr_matrix:
    """``Â_new[u, i] = 1 / sqrt(|N_u| · |N_i|)`` for each history pair of a new user, with
    ``|N_u|`` the user's distinct history items and ``|N_i|`` the training degree of item ``i``
    (an item without training interactions passes nothing, as in training)."""
    binary = history.astype(bool).astype(np.float64)
    return (sp.diags(inverse_sqrt(binary.getnnz(axis=1))) @ binary @ sp.diags(inverse_sqrt(item_degree))).tocsr()


def to_torch_csr(m: sp.spmatrix) -> torch.Tensor:
    """A scipy matrix as a float32 torch sparse CSR tensor."""
    m = sp.csr_matrix(m)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")
        return torch.sparse_csr_tensor(
            torch.from_numpy(m.indptr.astype(np.int64)),
            torch.from_numpy(m.indices.astype(np.int64)),
            torch.from_numpy(m.data.astype(np.float32)),
            size=m.shape,
            check_invariants=True,
        )


class Constant:
    """A tensor handed to ``SymmetricPropagation`` as a plain object: ``torch.func`` lifts tensor
    arguments, which a sparse CSR tensor does not support."""

    def __init__(self, value: torch.Tensor) -> None:
        self.value = value


class SymmetricPropagation(torch.autograd.Function):
    """``Â X`` for a constant symmetric sparse ``Â`` (a ``Constant``); the gradient is ``Âᵀ G = Â G``.

    PyTorch's generic sparse-dense backward is slower here (it transposes ``Â`` on every call;
    docs/decisions.md, "LightGCN learning rate"); symmetry makes the backward one more sparse product.
    Under ``torch.func.vmap`` (per-user gradients of DP-SGD) a batch ``X [B, N, d]`` is
    propagated as one product ``Â [N, B d]`` (``vmap``).
    """

    @staticmethod
    def forward(adjacency: Constant, x: torch.Tensor) -> torch.Tensor:
        return adjacency.value @ x

    @staticmethod
    def setup_context(ctx, inputs: tuple[Constant, torch.Tensor], output: torch.Tensor) -> None:
        ctx.adjacency = inputs[0]

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> tuple[None, torch.Tensor]:
        return None, SymmetricPropagation.apply(ctx.adjacency, grad)

    @staticmethod
    def vmap(info, in_dims: tuple[None, int], adjacency: Constant, x: torch.Tensor) -> tuple[torch.Tensor, int]:
        """``Â X_b`` for every ``b`` of a batch along ``in_dims[1]``, as one sparse product."""
        batch = x.movedim(in_dims[1], 1)  # [N, B, d]
        out = SymmetricPropagation.apply(adjacency, batch.reshape(batch.shape[0], -1))
        return out.reshape(batch.shape), 1


class LightGCNModule(FactorTables):
    """Ego embeddings plus the fixed normalised adjacency (sparse CSR); ``embeddings()``
    propagates."""

    def __init__(self, n_users: int, n_items: int, n_factors: int, init_std: float, generator: torch.Generator,
                 adjacency: torch.Tensor, n_layers: int):
        super().__init__(n_users, n_items, n_factors, init_std, generator)
        self.adjacency = adjacency
        self.n_layers = n_layers

    def layers(self) -> list[torch.Tensor]:
        """``[E^(0), ..., E^(K)]`` over all nodes (users first, then items)."""
        out = [torch.cat([self.user, self.item])]
        for _ in range(self.n_layers):
            out.append(SymmetricPropagation.apply(Constant(self.adjacency), out[-1]))
        return out

    def embeddings(self) -> tuple[torch.Tensor, torch.Tensor]:
        mean = sum(self.layers()) / (self.n_layers + 1)
        return mean[: self.user.shape[0]], mean[self.user.shape[0]:]


class LightGCN(PairwiseRecommender):
    """LightGCN collaborative filtering.

    Parameters
    ----------
    n_factors:
        Embedding size (64).
    n_layers:
        Propagation layers K (3).
    lr, reg:
        Adam learning rate (2e-3, see the module docstring) and L2 coefficient on the batch's
        ego embeddings (1e-4).
    n_epochs, batch_size, patience, eval_every, init_std:
        As for ``BPRMF``.

    Attributes
    ----------
    user_factors_, item_factors_:
        Layer-mean propagated embeddings of the best (or last) weights.
    module_:
        ``LightGCNModule`` (ego embeddings and adjacency).
    history_:
        ``TrainingHistory``.
    """

    def __init__(
        self,
        n_factors: int = 64,
        n_layers: int = 3,
        lr: float = 2e-3,
        reg: float = 1e-4,
        n_epochs: int = 200,
        batch_size: int = 2048,
        patience: int = 5,
        eval_every: int = 5,
        init_std: float = 0.1,
        seed: int = 0,
    ) -> None:
        super().__init__(n_factors, lr, reg, n_epochs, batch_size, patience, eval_every, init_std, seed)
        if not isinstance(n_layers, (int, np.integer)) or isinstance(n_layers, bool) or n_layers < 0:
            raise ConfigError(f"LightGCN.n_layers: expected an integer >= 0, got {n_layers!r}")
        self.n_layers = n_layers

    def private_task(self, train: Interactions) -> ExampleTask:
        """BPR's per-user triples (``PairwiseRecommender.private_task``), with the graph that
        couples them: every loss reads embeddings propagated through ``Â`` (so no user row is
        read by its own user's examples only, and no loss is row-local)."""
        return replace(super().private_task(train), personal=(), lookups=(), coupling=(
            "the propagation Â is built from every user's interactions and enters every user's loss unclipped, "
            "so one user's interactions change the other users' gradients"))

    def _fold_in(self, histories: Interactions) -> torch.Tensor:
        """New users' layer-mean representations from the trained item layers (module docstring):
        ``e_u = 1/(K+1) Σ_{k=1..K} Â_new E_I^(k−1)``, with ``e_u^(0) = 0``."""
        adjacency = history_adjacency(histories.to_csr(), self.train_csr_.getnnz(axis=0))
        items = [layer[self.n_users_ :].detach().double().numpy() for layer in self.module_.layers()[:-1]]
        total = sum((adjacency @ layer for layer in items), np.zeros((histories.n_users, self.n_factors)))
        return torch.from_numpy(total / (self.n_layers + 1)).float()

    def _build(self) -> LightGCNModule:
        adjacency = to_torch_csr(normalized_adjacency(self.train_csr_))
        return self._tables(LightGCNModule, adjacency=adjacency, n_layers=self.n_layers)
