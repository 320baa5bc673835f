"""Latent factor model (LFM) of paper 001 (§3.2), and the factor tables shared by BPR-MF and
LightGCN.

LFM predicts ``r̂_ui = p_uᵀ q_i`` and minimises, by SGD::

    L = Σ_(u,i) (r_ui − p_uᵀ q_i)² + λ (‖p_u‖² + ‖q_i‖²)

with the per-sample update of the paper (``e = r − p_uᵀ q_i``)::

    p_u ← p_u + α (e q_i − λ p_u)        q_i ← q_i + α (e p_u − λ q_i)

Implicit variant (the paper's default): every training pair is a positive with ``r = 1`` and
``neg_ratio`` negatives per positive with ``r = 0`` are drawn afresh each epoch from the items
the user has not interacted with. Explicit variant (``target="rating"``): the observed ratings
are the targets and there are no negatives.

Decision: the update is applied to mini-batches, summing the per-sample steps (two samples of
one user in a batch both move ``p_u``, computed from the same old values). With
``batch_size=1`` this is exactly the paper's rule; larger batches make it vectorised and fast.
Defaults: d = 100, N(0, 0.1²) initialisation, lr 0.01, λ 0.01, 20 epochs (paper 001 names
LFM without a dimension or initialisation; docs/decisions.md, "Recommenders").

Users not seen in training are folded in: ``p_u`` is the closed-form minimiser of the same
objective with ``Q`` frozen, negatives taken in expectation (``foldin.ridge_fold_in``).

Decision (all factor models): training runs with one intra-op thread. Each step touches a few
thousand rows, where PyTorch's thread pool costs more than it saves, and on shared cores a
parallel region waits for a descheduled thread (measured: docs/decisions.md, "Training threads").

Decision (issue 33, early stopping at scale): a validation ranks every item for at most
``VALID_USERS`` (50,000) validation users, a seeded sample drawn once per fit when there are
more (``validation_users``). Ranking all of them costs users x items per validation, the part of
a fit that grows faster than the interactions (at ML-20M's shape ~97k users x 26,744 items, four
times in 20 epochs); Recall@20 over 50,000 users has a standard error below 0.002. The cap is
above every shipped real dataset (the largest, S3-Rec's Sports and Yelp, have about 36k and 31k
users), so all of them are validated exactly as before.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from torch import nn

from recprivacy.data.interactions import Interactions
from recprivacy.errors import ConfigError
from recprivacy.metrics.ranking import evaluate
from recprivacy.models.base import Recommender
from recprivacy.models.foldin import ridge_fold_in
from recprivacy.models.training import NegativeSampler, TrainingHistory, fit_epochs, shuffled_batches

#: name and key of the validation metric used for early stopping
VALID_METRIC = "recall@20"
VALID_USERS = 50_000
"""Most validation users ranked per validation (a seeded sample above it; module docstring)."""


def validation_users(valid: Interactions, max_users: int, seed: int) -> np.ndarray:
    """Internal ids of the users with a validation interaction, in id order; above ``max_users``
    of them, a sorted uniform sample of ``max_users`` drawn with ``seed``."""
    users = np.flatnonzero(valid.user_counts() > 0)
    if len(users) <= max_users:
        return users
    return np.sort(np.random.default_rng(seed).choice(users, size=max_users, replace=False))

TARGETS = ("implicit", "rating")


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


class FactorTables(nn.Module):
    """User factors ``P[n_users, d]`` and item factors ``Q[n_items, d]``, N(0, init_std²)."""

    def __init__(self, n_users: int, n_items: int, n_factors: int, init_std: float, generator: torch.Generator):
        super().__init__()
        self.user = nn.Parameter(torch.randn(n_users, n_factors, generator=generator) * init_std)
        self.item = nn.Parameter(torch.randn(n_items, n_factors, generator=generator) * init_std)

    def embeddings(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The user and item representations that scores are dot products of."""
        return self.user, self.item

    def l2(self, users: torch.Tensor, *items: torch.Tensor) -> torch.Tensor:
        """``½ Σ (‖p_u‖² + Σ ‖q_i‖²)`` over a batch, on the tables (ego embeddings)."""
        total = self.user[users].pow(2).sum()
        for batch in items:
            total = total + self.item[batch].pow(2).sum()
        return 0.5 * total


