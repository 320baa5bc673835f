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

Decision (issue 33): LearnBPR replaces the Adam first planned for UPC-SDG's pre-training (Adam lr 1e-3,
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
from recprivacy.models.foldin import FoldInGradient, check_fold_in, gradient_fold_in
from recprivacy.models.examples import ExampleTask, rows_of
from recprivacy.models.lfm import FactorRecommender, FactorTables
from recprivacy.models.training import NegativeSampler, shuffled_batches

#: one optimisation step on a batch of (user, positive, negative) triples; returns the batch loss
Step = Callable[[torch.Tensor, torch.Tensor, torch.Tensor], float]


def bpr_loss(pos_scores: torch.Tensor, neg_scores: torch.Tensor) -> torch.Tensor:
    """Mean of ``−ln σ(s_ui − s_uj)`` (numerically stable ``logsigmoid``)."""
    return -F.logsigmoid(pos_scores - neg_scores).mean()


class BPRFoldInLoss:
    """The fold-in loss of a BPR model with frozen ``Q = item_factors`` and its gradient
    (``foldin.AnalyticFoldInLoss``). Over the (user, item) pairs and their negatives ``j``, with
    ``x = p_uᵀq_i − p_uᵀq_j``, ``n_neg`` negatives per pair and L2 coefficient ``λ``::

        L = Σ_(u,i) Σ_j −ln σ(x) + λ/2 · n_neg · Σ_(u,i) ‖p_u‖²
        ∂L/∂p_u = Σ_(u,i) (Σ_j −σ(−x) (q_i − q_j) + λ · n_neg · p_u)
    """

    def __init__(self, item_factors: torch.Tensor, reg: float) -> None:
        self.item_factors = item_factors
        self.reg = reg

    def __call__(self, rows: list[torch.Tensor], users: torch.Tensor, items: torch.Tensor,
                 negatives: torch.Tensor) -> torch.Tensor:  # fmt: skip
        """``L`` (class docstring), differentiable in ``rows``."""
        p = rows[0][users]
        x = torch.einsum("bd,bnd->bn", p, self._differences(self.item_factors[items], negatives))
        return -F.logsigmoid(x).sum() + 0.5 * self.reg * negatives.shape[1] * p.pow(2).sum()

    def gradient(self, users: torch.Tensor, items: torch.Tensor) -> FoldInGradient:
        """``∂L/∂p`` (class docstring) over the pairs ``(users, items)``, accumulated per user with
        ``index_add``; the positives' rows ``q_i`` are gathered once."""
        q_pos = self.item_factors.index_select(0, items)

        def gradient(rows: list[torch.Tensor], negatives: torch.Tensor) -> list[torch.Tensor]:
            with torch.no_grad():
                p = rows[0].index_select(0, users)
                diff = self._differences(q_pos, negatives)
                weight = torch.sigmoid(torch.einsum("bd,bnd->bn", p, diff).neg_())  # σ(−x), [pairs, n_neg]
                per_pair = torch.einsum("bn,bnd->bd", weight, diff).neg_()  # Σ_j −σ(−x) (q_i − q_j)
                per_pair.add_(p, alpha=self.reg * negatives.shape[1])  # + λ n_neg p_u
                return [torch.zeros_like(rows[0]).index_add_(0, users, per_pair)]

        return gradient

    def _differences(self, q_pos: torch.Tensor, negatives: torch.Tensor) -> torch.Tensor:
        """``q_i − q_j``, ``[pairs, n_neg, d]``, from the pairs' positive rows and negative ids."""
        q_neg = self.item_factors.index_select(0, negatives.reshape(-1)).view(*negatives.shape, -1)
        return q_neg.neg_().add_(q_pos[:, None, :])


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

    def private_task(self, train: Interactions) -> ExampleTask:
        """BPR's triples grouped by user (``models.examples``): each drawn user's training pairs,
        one fresh negative each, and the per-triple loss ``example_losses``."""
        self._start_fit(train)
        self.module_ = self._build()
        csr = self.train_csr_
        sampler = NegativeSampler(csr, np.random.default_rng(self.seed))

        def draw(users: np.ndarray) -> tuple[np.ndarray, tuple[torch.Tensor, ...]]:
            owners, rows = rows_of(csr.indptr, users)
            owner_ids = users[owners]
            triples = (owner_ids, csr.indices[rows].astype(np.int64), sampler.sample(owner_ids, 1)[:, 0])
            return owners, tuple(torch.from_numpy(a) for a in triples)

        return ExampleTask(self.module_, np.flatnonzero(np.diff(csr.indptr)), draw, self.example_losses,
                           self._cache_factors, personal=("user",), lookups=("user", "item", "item"))

    def example_losses(self, users: torch.Tensor, pos: torch.Tensor, neg: torch.Tensor) -> torch.Tensor:
        """The loss of each triple, ``−ln σ(s_ui − s_uj) + λ/2 (‖e_u⁰‖² + ‖e_i⁰‖² + ‖e_j⁰‖²)``
        (the module docstring's batch loss before its mean), ``Tensor[B]``."""
        user_emb, item_emb = self.module_.embeddings()
        x = (user_emb[users] * (item_emb[pos] - item_emb[neg])).sum(-1)
        tables = self.module_
        l2 = tables.user[users].pow(2).sum(-1) + tables.item[pos].pow(2).sum(-1) + tables.item[neg].pow(2).sum(-1)
        return -F.logsigmoid(x) + 0.5 * self.reg * l2

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
        (rows,) = gradient_fold_in([self.n_factors], histories.to_csr(), BPRFoldInLoss(self.item_factors_, self.reg), 1,
                                   self.fold_in_steps, self.fold_in_lr, self.seed)
        return rows
