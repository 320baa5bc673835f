"""BPR-MF (Rendle et al., UAI 2009) and the pairwise training shared with LightGCN.

For a training pair ``(u, i)`` and a negative ``j`` drawn uniformly from the items ``u`` has
not interacted with, the batch loss is::

    L = −1/B Σ ln σ(s_ui − s_uj) + λ · 1/B · ½ Σ (‖e_u⁰‖² + ‖e_i⁰‖² + ‖e_j⁰‖²)

where ``s_ui`` is the dot product of the model's user and item representations and ``e⁰`` are
the ego (table) embeddings of the batch, as in the LightGCN reference code. Each epoch visits
every training pair once in shuffled mini-batches with one fresh negative each. With ``valid``,
training stops early on validation Recall@20 (``fit_epochs``) and keeps the best weights.
LightGCN's propagation makes every row depend on the batch, so it optimises this loss by
autograd and dense Adam (``PairwiseRecommender._step``).

BPR-MF optimises the same per-triple objective by LearnBPR, the stochastic gradient ascent of
Rendle et al. (§4.2, Fig. 4). With ``x = p_uᵀ(q_i − q_j)``, ``σ`` the logistic function, step
``α`` and L2 coefficient ``λ``, each triple moves its three rows::

    p_u ← p_u + α (σ(−x) (q_i − q_j) − λ p_u)
    q_i ← q_i + α (σ(−x) p_u − λ q_i)        q_j ← q_j + α (−σ(−x) p_u − λ q_j)

applied to a mini-batch by summing the triples' updates, all computed from the values before
the step (``bpr_sgd_step``; a row drawn twice moves twice, as LFM's rule in ``models.lfm``).

Decision (issue 33): LearnBPR replaces the Adam of digest 003's decision 20 (Adam lr 1e-3,
λ = 1e-4): on ml-100k it reaches a higher test Recall@20 in a fraction of Adam's epochs and CPU
(the numbers: docs/decisions.md, "Speed and start-up"; records
``benchmarks/results/model_speed*.json``). An SGD step writes only the batch's rows and keeps no
moments. implicit's ``BayesianPersonalizedRanking`` was measured as a backend and rejected: it
draws negatives from the interactions (popularity-weighted) and ranked worse on the same split.

Defaults: d = 64, α = 0.05, λ = 0.01, batch 2048, one negative per positive, N(0, 0.1²)
initialisation as in LightGCN's code; validation every 5 epochs, patience 3, at most 200 epochs.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
import torch.nn.functional as F

from recprivacy.data.interactions import Interactions
from recprivacy.models.foldin import check_fold_in, gradient_fold_in
from recprivacy.models.lfm import FactorRecommender, FactorTables
from recprivacy.models.training import NegativeSampler, shuffled_batches

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


def bpr_sgd_step(user: torch.Tensor, item: torch.Tensor, users: torch.Tensor, pos: torch.Tensor, neg: torch.Tensor,
                 lr: float, reg: float) -> float:  # fmt: skip
    """One batch of LearnBPR updates (module docstring) applied in place to the tables ``user``
    and ``item``, all computed from the values before the step; returns the batch mean of
    ``−ln σ(x) + λ/2 (‖p_u‖² + ‖q_i‖² + ‖q_j‖²)`` before the step.

    Written as in-place operations on the gathered rows, faster than the same arithmetic in
    out-of-place expressions (docs/decisions.md, "Speed and start-up")."""
    batch = len(users)
    items = torch.cat([pos, neg])
    with torch.no_grad():
        p, q = user.index_select(0, users), item.index_select(0, items)
        diff = q[:batch] - q[batch:]
        x = (p * diff).sum(-1)
        l2 = torch.dot(p.view(-1), p.view(-1)) + torch.dot(q.view(-1), q.view(-1))
        loss = float(-F.logsigmoid(x).mean() + 0.5 * reg * l2 / batch)
        weight = torch.sigmoid(x.neg_()).mul_(lr)[:, None]  # α σ(−x)
        user.index_add_(0, users, diff.mul_(weight).add_(p, alpha=-lr * reg))
        step_q = p.mul_(weight)
        q.mul_(-lr * reg)
        q[:batch] += step_q
        q[batch:] -= step_q
        item.index_add_(0, items, q)
    return loss


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
            for batch in shuffled_batches([users, items, negatives], self.batch_size, rng):
                total += step(*batch) * len(batch[0])
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
        LearnBPR step α (0.05) and L2 coefficient λ (0.01), per triple (module docstring).
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
        lr: float = 0.05,
        reg: float = 0.01,
        n_epochs: int = 200,
        batch_size: int = 2048,
        patience: int = 3,
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
        """LearnBPR's SGD rule on the batch's rows (``bpr_sgd_step``)."""
        user, item = self.module_.user, self.module_.item
        return lambda users, pos, neg: bpr_sgd_step(user, item, users, pos, neg, self.lr, self.reg)

    def _fold_in(self, histories: Interactions) -> torch.Tensor:
        """A new user's ``p_u`` from ``fold_in_steps`` Adam steps on the BPR loss of the
        history, ``Q`` frozen (``foldin.gradient_fold_in``)."""
        (rows,) = gradient_fold_in([self.n_factors], histories.to_csr(), bpr_fold_in_loss(self.item_factors_, self.reg), 1,
                                   self.fold_in_steps, self.fold_in_lr, self.seed)
        return rows