class FactorRecommender(Recommender):
    """Base of the models scoring ``score(u, i) = uᵀ i`` from learned factors.

    Subclasses build ``module_`` (a ``FactorTables``) in ``_fit``; ``_cache_factors`` stores
    its final representations as ``user_factors_`` / ``item_factors_`` for scoring.
    """

    def __init__(
        self,
        n_factors: int,
        lr: float,
        reg: float,
        n_epochs: int,
        batch_size: int,
        patience: int,
        eval_every: int,
        init_std: float,
        seed: int,
    ) -> None:
        super().__init__(seed=seed)
        name = type(self).__name__
        for key, value in (("n_factors", n_factors), ("n_epochs", n_epochs), ("batch_size", batch_size),
                           ("patience", patience), ("eval_every", eval_every)):
            if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
                raise ConfigError(f"{name}.{key}: expected a positive integer, got {value!r}")
        for key, value in (("lr", lr), ("init_std", init_std)):
            if not _is_number(value) or not value > 0:
                raise ConfigError(f"{name}.{key}: expected a positive number, got {value!r}")
        if not _is_number(reg) or reg < 0:
            raise ConfigError(f"{name}.reg: expected a number >= 0, got {reg!r}")
        self.n_factors = n_factors
        self.lr = lr
        self.reg = reg
        self.n_epochs = n_epochs
        self.batch_size = batch_size
        self.patience = patience
        self.eval_every = eval_every
        self.init_std = init_std

    def _tables(self, cls: type[FactorTables] = FactorTables, **extra) -> FactorTables:
        generator = torch.Generator().manual_seed(self.seed)
        return cls(self.n_users_, self.n_items_, self.n_factors, self.init_std, generator, **extra)

    def _cache_factors(self) -> None:
        with torch.no_grad():
            users, items = self.module_.embeddings()
            self.user_factors_, self.item_factors_ = users.detach().clone(), items.detach().clone()

    def _train(self, run_epoch: Callable[[int], float], valid: Interactions | None) -> TrainingHistory:
        """``fit_epochs`` with early stopping on validation Recall@20 when ``valid`` is given."""
        validate = None
        if valid is not None:
            users = validation_users(valid, VALID_USERS, self.seed)

            def validate() -> float:
                self._cache_factors()
                return evaluate(self, valid, ks=(20,), users=users)[VALID_METRIC]

        history = fit_epochs(self.module_, run_epoch, self.n_epochs, validate=validate,
                             eval_every=self.eval_every, patience=self.patience, desc=type(self).__name__)
        self._cache_factors()
        return history

    def _score(self, users: torch.Tensor) -> torch.Tensor:
        return self.user_factors_[users] @ self.item_factors_.T

    def _score_histories(self, histories: Interactions) -> torch.Tensor:
        return self._fold_in(histories) @ self.item_factors_.T

    @property
    def serves_new_users(self) -> bool:
        """True when the subclass folds users in (implements ``_fold_in``)."""
        return type(self)._fold_in is not FactorRecommender._fold_in

    def _fold_in(self, histories: Interactions) -> torch.Tensor:
        """Representations ``[histories.n_users, d]`` of users not seen in training, scored
        against ``item_factors_`` like trained users."""
        raise NotImplementedError(f"{type(self).__name__} cannot fold in users not seen in training")


def sgd_step(
    module: FactorTables, users: torch.Tensor, items: torch.Tensor, targets: torch.Tensor, lr: float, reg: float
) -> float:
    """One summed mini-batch of the paper's per-sample updates, in place; returns the batch loss
    ``Σ ½[(r − pᵀq)² + λ(‖p‖² + ‖q‖²)]`` before the step. In-place arithmetic on the gathered
    rows, as ``bpr.bpr_sgd_step``."""
    with torch.no_grad():
        p, q = module.user.index_select(0, users), module.item.index_select(0, items)
        err = targets - (p * q).sum(-1)
        loss = 0.5 * (torch.dot(err, err) + reg * (torch.dot(p.view(-1), p.view(-1)) + torch.dot(q.view(-1), q.view(-1))))
        weight = err.mul_(lr)[:, None]  # α e
        module.user.index_add_(0, users, (q * weight).add_(p, alpha=-lr * reg))
        module.item.index_add_(0, items, p.mul_(weight).add_(q, alpha=-lr * reg))
        return float(loss)


