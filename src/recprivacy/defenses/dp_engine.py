"""DP-SGD (Abadi et al., CCS 2016) for every torch recommender: ``make_private``.

``make_private(recommender, epsilon, delta)`` returns an unfitted recommender that trains a copy
of ``recommender`` by DP-SGD. As in Opacus's ``PrivacyEngine.make_private``, the engine is kept
apart from the model: the model states its training as per-example losses owned by users
(``Recommender.private_task``, ``models.examples``), and the engine samples, clips, adds noise,
steps the optimizer and accounts. BPR-MF, LightGCN, NCF and SASRec train here; an ``SRGNN`` is
handed to the verified SR-GNN engine ``defenses.dpsgd.DPSGD`` (book-keeping clipping, one
training prefix per unit; its statement says so).

One step (``PrivateRecommender``):

1. Poisson sampling of users: every user with a training example is in the step with
   probability ``q = batch_users / N`` (``N`` such users), drawn from the protection randomness;
2. each sampled user's gradient ``g_u = ∇_θ Σ_{x owned by u} ℓ(θ; x)`` (every parameter of the
   network) is computed by ``torch.func`` (``vmap`` of ``grad`` over users, each user's examples
   padded to its chunk's longest and masked), or for a row-local loss (BPR-MF) by one backward
   pass on the rows each user touches (``row_local_clipped_sum``), and clipped to L2 norm ``C``:
   ``clip(g, C) = g · min(1, C / (‖g‖ + 10⁻⁶))``;
3. ``g̃ = (1/(qN)) (Σ_u clip(g_u, C) + N(0, σ²C²I))``, ``qN`` the expected batch size
   (``noisy_mean``), on which the optimizer (Adam or SGD) steps (post-processing).

The noise multiplier ``σ`` is the smallest that keeps ``n_epochs x round(1/q)`` steps within
``(epsilon, delta)`` under dp-accounting's RDP (or PLD) accountant
(``privacy.accounting.dpsgd_noise_multiplier``); the statement recomputes ε for the steps
taken.

Unit of privacy: **one user** (user-level DP): every training example a user owns -- for BPR-MF
and LightGCN the user's (user, positive, negative) triples, for NCF the user's labelled pairs
and their negatives, for SASRec the user's training sequence -- is in one clipped gradient, so
adding or removing a user, with all of their interactions, moves the sum by at most ``C``.
Negatives are drawn from the items the owner has not interacted with, so they depend on the
owner's data only.

Personal rows (``personal_rows=True``, the default): a user's own embedding rows (BPR-MF's
``p_u``, NCF's user tables; ``ExampleTask.personal``) are read only by that user's examples and
scores. They are trained on the user's gradient without clipping or noise and are never
released; the shared parameters (the item side, the networks) are DP-SGD's output. Other users'
rows depend only on their own data and the noisy shared parameters, so by adaptive composition
the shared parameters, and every list served to any *other* user, are ``(ε, δ)``-DP in user u:
joint differential privacy (Kearns et al. 2014, the billboard lemma; the private personalization
of Jain et al. 2021). User u's own list depends on u's own data without noise. With noise on
every parameter instead (``personal_rows=False``) each ``p_u`` receives noise of ``σC`` per
coordinate against a signal of norm at most ``C`` and BPR-MF ranks no better than chance on
ml-100k at ε = 4 (docs/decisions.md, "make_private"). Two further limits, stated in
``privacy_statement``:

* LightGCN's propagation ``Â`` is built from every user's interactions and enters every user's
  loss unclipped: the ε holds for a user's loss terms with the graph held fixed, and is *not*
  a guarantee for the user's interactions (``ExampleTask.coupling``);
* training runs exactly ``n_epochs``: ``fit``'s ``valid`` is not read (no early stopping), so
  no data outside the accounting chooses the released weights.

Noise and sampling come from ``NoiseSource(noise, seed)``: operating-system entropy by default
(``"secure"``), seeded by the recommender's seed only in ``"simulation"`` mode.

Decision: per-user gradients by ``torch.func`` rather than Opacus (measured in
``benchmarks/dp_engine.py``, recorded in docs/decisions.md, "make_private"): Opacus's unit is one
row of a batch, so user-level clipping would need its per-example gradients summed per user
first; its hooks see only ``nn.Embedding``/``nn.Linear`` calls (BPR-MF's tables are bare
parameters, LightGCN propagates through a sparse product, SR-GNN and SASRec score against the
item table), and its embedding per-sample gradients are dense ``[B, n_rows, d]`` tensors like
``vmap``'s.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
import torch
from torch import nn
from torch.func import functional_call, grad_and_value, vmap

from recprivacy.data.interactions import Interactions
from recprivacy.defenses.dpsgd import DPSGD
from recprivacy.defenses.kinds import DefenceKind
from recprivacy.defenses.trained_copy import TrainedCopy
from recprivacy.errors import ConfigError
from recprivacy.models.base import PRIVATE_TRAINABLE, Recommender
from recprivacy.models.examples import ExampleTask
from recprivacy.models.srgnn import SRGNN
from recprivacy.models.training import TrainingHistory, fit_epochs
from recprivacy.privacy.accounting import (
    PrivacyStatement,
    StatementContext,
    check_count,
    check_delta,
    check_positive,
    dpsgd_epsilon,
    dpsgd_noise_multiplier,
)
from recprivacy.privacy.randomness import NoiseMixin, check_mode

#: per-user gradient floats computed at once (``vmap`` chunk: units x parameters), 64 MB
CHUNK_FLOATS = 1 << 24
Gradients = dict[str, torch.Tensor]
#: the optimizers that step on the noisy gradient (post-processing: any would keep the guarantee)
OPTIMIZERS: dict[str, Callable[..., torch.optim.Optimizer]] = {"adam": torch.optim.Adam, "sgd": torch.optim.SGD}


def make_private(recommender: Recommender, epsilon: float = 4.0, delta: float = 1e-6, max_grad_norm: float = 1.0,
                 accountant: str = "rdp", noise: str = "secure", **engine: Any) -> Recommender:  # fmt: skip
    """``recommender`` (unfitted, unchanged) wrapped to train by DP-SGD at ``(epsilon, delta)``
    (module docstring): a ``PrivateRecommender`` (user-level) for BPR-MF, LightGCN, NCF and
    SASRec, the SR-GNN engine ``DPSGD`` (one training prefix per unit; clean user features) for
    an ``SRGNN``. ``engine`` holds ``PrivateRecommender``'s other arguments (``batch_users``,
    ``n_epochs``, ``lr``)."""
    if isinstance(recommender, SRGNN):
        if engine:
            raise ConfigError(f"make_private: an SRGNN trains with its own batch_size and n_epochs; "
                              f"unexpected {sorted(engine)}")
        return DPSGD(recommender, eps1=math.inf, eps2=epsilon, delta=delta, max_grad_norm=max_grad_norm,
                     accountant=accountant, noise=noise)
    return PrivateRecommender(recommender, epsilon, delta, max_grad_norm, accountant=accountant, noise=noise, **engine)


def noisy_mean(summed: Gradients, std: float, expected: float, generator: torch.Generator) -> Gradients:
    """``(summed + N(0, std² I)) / expected`` for every parameter: DP-SGD's
    ``g̃ = (1/(qN)) (Σ_u clip(g_u, C) + N(0, σ²C²I))`` with ``std = σC`` and ``expected = qN``."""
    return {k: (v + std * torch.randn(v.shape, generator=generator)) / expected for k, v in summed.items()}


def clip_factors(norms: torch.Tensor, max_norm: float) -> torch.Tensor:
    """``min(1, C / (‖g‖ + 10⁻⁶))`` per unit: the factor that clips each gradient to norm ``C``."""
    return (max_norm / (norms + 1e-6)).clamp(max=1.0)


class _Losses(nn.Module):
    """A task's per-example losses as a module's ``forward``, so ``functional_call`` evaluates
    them at other parameter values."""

    def __init__(self, task: ExampleTask) -> None:
        super().__init__()
        self.net = task.module
        self.losses = task.losses

    def forward(self, *examples: torch.Tensor) -> torch.Tensor:
        return self.losses(*examples)


def padded_units(owners: np.ndarray, n_units: int, units: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Example indices ``[len(units), E]`` of the given units (``owners[k]`` is example k's
    unit), each row padded to the longest by repeating its first example, and the mask
    ``[len(units), E]`` of real examples (float32). Every unit must own an example."""
    order = np.argsort(owners, kind="stable")
    counts = np.bincount(owners, minlength=n_units)
    starts = np.cumsum(counts) - counts
    width = int(counts[units].max())
    slots = np.arange(width)[None, :]
    real = slots < counts[units][:, None]
    return order[starts[units][:, None] + np.where(real, slots, 0)], real.astype(np.float32)


