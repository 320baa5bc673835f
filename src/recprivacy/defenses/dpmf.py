"""DPMF: differentially private matrix factorisation by objective perturbation (Hua, Xia & Zhong,
IJCAI 2015), the DPMF_exp / DPMF_imp baselines of paper 002 (Sec. 5.1.3, which cites Hua et
al. for them without their parameters).

Objective over user factors ``u`` (kept in the unit ball) and item factors ``v``::

    J = Σ_(u,i) loss(u, i) + λ/2 (Σ ||u||² + Σ ||v||²) + Σ_j η_jᵀ v_j

* ``feedback="explicit"`` (DPMF_exp, Hua et al.): ``loss = (r_ui / r_max - uᵀv_i)²`` over the
  observed ratings. The only term linear in ``v_j`` that depends on a rating is
  ``-2 (r_uj / r_max) uᵀ v_j``; with ``||u|| <= 1`` and ratings in [0, r_max], one rating
  changes its coefficient by at most 2 in L2 norm, so ``Δ = 2``.
* ``feedback="implicit"`` (DPMF_imp, paper 002's modification): the BPR loss
  ``-ln σ(uᵀv_i - uᵀv_j)`` with one uniformly drawn negative ``j`` per positive and epoch, as
  BPR-MF; the same noise term (``Δ = 2``) is added.

Each ``η_j`` has density proportional to ``exp(-eps ||η|| / Δ)``: a uniform direction times a
norm drawn from Gamma(d, Δ / eps); it is drawn once, from the protection randomness
(``noise``: operating-system entropy unless ``"simulation"``), so the objective is fixed
(``SENSITIVITY`` and ``objective_noise`` are F-DPMF's too, so they live in
``defenses.objective_perturbation`` and are re-exported here). Mini-batch Adam
minimises ``J / N`` (batch mean of the losses plus the regulariser and noise terms over N), and
the user factors are projected back onto the unit ball after every step.

What the guarantee covers: Hua et al. prove eps-DP for the *item factors* released to an
untrusted recommender, with each user's factor staying on the user's device; it assumes the
exact minimiser of the perturbed objective, which mini-batch Adam with early stopping only
approximates; and the proof is for the squared loss, so the BPR variant (as paper 002 uses it)
is not covered. ``privacy_statement`` says all three.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import torch
import torch.nn.functional as F

from recprivacy.data.interactions import Interactions
from recprivacy.defenses.kinds import DefenceKind
from recprivacy.defenses.objective_perturbation import SENSITIVITY, objective_noise
from recprivacy.errors import ConfigError, DataError
from recprivacy.models.bpr import BPRFoldInLoss
from recprivacy.models.foldin import gradient_fold_in, ridge_fold_in
from recprivacy.models.lfm import FactorRecommender
from recprivacy.models.training import NegativeSampler, minibatches
from recprivacy.privacy.accounting import PrivacyStatement, StatementContext, check_positive
from recprivacy.privacy.randomness import NoiseMixin, check_mode

FEEDBACK = ("explicit", "implicit")
#: BPR fold-in of a new user for the implicit variant: BPR-MF's defaults (``models.bpr``)
FOLD_IN_STEPS, FOLD_IN_LR = 50, 0.05


class DPMF(FactorRecommender, NoiseMixin):
    """Objective-perturbed matrix factorisation (module docstring).

    A training-time defence of the kind that is a model defined by its paper (Hua et al. 2015;
    ``defenses.kinds``): the noise is a term of its own objective.

    Parameters
    ----------
    feedback:
        ``"explicit"`` (squared loss on ``train.ratings``) or ``"implicit"`` (BPR).
    epsilon:
        Privacy budget of the item factors (5, as every private method of paper 002).
    rating_max:
        Upper bound of the ratings (5); explicit ratings must lie in [0, rating_max].
    n_factors, lr, reg, n_epochs, batch_size, patience, eval_every, init_std, seed:
        As ``BPRMF`` (``reg`` is λ of the objective).
    noise:
        Source of the objective's noise η: ``"secure"`` (operating-system entropy, default)
        or ``"simulation"`` (seeded by ``seed``; ``privacy.randomness.NoiseSource``).
    """

    kind: ClassVar[DefenceKind] = "training"

    def __init__(
        self,
        feedback: str = "implicit",
        epsilon: float = 5.0,
        rating_max: float = 5.0,
        n_factors: int = 64,
        lr: float = 1e-3,
        reg: float = 1e-4,
        n_epochs: int = 200,
        batch_size: int = 2048,
        patience: int = 5,
        eval_every: int = 5,
        init_std: float = 0.1,
        seed: int = 0,
        noise: str = "secure",
    ) -> None:
        super().__init__(n_factors, lr, reg, n_epochs, batch_size, patience, eval_every, init_std, seed)
        self.noise = check_mode(noise, "DPMF.noise")
        if feedback not in FEEDBACK:
            raise ConfigError(f"DPMF.feedback: expected one of {FEEDBACK}, got {feedback!r}")
        self.feedback = feedback
        self.epsilon = check_positive("DPMF.epsilon", epsilon)
        self.rating_max = check_positive("DPMF.rating_max", rating_max)

    def _fit(self, train: Interactions, valid: Interactions | None) -> None:
        rng = np.random.default_rng(self.seed)
        self.module_ = self._tables()
        eta = objective_noise(self.n_items_, self.n_factors, self.epsilon, SENSITIVITY,
                              self.noise_source().generator("objective"))
        self.noise_ = torch.as_tensor(eta, dtype=torch.float32)
        users, items, targets = self._pairs(train)
        sampler = NegativeSampler(self.train_csr_, rng) if self.feedback == "implicit" else None
        optimizer = torch.optim.Adam(self.module_.parameters(), lr=self.lr)
        n = len(users)

        def run_epoch(epoch: int) -> float:
            negatives = None if sampler is None else torch.from_numpy(sampler.sample(users.numpy(), 1)[:, 0])
            total = 0.0
            for idx in minibatches(n, self.batch_size, rng):
                loss = self._batch_loss(users[idx], items[idx], targets[idx],
                                        None if negatives is None else negatives[idx])
                objective = loss + self._global_terms() / n
                optimizer.zero_grad()
                objective.backward()
                optimizer.step()
                self._project_users()
                total += loss.item() * len(idx)
            return total / n

        self.history_ = self._train(run_epoch, valid)

    def _fold_in(self, histories: Interactions) -> torch.Tensor:
        """A new user's factor from the released item factors, as the user's device computes it
        (Hua et al.: user factors never leave the device): the squared-loss minimiser over the
        scaled ratings (``foldin.ridge_fold_in``) or the BPR fold-in (``bpr.BPRFoldInLoss``),
        projected onto the unit ball like every trained user factor. Serving non-members uses
        only their own data, so it adds nothing to the members' privacy cost."""
        if self.feedback == "explicit":
            p = ridge_fold_in(self.item_factors_, histories.to_csr("ratings") / self.rating_max, self.reg)
        else:
            (p,) = gradient_fold_in([self.n_factors], histories.to_csr(), BPRFoldInLoss(self.item_factors_, self.reg),
                                    1, FOLD_IN_STEPS, FOLD_IN_LR, self.seed)  # fmt: skip
        return p / p.norm(dim=1, keepdim=True).clamp(min=1.0)

    def _pairs(self, train: Interactions) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Training pairs and, for explicit feedback, their ratings scaled to [0, 1]."""
        users = torch.from_numpy(train.users.astype(np.int64))
        items = torch.from_numpy(train.items.astype(np.int64))
        if self.feedback == "implicit":
            return users, items, torch.ones(len(users))
        if train.ratings is None:
            raise DataError(f"{train.name}: DPMF feedback='explicit' needs ratings; this dataset has none")
        if train.ratings.min() < 0 or train.ratings.max() > self.rating_max:
            raise DataError(f"{train.name}: ratings must lie in [0, {self.rating_max:g}] (DPMF.rating_max), "
                            f"got [{train.ratings.min():g}, {train.ratings.max():g}]")
        return users, items, torch.as_tensor(train.ratings / self.rating_max, dtype=torch.float32)

    def _batch_loss(self, users: torch.Tensor, items: torch.Tensor, targets: torch.Tensor,
                    negatives: torch.Tensor | None) -> torch.Tensor:
        """Mean loss of the batch: squared error, or BPR against ``negatives``."""
        u = self.module_.user[users]
        pos = (u * self.module_.item[items]).sum(-1)
        if negatives is None:
            return (targets - pos).pow(2).mean()
        return -F.logsigmoid(pos - (u * self.module_.item[negatives]).sum(-1)).mean()

    def _global_terms(self) -> torch.Tensor:
        """``λ/2 (||U||² + ||V||²) + Σ_j η_jᵀ v_j``."""
        tables = self.module_
        return 0.5 * self.reg * (tables.user.pow(2).sum() + tables.item.pow(2).sum()) + (self.noise_ * tables.item).sum()

    def _project_users(self) -> None:
        """``u <- u / max(1, ||u||)`` (the bound the sensitivity assumes)."""
        with torch.no_grad():
            user = self.module_.user
            user /= user.norm(dim=1, keepdim=True).clamp(min=1.0)

    def privacy_statement(self, context: StatementContext | None = None) -> PrivacyStatement:
        """The objective-perturbation claim with what it does not cover; ``context`` is not read."""
        notes = [
            "covers the item factors; each user's own factor (and so the recommendations computed with it) "
            "stays with that user in Hua et al.'s protocol",
            "assumes the exact minimiser of the perturbed objective; mini-batch Adam with early stopping approximates it",
        ]
        if self.feedback == "implicit":
            notes.append("Hua et al.'s proof is for the squared loss; the BPR variant (paper 002's DPMF_imp) is not covered")
        return self.noise_source().stamp(PrivacyStatement(
            epsilon=self.epsilon,
            delta=0.0,
            accountant=f"objective perturbation (Hua et al. 2015), sensitivity {SENSITIVITY:g}",
            unit="one rating / interaction of one user",
            scope="the released item factor matrix",
            notes=tuple(notes),
        ))