class LFM(FactorRecommender):
    """Latent factor model trained by SGD on squared error (paper 001, §3.2).

    Parameters
    ----------
    n_factors:
        Latent dimension d (100).
    lr, reg:
        SGD step α (0.01) and L2 coefficient λ (0.01).
    n_epochs:
        Passes over the positives (20).
    neg_ratio:
        Negatives (``r = 0``) per positive, redrawn each epoch (1; implicit target only).
    batch_size:
        Samples per vectorised SGD step (1 = the paper's per-sample SGD). 1024: as good as
        smaller batches and the fastest (docs/decisions.md, "LFM").
    target:
        ``"implicit"`` (1/0 with sampled negatives, as in the paper) or ``"rating"`` (observed
        ratings, no negatives).
    patience, eval_every:
        Early stopping on validation Recall@20 when ``fit`` gets ``valid``, checked every 5
        epochs and after the last: validation Recall@20 still rises at the paper's 20 epochs, so
        checking every epoch (as before issue 33) kept the same weights for more CPU
        (docs/decisions.md, "Speed and start-up").
    init_std:
        Standard deviation of the N(0, σ²) initialisation (0.1).

    Attributes
    ----------
    user_factors_, item_factors_:
        ``P`` and ``Q`` after training.
    history_:
        ``TrainingHistory`` (mean loss per sample and epoch).
    """

    def __init__(
        self,
        n_factors: int = 100,
        lr: float = 0.01,
        reg: float = 0.01,
        n_epochs: int = 20,
        neg_ratio: int = 1,
        batch_size: int = 1024,
        target: str = "implicit",
        patience: int = 5,
        eval_every: int = 5,
        init_std: float = 0.1,
        seed: int = 0,
    ) -> None:
        super().__init__(n_factors, lr, reg, n_epochs, batch_size, patience, eval_every, init_std, seed)
        if not isinstance(neg_ratio, (int, np.integer)) or isinstance(neg_ratio, bool) or neg_ratio < 0:
            raise ConfigError(f"LFM.neg_ratio: expected an integer >= 0, got {neg_ratio!r}")
        if target not in TARGETS:
            raise ConfigError(f"LFM.target: expected one of {list(TARGETS)}, got {target!r}")
        self.neg_ratio = neg_ratio
        self.target = target

    def _fit(self, train: Interactions, valid: Interactions | None) -> None:
        self.module_ = self._tables()
        rng = np.random.default_rng(self.seed)
        sample = self._explicit_samples(train) if self.target == "rating" else self._implicit_sampler(rng)

        def run_epoch(epoch: int) -> float:
            samples = sample()
            total = 0.0
            for users, items, targets in shuffled_batches(samples, self.batch_size, rng):
                total += sgd_step(self.module_, users, items, targets, self.lr, self.reg)
            return total / max(len(samples[0]), 1)

        self.history_ = self._train(run_epoch, valid)

    def _fold_in(self, histories: Interactions) -> torch.Tensor:
        """The closed-form minimiser of the training objective over a new user's ``p_u``,
        ``Q`` frozen (``foldin.ridge_fold_in``; ratings as targets for ``target="rating"``)."""
        if self.target == "rating":
            return ridge_fold_in(self.item_factors_, histories.to_csr("ratings"), self.reg)
        return ridge_fold_in(self.item_factors_, histories.to_csr(), self.reg, self.neg_ratio)

    def _implicit_sampler(self, rng: np.random.Generator):
        """Positives (r = 1) plus ``neg_ratio`` fresh negatives (r = 0) per positive."""
        coo = self.train_csr_.tocoo()
        pos_users, pos_items = coo.row.astype(np.int64), coo.col.astype(np.int64)
        sampler = NegativeSampler(self.train_csr_, rng)

        def sample() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
            neg_items = sampler.sample(pos_users, self.neg_ratio).ravel()
            users = np.concatenate([pos_users, np.repeat(pos_users, self.neg_ratio)])
            items = np.concatenate([pos_items, neg_items])
            targets = np.concatenate([np.ones(len(pos_items)), np.zeros(len(neg_items))])
            return torch.from_numpy(users), torch.from_numpy(items), torch.from_numpy(targets).float()

        return sample

    def _explicit_samples(self, train: Interactions):
        """The observed (user, item, rating) rows, the same every epoch."""
        if train.ratings is None:
            raise ConfigError(f"LFM.target='rating' needs ratings, but dataset {train.name!r} has none")
        data = (torch.from_numpy(train.users.copy()), torch.from_numpy(train.items.copy()),
                torch.from_numpy(train.ratings.astype(np.float32)))
        return lambda: data
