"""Objective-perturbation baselines of paper 004 (Table II): F-GERAI, F-GERAI-NL, F-DPMF.

The paper names the baselines and their family but gives neither their equations nor their
budgets; this module's choices (docs/decisions.md, "Federated attribute inference and APM
(paper 004)": ε_x = ε_f = 1, F-DPMF uploading its item table only with ε = 40) are guesses at
the paper's implementation and are flagged as such.

* ``FeatureLDP`` -- GERAI's first stage, on the device, once, before any training: the
  statistical features of ``x_u`` (already in [0, 1] by construction, ``federated.features``;
  clipped to [0, 1] to guarantee it) get ``Lap(0, Δ / ε_x)`` each (``Δ = 1``, the range of one
  feature); each one-hot attribute block (gender, age group, occupation) is replaced by the
  one-hot of its k-ary randomized response with ``ε_x``. Both mechanisms come from
  ``recprivacy.privacy.mechanisms``. The noisy numeric values are clipped back to [0, 1]
  (``clip_output``; post-processing, so still ε_x-LDP): unclipped, Laplace(1) values of up to
  ±10 enter ``z_u = E_U x_u`` and, with the unbounded gradient of the Taylor objective below,
  local SGD diverged to NaN in the first round on ml-100k (docs/decisions.md, "F-GERAI"); clipped,
  it trains like F-GERAI-NL. The device keeps only the randomised ``x_u``; every round trains
  on it and the user also scores with it at evaluation.
* ``FunctionalMechanism`` -- GERAI's second stage (functional mechanism, Zhang et al. 2012) on
  the BCE of Eq. 8. With logit ``s`` and label ``r``, ``ℓ(s) = log(1 + e^s) - r s`` has the
  second-order Taylor expansion at ``s = 0``::

      ℓ(s) ≈ log 2 + (1/2 - r) s + s² / 8

  (``ℓ'(0) = σ(0) - r``, ``ℓ''(0) = σ(0)(1 - σ(0)) = 1/4``). Only the linear coefficient
  depends on the label; flipping ``r`` changes it by 1, so ``Δ_f = 1``. Each scheduled sample
  (every positive and negative of every local epoch) gets its own ``Lap(0, Δ_f / ε_f)`` on that
  coefficient, drawn from the client's ``objective`` stream of the round, and local SGD
  minimises the perturbed polynomial instead of the BCE. Uploads carry no added noise.
  Unlike the BCE, whose slope ``σ(s) - r`` stays in [-1, 1], the polynomial's slope
  ``u = a1 + s/4`` grows without bound, and with Laplace coefficients of up to ±10 local SGD
  diverged to NaN in the first round on ml-100k (which client: docs/decisions.md, "F-GERAI").
  So the slope is clipped to ``[-max_slope, max_slope]`` (default 1, the BCE's own bound):
  with ``a1 s + s²/8 = 2u² - 2a1²`` the loss is ``a0 - 2a1² + 4 huber(u, max_slope)``, which
  equals the polynomial wherever ``|u| <= max_slope``, is convex in ``s`` and has the same
  minimiser ``s* = -4 a1``. It is computed from the released noisy coefficient only, so it is
  post-processing and keeps ε_f; ``max_slope = inf`` restores the bare polynomial.
* ``ItemObjectiveNoise`` -- F-DPMF (Hua et al. 2015 made federated): federated MF (private
  ``p_u``, uploaded item table ``Q``) trained on ``L + Σ_v η_vᵀ q_v``, each ``η_v`` with
  density ∝ ``exp(-ε ||η|| / Δ)`` (norm ~ Gamma(d, Δ/ε), uniform direction), ``Δ = 2`` as in
  ``defenses.dpmf``, ``ε = 40`` (both share ``defenses.objective_perturbation``). As in Hua et
  al. (and ``defenses.dpmf``) ``η`` is drawn once per user (the ``objective`` stream of
  round 0) so each user's perturbed objective is fixed; in minibatch SGD step ``s`` takes the
  share ``w_s`` of the epoch's samples times ``η`` (one epoch adds the whole term once).

``make_baseline`` builds the four methods the study knows: ``fgerai`` (both stages),
``fgerai_nl`` (the functional mechanism only), ``fdpmf`` (MF + item objective noise) and
``fedmf`` (the same MF without noise, the paper's Figure 2 "MF"). Each ``FederatedBaseline``
states its claim with ``privacy_statement`` in a ``StatementContext`` (rounds, local epochs,
the width of ``x_u``); F-GERAI's lists its two guarantees as parts. Objective perturbation protects the *objective*
(the labels as they enter the loss), not what the uploads reveal about ``x_u``: with F-GERAI-NL
the true one-hot attributes enter ``z_u = E_U x_u`` unperturbed, so the zero columns of ``ΔE_U``
still name them exactly (the zero-column rule, ``attacks.attribute.zero_column_attack``); the statements say so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import ClassVar

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from recprivacy.defenses.kinds import DefenceKind
from recprivacy.defenses.objective_perturbation import SENSITIVITY as DPMF_SENSITIVITY
from recprivacy.defenses.objective_perturbation import objective_noise
from recprivacy.errors import ConfigError, DataError
from recprivacy.privacy.accounting import PrivacyStatement, StatementContext, basic_composition, check_positive
from recprivacy.privacy.mechanisms import LaplaceMechanism, RandomizedResponse

BASELINES = ("fgerai", "fgerai_nl", "fdpmf", "fedmf")
LABELS = {"fgerai": "F-GERAI", "fgerai_nl": "F-GERAI-NL", "fdpmf": "F-DPMF", "fedmf": "FedMF (no noise)"}
#: the names of F-GERAI's two guarantees (``FederatedBaseline.privacy_statement``)
FEATURES_PART, OBJECTIVE_PART = "feature vector x_u", "training labels in the local objective"


# ----------------------------------------------------------------------------- feature LDP


@dataclass(frozen=True)
class ObjectiveNoise:
    """One client's draw of its objective's noise: ``slots`` ``[steps, batch_size]`` (one value
    per scheduled sample, 0 where ``valid`` is False) and/or ``items`` ``[n_items, d]`` (the
    ``η_v`` of a linear item-table term)."""

    slots: np.ndarray | None = None
    items: np.ndarray | None = None


@dataclass(frozen=True)
class FeatureLDP:
    """GERAI stage (i): Laplace on the numeric features, k-RR on each one-hot block.

    ``blocks`` maps an attribute to its one-hot column indices (``UserFeatures.blocks``); every
    other column is numeric.
    """

    kind: ClassVar[DefenceKind] = "federated"
    epsilon: float = 1.0
    blocks: dict[str, tuple[int, ...]] = field(default_factory=dict)
    sensitivity: float = 1.0
    clip_output: bool = True
    name: str = "feature_ldp"

    def __post_init__(self) -> None:
        check_positive("eps_x (feature LDP epsilon)", self.epsilon)
        check_positive("feature LDP sensitivity", self.sensitivity)
        for attribute, cols in self.blocks.items():
            if len(cols) < 2:
                raise ConfigError(f"feature LDP: block {attribute!r} needs at least 2 one-hot columns, got {list(cols)}")

    def numeric_columns(self, n_columns: int) -> np.ndarray:
        in_block = np.zeros(n_columns, bool)
        for cols in self.blocks.values():
            in_block[list(cols)] = True
        return np.flatnonzero(~in_block)

    def perturb(self, x: np.ndarray, users: np.ndarray, rngs: Sequence[np.random.Generator]) -> np.ndarray:
        """Randomised rows of ``x``: row ``i`` (user ``users[i]``, named in errors) draws from
        ``rngs[i]``, first the Laplace noise of the numeric columns, then one k-RR report per
        block in ``blocks`` order (the federated protocol passes each user's ``features`` stream)."""
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 2 or not len(x) == len(users) == len(rngs):
            raise DataError(f"feature LDP: expected one feature row and one generator per user, got shape {x.shape}, "
                            f"{len(users)} users and {len(rngs)} generators")
        numeric = self.numeric_columns(x.shape[1])
        laplace = LaplaceMechanism(self.epsilon, self.sensitivity)
        rr = {a: RandomizedResponse(self.epsilon, len(cols)) for a, cols in self.blocks.items()}
        out = x.copy()
        for i, (u, rng) in enumerate(zip(users, rngs)):
            noisy = laplace.perturb(np.clip(x[i, numeric], 0.0, 1.0), rng)
            out[i, numeric] = np.clip(noisy, 0.0, 1.0) if self.clip_output else noisy
            for attribute, cols in self.blocks.items():
                cols = np.asarray(cols)
                block = x[i, cols]
                if not np.isclose(block.sum(), 1.0) or not np.isin(block, (0.0, 1.0)).all():
                    raise DataError(f"feature LDP: user {int(u)}'s {attribute} block {block.tolist()} is not one-hot")
                report = rr[attribute].perturb(np.array([int(np.argmax(block))]), rng)[0]
                out[i, cols] = 0.0
                out[i, cols[report]] = 1.0
        return out

    def keep_probability(self, attribute: str) -> float:
        """Probability that k-RR reports the true class of ``attribute``."""
        return RandomizedResponse(self.epsilon, len(self.blocks[attribute])).p

    def privacy_statement(self, context: StatementContext | None = None) -> PrivacyStatement:
        """``x_u`` of ``context.n_columns`` columns is released once: basic composition over its
        numeric features and blocks; without the width, the claim of one feature or block."""
        n_columns = (context or StatementContext()).n_columns
        keep = ", ".join(f"{a}: k={len(c)}, true class kept with p={self.keep_probability(a):.3f}" for a, c in self.blocks.items())
        if n_columns == 0:
            return PrivacyStatement(
                self.epsilon, 0.0, f"one Laplace feature (Δ={self.sensitivity:g}) or one k-RR block, released once",
                "one column or one attribute block of one user's feature vector x_u", "randomised once on the device "
                "before training", "local",
                (f"the width of x_u is not given (StatementContext.n_columns): x_u as a whole composes over its "
                 f"numeric columns and {len(self.blocks)} block(s)", f"attribute blocks: {keep or 'none'}"),
            )  # fmt: skip
        n_numeric = len(self.numeric_columns(n_columns))
        releases = n_numeric + len(self.blocks)
        return PrivacyStatement(
            basic_composition([self.epsilon], [releases]), 0.0,
            f"basic composition over {n_numeric} Laplace features (Δ={self.sensitivity:g}) and {len(self.blocks)} k-RR blocks",
            "one user's feature vector x_u (rating statistics and demographic one-hot attributes)",
            "randomised once on the device before training; every round reuses it, so rounds add nothing for x_u",
            "local",
            (f"each attribute block alone is {self.epsilon:g}-LDP ({keep})",
             "covers x_u only: the interactions (which item rows a client updates, its neighbourhood mean) are not randomised"),
        )  # fmt: skip


# ----------------------------------------------------------------------------- objectives


def taylor_coefficients(labels: np.ndarray, noise: np.ndarray | float = 0.0) -> tuple[float, np.ndarray, float]:
    """Coefficients ``(a0, a1, a2)`` of the perturbed second-order expansion of the BCE in the
    logit: ``a0 + a1 s + a2 s²`` with ``a0 = log 2``, ``a1 = 1/2 - r + noise``, ``a2 = 1/8``."""
    return math.log(2.0), 0.5 - np.asarray(labels, dtype=np.float64) + noise, 0.125


@dataclass(frozen=True)
class FunctionalMechanism:
    """GERAI stage (ii): per-sample ``Lap(0, Δ_f/ε_f)`` on the linear Taylor coefficient, and
    local SGD on the perturbed expansion with its slope in the logit clipped to
    ``[-max_slope, max_slope]`` (module docstring)."""

    kind: ClassVar[DefenceKind] = "federated"
    epsilon: float = 1.0
    sensitivity: float = 1.0
    max_slope: float = 1.0
    name: str = "functional_mechanism"
    fixed_across_rounds: bool = False

    def __post_init__(self) -> None:
        check_positive("eps_f (functional mechanism epsilon)", self.epsilon)
        check_positive("functional mechanism sensitivity", self.sensitivity)
        check_positive("functional mechanism max_slope", self.max_slope, allow_inf=True)

    @property
    def scale(self) -> float:
        return self.sensitivity / self.epsilon

    def draw(self, valid: np.ndarray, n_items: int, dim: int, rng: np.random.Generator) -> ObjectiveNoise:
        """``Lap(0, Δ_f/ε_f)`` for every scheduled sample (``valid`` ``[steps, batch_size]``), 0 on padding."""
        noise = LaplaceMechanism(self.epsilon, self.sensitivity).perturb(np.zeros(np.shape(valid)), rng)
        return ObjectiveNoise(slots=noise * valid)

    def loss(self, logits: Tensor, labels: Tensor, valid: Tensor, slots: Tensor | None) -> Tensor:
        """``Σ valid (a0 - 2 a1² + 4 huber(a1 + s/4, max_slope))`` over the step's samples,
        ``a1 = 1/2 - r + η``: the expansion ``a0 + a1 s + s²/8`` wherever its slope
        ``a1 + s/4`` lies within ``±max_slope``, continued linearly beyond."""
        a0, _, a2 = taylor_coefficients(np.zeros(0))
        a1 = 0.5 - labels + (0.0 if slots is None else slots)
        if math.isinf(self.max_slope):
            return ((a0 + a1 * logits + a2 * logits * logits) * valid).sum()
        slope = a1 + 2.0 * a2 * logits
        huber = F.huber_loss(slope, torch.zeros_like(slope), reduction="none", delta=self.max_slope)
        return ((a0 - 2.0 * a1 * a1 + 4.0 * huber) * valid).sum()

    def privacy_statement(self, context: StatementContext | None = None) -> PrivacyStatement:
        """Each label's coefficient is perturbed once per local epoch: ``R T_l ε_f`` with
        ``R = context.rounds``, ``T_l = context.local_epochs``."""
        ctx = context or StatementContext()
        rounds, local_epochs = ctx.rounds, ctx.local_epochs
        releases = rounds * local_epochs
        return PrivacyStatement(
            basic_composition([self.epsilon], [releases]), 0.0,
            f"functional mechanism per sample (Lap(0, {self.scale:g}) on the linear Taylor coefficient, Δ_f={self.sensitivity:g}); "
            "basic composition over local epochs and rounds",
            "one training label of one user (whether the user interacted with the item) as it enters the local objective",
            f"{rounds} round(s) x {local_epochs} local epochs (a user's positives are in every epoch of every round it takes part in)",
            "local",
            ("protects the objective, not the uploads: the uploaded parameters are not randomised and carry the signal of "
             "x_u (the zero columns of ΔE_U name one-hot attributes exactly unless x_u itself is randomised)",
             "which items a client scores and updates (its positives and sampled negatives) and its neighbourhood mean "
             "are not randomised, so the interacted item set is not protected",
             "Zhang et al.'s bound is for the exact minimiser of one perturbed polynomial; here local SGD runs from the "
             "global model on a second-order Taylor approximation of the BCE, so the epsilon is nominal"),
        )  # fmt: skip


@dataclass(frozen=True)
class ItemObjectiveNoise:
    """F-DPMF's objective term ``Σ_v η_vᵀ q_v`` on the item table; the per-sample loss stays
    the BCE (``loss = None``)."""

    kind: ClassVar[DefenceKind] = "federated"
    epsilon: float = 40.0
    sensitivity: float = DPMF_SENSITIVITY
    name: str = "item_objective_noise"
    fixed_across_rounds: bool = True

    def __post_init__(self) -> None:
        check_positive("F-DPMF epsilon", self.epsilon)
        check_positive("F-DPMF sensitivity", self.sensitivity)

    loss = None

    def draw(self, valid: np.ndarray | None, n_items: int, dim: int, rng: np.random.Generator) -> ObjectiveNoise:
        """One ``η_v`` per item (``valid``, the schedule, is not used)."""
        return ObjectiveNoise(items=objective_noise(n_items, dim, self.epsilon, self.sensitivity, rng))

    def privacy_statement(self, context: StatementContext | None = None) -> PrivacyStatement:
        """Nominal Hua et al. bound per upload, basic composition over ``context.rounds``."""
        rounds = (context or StatementContext()).rounds
        return PrivacyStatement(
            basic_composition([self.epsilon], [rounds]), 0.0,
            f"objective perturbation (Hua et al. 2015), Δ={self.sensitivity:g}, nominal; basic composition over rounds",
            "one interaction of one user",
            f"the item tables the user uploads in {rounds} round(s); its private vector p_u never leaves the device",
            "local",
            ("nominal only: Hua et al.'s proof is for the squared loss, user vectors in the unit ball and the exact "
             "minimiser of the perturbed objective; this is BCE with unconstrained p_u and a few epochs of SGD",
             "η is drawn once per user, so every round perturbs the same objective; the uploads themselves get no noise",
             "protects the objective, not the uploads: the changed item rows are the user's positives and sampled "
             "negatives, and their updates carry the user's signal, which is what the attribute attack reads"),
        )  # fmt: skip


# ----------------------------------------------------------------------------- methods


@dataclass(frozen=True)
class FederatedBaseline:
    """One Table II baseline: the model it forces (F-DPMF: federated MF), its on-device
    feature randomiser and its perturbed objective (uploads are not randomised)."""

    kind: ClassVar[DefenceKind] = "federated"
    name: str
    model: str | None = None
    features: FeatureLDP | None = None
    objective: FunctionalMechanism | ItemObjectiveNoise | None = None

    @property
    def label(self) -> str:
        return LABELS[self.name]

    def privacy_statement(self, context: StatementContext | None = None) -> PrivacyStatement:
        """The method's claim in ``context``: F-GERAI's headline is its feature LDP (the
        attributes), the objective's claim in its notes, both guarantees as its parts;
        F-GERAI-NL and F-DPMF state their objective claim; FedMF has none."""
        ctx = context or StatementContext()
        if self.name == "fedmf":
            return PrivacyStatement.no_guarantee(
                "one user's interactions", f"the item tables uploaded in {ctx.rounds} round(s)",
                "federated MF without noise: p_u stays on the device, the item-table updates are sent as they are")
        objective = self.objective.privacy_statement(ctx)
        if isinstance(self.objective, ItemObjectiveNoise):
            return objective
        if self.features is None:
            return PrivacyStatement(
                objective.epsilon, 0.0, objective.accountant, objective.unit, objective.scope, "local",
                ("the user's attributes have NO protection: x_u is used as it is (no feature perturbation)", *objective.notes))
        features = self.features.privacy_statement(ctx)
        head = PrivacyStatement(
            features.epsilon, 0.0, features.accountant, features.unit, features.scope, "local",
            (*features.notes, f"objective: {objective.epsilon:g}-LDP for {objective.unit} ({objective.scope})",
             *objective.notes[:1], *objective.notes[2:]))  # fmt: skip
        return replace(head, parts=((FEATURES_PART, features), (OBJECTIVE_PART, objective)))


def make_baseline(name: str, blocks: dict[str, np.ndarray] | None = None, eps_x: float = 1.0, eps_f: float = 1.0,
                  eps_dpmf: float = 40.0) -> FederatedBaseline:
    """A Table II baseline by name (``BASELINES``) with this module's defaults; ``blocks`` are
    the one-hot attribute columns of the user features (F-GERAI randomises them)."""
    if name == "fgerai":
        blocks = {a: tuple(int(c) for c in cols) for a, cols in (blocks or {}).items()}
        return FederatedBaseline(name, None, FeatureLDP(eps_x, blocks), FunctionalMechanism(eps_f))
    if name == "fgerai_nl":
        return FederatedBaseline(name, None, None, FunctionalMechanism(eps_f))
    if name == "fdpmf":
        return FederatedBaseline(name, "fedmf", None, ItemObjectiveNoise(eps_dpmf))
    if name == "fedmf":
        return FederatedBaseline(name, "fedmf")
    raise ConfigError(f"baseline: expected one of {list(BASELINES)}, got {name!r}")

