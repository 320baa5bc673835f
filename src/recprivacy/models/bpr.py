"""BPR-MF (Rendle et al., UAI 2009) and the pairwise training shared with LightGCN.

For a training pair ``(u, i)`` and a negative ``j`` drawn uniformly from the items ``u`` has
not interacted with, the batch loss is::

    L = −1/B Σ ln σ(s_ui − s_uj) + λ · 1/B · ½ Σ (‖e_u⁰‖² + ‖e_i⁰‖² + ‖e_j⁰‖²)

where ``s_ui`` is the dot product of the model's user and item representations and ``e⁰`` are
the ego (table) embeddings of the batch, as in the LightGCN reference code. Each epoch visits
every training pair once in shuffled mini-batches with one fresh negative each, and optimises
with Adam. With ``valid``, training stops early on validation Recall@20 (``fit_epochs``) and
keeps the best weights.

BPR-MF updates only the rows of its batch: with ``x = s_ui − s_uj = e_uᵀ(e_i − e_j)`` and
``σ`` the logistic function, the gradients of ``L`` are, per triple (summed over repeats)::

    ∂L/∂e_u = (−σ(−x) (e_i − e_j) + λ e_u) / B
    ∂L/∂e_i = (−σ(−x) e_u + λ e_i) / B        ∂L/∂e_j = (σ(−x) e_u + λ e_j) / B

computed in closed form (``bpr_gradients``) and applied by row-wise Adam
(``rowwise.RowAdam``); LightGCN's propagation makes every row depend on the batch, so it keeps
autograd and dense Adam.

Defaults (digest 003, decision 20; digest 002 baselines): d = 64, Adam lr 1e-3, λ = 1e-4,
batch 2048, one negative per positive, N(0, 0.1²) initialisation as in LightGCN's code;
validation every 5 epochs, patience 5, at most 200 epochs (quality and cost on ml-100k:
BENCHMARKS.md, ``benchmarks/model_speed.py``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
import torch.nn.functional as F

from recprivacy.data.interactions import Interactions
from recprivacy.models.foldin import check_fold_in, gradient_fold_in
from recprivacy.models.lfm import FactorRecommender, FactorTables
from recprivacy.models.rowwise import RowAdam
from recprivacy.models.training import NegativeSampler, minibatches

#: one optimisation step on a batch of (user, positive, negative) triples; returns the batch loss
Step = Callable[[torch.Tensor, torch.Tensor, torch.Tensor], float]


def bpr_loss(pos_scores: torch.Tensor, neg_scores: torch.Tensor) -> torch.Tensor:
    """Mean of ``−ln σ(s_ui − s_uj)`` (numerically stable ``logsigmoid``)."""
    return -F.logsigmoid(pos_scores - neg_scores).mean()


def bpr_fold_in_loss(item_factors: torch.Tensor, reg: float) -> Callable[..., torch.Tensor]:
    """The fold-in loss of a BPR model with frozen ``Q = item_factors`` (``foldin.FoldInLoss``):
    ``Σ −ln σ(pᵀq_i − pᵀq_j) + λ/2 ‖p‖²`` over the (user, item, negative) triples."""

    def loss(rows: list[torch.Tensor], users: torch.Tensor, items: torch.Tensor, negatives: torch.Tensor) -> torch.Tensor:
        p = rows[0][users]
        diff = (p * item_factors[items]).sum(-1)[:, None] - torch.einsum("bd,bnd->bn", p, item_factors[negatives])
        return -F.logsigmoid(diff).sum() + 0.5 * reg * negatives.shape[1] * p.pow(2).sum()

    return loss


def bpr_gradients(u: torch.Tensor, q: torch.Tensor, reg: float) -> tuple[float, torch.Tensor, torch.Tensor]:
    """The batch loss ``L`` and its gradients (module docstring) with respect to the gathered
    user rows ``u`` (``[B, d]``) and item rows ``q = [e_i; e_j]`` (``[2B, d]``, the positives
    first), as ``(L, ∂L/∂u, ∂L/∂q)``."""
    batch = len(u)
    decay = reg / batch
    diff = q[:batch] - q[batch:]
    x = torch.einsum("bd,bd->b", u, diff)
    weight = torch.sigmoid(-x).neg_().div_(batch)[:, None]  # ∂L/∂x = −σ(−x) / B
    grad_u = diff.mul_(weight).add_(u, alpha=decay)
    weighted_u = u * weight
    grad_q = q * decay
    grad_q[:batch] += weighted_u
    grad_q[batch:] -= weighted_u
    l2 = torch.dot(u.view(-1), u.view(-1)) + torch.dot(q.view(-1), q.view(-1))
    loss = -F.logsigmoid(x).mean() + 0.5 * decay * l2
    return float(loss), grad_u, grad_q


class PairwiseRecommender(FactorRecommender):
    """Factor model trained with the BPR loss; subclasses say how ``module_`` is built."""

    def _build(self) -> FactorTables:
        raise NotImplementedError

    def _fit(self, train: Interactions, valid: Interactions | None) -> None:
        self.module_ = self._build()
        rng = np.random.default_rng(self.seed)
        coo = self.train_csr_.tocoo()
        users, items = torch.from_numpy(coo.row.astype(np.int64)), torch.from_numpy(coo.col.astype(np.int64))
        sampler = NegativeSampler(self.train_csr_, rng)
        step = self._step()

        def run_epoch(epoch: int) -> float:
            negatives = torch.from_numpy(sampler.sample(users.numpy(), 1)[:, 0])
            total = 0.0
            for idx in minibatches(len(users), self.batch_size, rng):
                idx = torch.from_numpy(idx)
                total += step(users[idx], items[idx], negatives[idx]) * len(idx)
            return total / max(len(users), 1)

        self.history_ = self._train(run_epoch, valid)

    def _step(self) -> Step:
        """Autograd on ``_batch_loss`` and dense Adam over ``module_``'s parameters."""
        optimizer = torch.optim.Adam(self.module_.parameters(), lr=self.lr)

        def step(users: torch.Tensor, pos: torch.Tensor, neg: torch.Tensor) -> float:
            loss = self._batch_loss(users, pos, neg)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            return loss.item()

        return step

    def _batch_loss(self, users: torch.Tensor, pos: torch.Tensor, neg: torch.Tensor) -> torch.Tensor:
        user_emb, item_emb = self.module_.embeddings()
        u = user_emb[users]
        loss = bpr_loss((u * item_emb[pos]).sum(-1), (u * item_emb[neg]).sum(-1))
        return loss + self.reg * self.module_.l2(users, pos, neg) / len(users)