def clipped_sum(module: nn.Module, owners: np.ndarray, examples: tuple[torch.Tensor, ...], n_units: int,
                max_norm: float, personal: frozenset[str] = frozenset(),
                lookups: tuple[str, ...] = ()) -> tuple[Gradients, float]:  # fmt: skip
    """``Σ_u clip(g_u, C)`` over the ``n_units`` units and the mean unit loss, where ``g_u`` is
    the gradient of the sum of unit u's example losses (``module(*examples)`` gives each
    example's loss) over every parameter of ``module`` but the ``personal`` ones, whose
    gradients are summed unclipped (module docstring); ``torch.func`` per-unit gradients in
    chunks of units with similar example counts (``CHUNK_FLOATS``), or, when ``lookups`` names
    the table each example tensor indexes and the tables are all of ``module``'s parameters,
    ``row_local_clipped_sum``."""
    params = {k: v.detach() for k, v in module.named_parameters()}
    summed = {k: torch.zeros_like(v) for k, v in params.items()}
    if n_units == 0:
        return summed, 0.0
    if lookups and set(lookups) - {""} == set(params):
        return row_local_clipped_sum(module, owners, examples, n_units, max_norm, personal, lookups)

    def unit_loss(p: Gradients, mask: torch.Tensor, *unit: torch.Tensor) -> torch.Tensor:
        return (functional_call(module, p, unit) * mask).sum()

    per_unit = vmap(grad_and_value(unit_loss), in_dims=(None, 0) + (0,) * len(examples), randomness="different")
    size = max(1, CHUNK_FLOATS // sum(v.numel() for v in params.values()))
    by_count = np.argsort(np.bincount(owners, minlength=n_units), kind="stable")
    total = 0.0
    for lo in range(0, n_units, size):
        index, mask = padded_units(owners, n_units, by_count[lo : lo + size])
        rows = torch.from_numpy(index)
        grads, losses = per_unit(params, torch.from_numpy(mask), *(t[rows] for t in examples))
        shared = [g for k, g in grads.items() if k not in personal]
        factor = clip_factors(torch.sqrt(sum(g.flatten(1).pow(2).sum(1) for g in shared)), max_norm)
        for k, g in grads.items():
            summed[k] += g.sum(0) if k in personal else torch.einsum("b,b...->...", factor, g)
        total += float(losses.sum())
    return summed, total / n_units


def row_local_clipped_sum(module: nn.Module, owners: np.ndarray, examples: tuple[torch.Tensor, ...], n_units: int,
                          max_norm: float, personal: frozenset[str], lookups: tuple[str, ...]) -> tuple[Gradients, float]:  # fmt: skip
    """``clipped_sum`` for a row-local loss (``models.examples.ExampleTask.lookups``: example
    tensor c indexes table ``lookups[c]``, or no table for ``""``, and every parameter is such a
    table), with one backward pass and no per-unit copy of a table.

    Unit u's gradient on table T is non-zero only on the rows R_u(T) its examples index. Each
    (unit, row) pair gets a row of its own in a *pair table* ``T_pairs = T[rows of the pairs]``
    and each example reads its unit's pair rows, so the gradient of ``Σ_examples ℓ`` on
    ``T_pairs`` holds ``g_u`` on row r at pair (u, r) exactly. Then
    ``‖g_u‖² = Σ_T Σ_{r ∈ R_u(T)} ‖g_{u,r}‖²`` over the non-personal tables, and
    ``Σ_u clip(g_u, C)`` adds each pair's row, times its unit's clip factor (1 for a personal
    table), to row r of T."""
    params = dict(module.named_parameters())
    unit_of = torch.from_numpy(np.asarray(owners, dtype=np.int64))
    pairs: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}  # table -> (its row, its unit) per pair
    leaves: dict[str, torch.Tensor] = {}
    local: list[torch.Tensor] = list(examples)
    for table in dict.fromkeys(name for name in lookups if name):
        columns = [c for c, name in enumerate(lookups) if name == table]
        n_rows = params[table].shape[0]
        keys, inverse = torch.unique(torch.cat([unit_of * n_rows + examples[c] for c in columns]), return_inverse=True)
        pairs[table] = (keys % n_rows, keys // n_rows)
        leaves[table] = params[table].detach()[pairs[table][0]].requires_grad_(True)
        for c, part in zip(columns, inverse.split(len(unit_of))):
            local[c] = part
    losses = functional_call(module, leaves, tuple(local))
    grads = dict(zip(leaves, torch.autograd.grad(losses.sum(), list(leaves.values()))))
    squares = torch.zeros(n_units)
    for table, g in grads.items():
        if table not in personal:
            squares.index_add_(0, pairs[table][1], g.pow(2).sum(1))
    factor = clip_factors(torch.sqrt(squares), max_norm)
    summed = {}
    for table, g in grads.items():
        rows, units = pairs[table]
        weighted = g if table in personal else g * factor[units, None]
        summed[table] = torch.zeros_like(params[table]).index_add_(0, rows, weighted.detach())
    return summed, float(losses.detach().sum()) / n_units


class PrivateRecommender(TrainedCopy, NoiseMixin, Recommender):
    """A torch recommender trained by user-level DP-SGD (module docstring).

    Parameters
    ----------
    recommender:
        The unfitted model (``BPRMF``, ``LightGCN``, ``NCF`` or ``SASRec``); a copy is trained.
    epsilon, delta:
        Target ``(ε, δ)`` of the whole training run, per user; ``δ < 1 / N`` is required.
    max_grad_norm:
        ``C``, the clipping norm of each user's gradient (1.0).
    batch_users:
        Expected users per step, ``qN`` (256; all users when there are fewer).
    n_epochs:
        Training length in epochs of ``round(1/q)`` steps (20).
    lr, optimizer:
        Learning rate (default: the recommender's ``lr``) and ``"adam"`` (default) or ``"sgd"``.
    personal_rows:
        Train each user's own embedding rows (``ExampleTask.personal``) without clipping or
        noise and release them to nobody but their user (joint DP; module docstring) (True), or
        clip and noise every parameter (False).
    accountant:
        ``"rdp"`` or ``"pld"`` (dp-accounting).
    noise:
        ``"secure"`` (default) or ``"simulation"`` (seeded by the recommender's seed).

    Attributes
    ----------
    model_:
        The trained copy; fitted state (``item_factors_``, ``net_``, ...) is read from it.
    noise_multiplier_, sample_rate_, steps_, n_units_, history_:
        ``σ``, ``q``, the steps taken, ``N``, the mean unit loss per epoch.
    """

    kind: ClassVar[DefenceKind] = "training"

    def __init__(self, recommender: Recommender, epsilon: float = 4.0, delta: float = 1e-6, max_grad_norm: float = 1.0,
                 batch_users: int = 256, n_epochs: int = 20, lr: float | None = None, optimizer: str = "adam",
                 personal_rows: bool = True, accountant: str = "rdp", noise: str = "secure") -> None:  # fmt: skip
        name = type(self).__name__
        if type(recommender).private_task is Recommender.private_task or isinstance(recommender, SRGNN):
            raise ConfigError(f"{name}: cannot train {type(recommender).__name__} by DP-SGD; supported: "
                              f"{', '.join(PRIVATE_TRAINABLE)} (SRGNN through make_private)")
        if optimizer not in OPTIMIZERS:
            raise ConfigError(f"{name}.optimizer: expected one of {sorted(OPTIMIZERS)}, got {optimizer!r}")
        if accountant not in ("rdp", "pld"):
            raise ConfigError(f"{name}.accountant: expected 'rdp' or 'pld', got {accountant!r}")
        self.recommender = recommender
        self.epsilon = check_positive(f"{name}.epsilon", epsilon)
        self.delta = delta
        self.max_grad_norm = check_positive(f"{name}.max_grad_norm", max_grad_norm)
        self.batch_users = check_count(f"{name}.batch_users", batch_users)
        self.n_epochs = check_count(f"{name}.n_epochs", n_epochs)
        self.lr = check_positive(f"{name}.lr", lr if lr is not None else getattr(recommender, "lr", math.nan))
        self.optimizer = optimizer
        self.personal_rows = bool(personal_rows)
        self.accountant = accountant
        self.noise = check_mode(noise, f"{name}.noise")

    @property
    def wrapped(self) -> Recommender:
        return self.recommender

    @property
    def seed(self) -> int:
        """The recommender's seed (its initialisation, negatives and simulation noise)."""
        return self.recommender.seed

    def __getattr__(self, name: str) -> Any:
        """Fitted state and model methods from the trained copy."""
        model = self.__dict__.get("model_")
        if name.startswith("__") or model is None:
            raise AttributeError(name)
        return getattr(model, name)

    # ------------------------------------------------------------------ training
    def fit(self, train: Interactions, valid: Interactions | None = None) -> "PrivateRecommender":
        """Train a copy of the recommender by DP-SGD for ``n_epochs``; ``valid`` is not read
        (module docstring)."""
        model = copy.deepcopy(self.recommender)
        task = model.private_task(train)
        self.n_units_ = len(task.users)
        check_delta(self.delta, self.n_units_)
        self.sample_rate_ = min(1.0, self.batch_users / self.n_units_)
        steps_per_epoch = max(1, int(round(1.0 / self.sample_rate_)))
        self.noise_multiplier_ = dpsgd_noise_multiplier(self.epsilon, self.delta, self.sample_rate_,
                                                        self.n_epochs * steps_per_epoch, self.accountant)
        self.steps_ = 0
        self.coupling_ = task.coupling
        self.personal_ = task.personal if self.personal_rows else ()
        step = self._stepper(task)
        self.history_: TrainingHistory = fit_epochs(
            task.module, lambda epoch: float(np.mean([step() for _ in range(steps_per_epoch)])), self.n_epochs,
            desc=f"DP-SGD {type(model).__name__}")  # fmt: skip
        task.finish()
        self.model_ = model
        self.n_users_, self.n_items_, self.train_csr_ = model.n_users_, model.n_items_, model.train_csr_
        return self

    def _stepper(self, task: ExampleTask) -> Callable[[], float]:
        """One DP-SGD step on ``task`` (module docstring), returning the mean unit loss."""
        losses = _Losses(task)
        optimizer = OPTIMIZERS[self.optimizer](task.module.parameters(), lr=self.lr)
        sampling = self.noise_source().generator("poisson sampling")
        gradient_noise = self.noise_source().torch_generator("gradient noise")
        named = dict(losses.named_parameters())
        personal = frozenset(f"net.{k}" for k in self.personal_)
        lookups = tuple(f"net.{k}" for k in task.lookups)
        expected = self.sample_rate_ * self.n_units_

        def step() -> float:
            users = task.users[sampling.random(self.n_units_) < self.sample_rate_]
            owners, examples = task.draw(users) if len(users) else (np.zeros(0, np.int64), ())
            summed, loss = clipped_sum(losses, owners, examples, len(users), self.max_grad_norm, personal, lookups)
            shared = {k: v for k, v in summed.items() if k not in personal}
            noised = noisy_mean(shared, self.noise_multiplier_ * self.max_grad_norm, expected, gradient_noise)
            for k in personal:
                noised[k] = summed[k] / expected
            for k, g in noised.items():
                named[k].grad = g
            optimizer.step()
            self.steps_ += 1
            return loss

        return step

    # ------------------------------------------------------------------ privacy
    def privacy_statement(self, context: StatementContext | None = None) -> PrivacyStatement:
        """User-level ``(ε, δ)`` of the steps taken (module docstring), with the sampling rate,
        noise multiplier and clipping norm; ``context`` is not read: the fitted run fixes it."""
        self._check_fitted()
        model = type(self.recommender).__name__
        notes = ["validation data is not read (no early stopping): the released weights are those of the last step",
                 f"per-user gradients clipped to C = {self.max_grad_norm:g}; {self.n_units_} users"]
        unit = f"one user: every training interaction of the user ({model}'s examples grouped by user)"
        scope = f"whole training run: {self.steps_} DP-SGD steps; every released parameter and what is computed from it"
        if self.personal_:
            scope = (f"whole training run: {self.steps_} DP-SGD steps; the shared parameters and every list served to "
                     f"another user (joint DP); each user's own rows ({', '.join(self.personal_)}) are not released")
            notes.insert(0, "a user's own rows are trained on the user's data without noise: the list served to that "
                            "user is not covered for that user")
        if self.coupling_:
            unit = f"one user's loss terms with the interaction graph held fixed ({model})"
            notes.insert(0, f"NOT a guarantee for a user's interactions: {self.coupling_}")
        return self.noise_source().stamp(PrivacyStatement(
            epsilon=dpsgd_epsilon(self.noise_multiplier_, self.sample_rate_, self.steps_, self.delta, self.accountant),
            delta=self.delta,
            accountant=f"{self.accountant} (dp-accounting), Poisson sampling of users q = {self.sample_rate_:.3g}, "
                       f"noise multiplier {self.noise_multiplier_:.4g}",
            unit=unit,
            scope=scope,
            setting="joint" if self.personal_ else "central",
            notes=tuple(notes),
        ))