class BPRMF(PairwiseRecommender):
    """Matrix factorisation trained with Bayesian Personalised Ranking.

    Parameters
    ----------
    n_factors:
        Embedding size (64).
    lr, reg:
        Adam learning rate (1e-3) and L2 coefficient λ on the batch embeddings (1e-4).
    n_epochs:
        Maximum epochs (each visits every training pair once).
    batch_size:
        Training triples per step (2048).
    patience, eval_every:
        Early stopping: validate every ``eval_every`` epochs, stop after ``patience``
        validations without a better Recall@20 (only when ``fit`` gets ``valid``).
    init_std:
        Standard deviation of the N(0, σ²) initialisation (0.1).
    fold_in_steps, fold_in_lr:
        Adam steps (50) and learning rate (0.05) that fold in a user not seen in training
        (``score_histories``).

    Attributes
    ----------
    user_factors_, item_factors_:
        Learned embeddings (``FloatTensor[n_users, d]``, ``[n_items, d]``).
    module_:
        The ``FactorTables`` holding them.
    history_:
        ``TrainingHistory``.
    """

    def __init__(
        self,
        n_factors: int = 64,
        lr: float = 1e-3,
        reg: float = 1e-4,
        n_epochs: int = 200,
        batch_size: int = 2048,
        patience: int = 5,
        eval_every: int = 5,
        init_std: float = 0.1,
        fold_in_steps: int = 50,
        fold_in_lr: float = 0.05,
        seed: int = 0,
    ) -> None:
        super().__init__(n_factors, lr, reg, n_epochs, batch_size, patience, eval_every, init_std, seed)
        self.fold_in_steps = check_fold_in("BPRMF", fold_in_steps, fold_in_lr)
        self.fold_in_lr = fold_in_lr

    def _build(self) -> FactorTables:
        return self._tables()

    def _step(self) -> Step:
        """Closed-form gradients (``bpr_gradients``) applied to the batch's rows by ``RowAdam``."""
        user, item = self.module_.user, self.module_.item
        optimizer = RowAdam([user, item], lr=self.lr)

        def step(users: torch.Tensor, pos: torch.Tensor, neg: torch.Tensor) -> float:
            items = torch.cat([pos, neg])
            with torch.no_grad():
                loss, grad_u, grad_q = bpr_gradients(user.index_select(0, users), item.index_select(0, items), self.reg)
                optimizer.step([(users, grad_u), (items, grad_q)])
            return loss

        return step

    def _fold_in(self, histories: Interactions) -> torch.Tensor:
        """A new user's ``p_u`` from ``fold_in_steps`` Adam steps on the BPR loss of the
        history, ``Q`` frozen (``foldin.gradient_fold_in``)."""
        (rows,) = gradient_fold_in([self.n_factors], histories.to_csr(), bpr_fold_in_loss(self.item_factors_, self.reg), 1,
                                   self.fold_in_steps, self.fold_in_lr, self.seed)
        return rows
