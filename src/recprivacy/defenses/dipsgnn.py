"""DIPSGNN: differentially private sequential recommendation through a noisy GNN layer
(Hu & Fang, paper 002, Algorithms 1-4, Theorems 4.1-4.2).

Two protections, stated separately (the paper never adds them up):

* **user features, eps1-LDP** (Sec. 4.1): each user's encoded features ``x_u`` are perturbed
  once on the user's side by Algorithm 3 (``privacy.mechanisms.perturb_features``: k sampled
  features, numeric ones through the piecewise mechanism, categorical ones through OUE, the
  others zero) and the model reads ``e_u = x̂_u E_U``;
* **edges, (eps2, delta)-DP** (Sec. 4.3): in every propagation step the joint node states
  ``H = E ⊕ e_u`` are rescaled row by row to norm exactly C (Eq. 6),
  ``H̄_i = C h_i / ||h_i||``, so that changing one transition count moves ``A H̄`` by exactly C
  in Frobenius norm, and Gaussian noise is added to both aggregations (Eq. 7):
  ``Ĥ_out = A_out H̄ + N(0, sigma² I)``, ``Ĥ_in = A_in H̄ + N(0, sigma² I)``, fresh for every
  step, direction and forward pass. The GRU's hidden state is the normalised item part
  ``H̄[:, :d]`` (the paper's remark and the reference code agree). Theorem 4.2 gives
  ``sigma = C sqrt(T) / (sqrt(2(ln(1/delta) + eps2)) - sqrt(2 ln(1/delta)))``.

Decisions where the paper leaves a choice open (docs/decisions.md, "DIPSGNN (paper 002)"):

* noise standard deviation is sigma, as Theorem 4.2 assumes. The authors' released code adds
  ``sigma**2 * randn``, i.e. standard deviation sigma², far less noise whenever sigma < 1
  (sigma = 0.2374 at C = 0.2, eps2 = 5 becomes 0.0564). That behaviour exists only behind
  ``noise_std_mode="sigma_squared_legacy"``, and ``privacy_statement`` then reports the
  epsilon the smaller noise actually gives;
* noise is also added when scoring (``noise_at_inference=True``; Algorithm 4 has no separate
  test-time pass): recommendations
  are what is released. ``False`` reproduces the reference code (no noise at test time) and
  leaves inference and validation passes without edge protection;
* defaults C = 0.2, eps2 = 5, T = 1, eps1 = 20, delta = 2.5e-7 (the paper's ML-1M setting:
  ε2 = 5 and the best C of its Figure 6);
* the paper's ε2 covers one forward pass; the statement of the whole training run composes, with dp-accounting's RDP
  accountant, every Gaussian release that touches one transition occurrence: every prefix
  whose input holds it (``SRGNN.edge_reuse``) x epochs run x T x 2 (A_out H̄ and A_in H̄
  both change when one count changes). Gradients flowing through ``A H̄`` into the weights
  are not privatised (outside the paper's guarantee, and not changed here) and the statements say so;
* the feature reports and the aggregation noise come from ``noise``: operating-system entropy
  by default, seeded only in ``"simulation"`` mode; every statement names it;
* DIPSGNN wraps its backbone, an ``SRGNN`` object with raw transition counts
  (``defenses.private_srgnn``): it trains a copy whose network is ``NoisyAggregationNet``.
"""

from __future__ import annotations

from dataclasses import replace

import torch
import torch.nn.functional as F

from recprivacy.defenses.private_srgnn import PrivateSRGNN
from recprivacy.errors import ConfigError
from recprivacy.models.srgnn import SRGNN, SRGNNNet, UserEncoder
from recprivacy.privacy.accounting import (
    PrivacyStatement,
    StatementContext,
    check_positive,
    dipsgnn_composed_statement,
    dipsgnn_nominal_statement,
    dipsgnn_sigma,
)

NOISE_STD_MODES = ("sigma", "sigma_squared_legacy")


class NoisyAggregationNet(SRGNNNet):
    """SR-GNN network whose aggregation is DIPSGNN's (Eqs. 6-7): rows rescaled to norm C, then
    ``A H̄ + N(0, noise_std² I)`` for both directions.

    Noise is drawn from ``generator`` while training, and while scoring only when
    ``noise_at_inference``.
    """

    def __init__(self, n_items: int, hidden: int, n_steps: int, user: UserEncoder | None, C: float,
                 noise_std: float, noise_at_inference: bool, generator: torch.Generator) -> None:
        super().__init__(n_items, hidden, n_steps, "count", user)
        self.C = C
        self.noise_std = noise_std
        self.noise_at_inference = noise_at_inference
        self.generator = generator

    def scores_are_random(self) -> bool:
        return self.noise_std > 0 and self.noise_at_inference

    def noisy(self, aggregated: torch.Tensor) -> torch.Tensor:
        """``aggregated + N(0, noise_std²)`` entrywise when noise applies, else unchanged."""
        if self.noise_std == 0 or not (self.training or self.noise_at_inference):
            return aggregated
        return aggregated + self.noise_std * torch.randn(aggregated.shape, generator=self.generator)

    def aggregate(self, joint: torch.Tensor, a_in: torch.Tensor, a_out: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        normalised = F.normalize(joint, dim=-1, eps=1e-12) * self.C
        return self.noisy(a_in @ normalised), self.noisy(a_out @ normalised), normalised[..., : self.hidden]


class DIPSGNN(PrivateSRGNN):
    """DIPSGNN (paper 002): SR-GNN with LDP user features and the noisy aggregation layer.

    A training-time defence of the kind that is a model defined by its paper (``defenses.kinds``):
    the mechanism is DIPSGNN's own layer, trained into a copy of its SR-GNN backbone.

    Parameters
    ----------
    backbone:
        The ``SRGNN`` to train (unchanged; a copy is trained): ``adjacency="count"``; default
        ``SRGNN(adjacency="count", user_mode="features")``. Its ``n_steps`` is T.
    eps1:
        LDP budget of the user features (20; ``inf`` = clean features).
    eps2, delta:
        Edge-level budget of one forward pass (5, 2.5e-7); ``eps2 = inf`` turns the noise off.
    C:
        Row norm of the joint node states (0.2, the paper's best on ML-1M).
    noise_std_mode:
        ``"sigma"`` (Theorem 4.2) or ``"sigma_squared_legacy"`` (the authors' code).
    noise_at_inference:
        Also add the noise when scoring (True).
    accountant:
        dp-accounting accountant of the whole-run statement: ``"rdp"`` or ``"pld"``
        (``"zcdp"``: Theorem 4.2's own closed-form conversion).
    noise:
        ``"secure"`` (default) or ``"simulation"`` (seeded by the backbone's seed).
    """

    required = {"adjacency": "count"}
    headline = "edges, whole training run"

    def __init__(
        self,
        backbone: SRGNN | None = None,
        eps1: float = 20.0,
        eps2: float = 5.0,
        delta: float = 2.5e-7,
        C: float = 0.2,
        noise_std_mode: str = "sigma",
        noise_at_inference: bool = True,
        accountant: str = "rdp",
        noise: str = "secure",
    ) -> None:
        super().__init__(backbone, eps1, noise)
        self.eps2 = check_positive(f"{type(self).__name__}.eps2", eps2, allow_inf=True)
        self.C = check_positive(f"{type(self).__name__}.C", C)
        self.delta = delta
        self.noise_std_mode = noise_std_mode
        self.noise_at_inference = noise_at_inference
        self.accountant = accountant
        if noise_std_mode not in NOISE_STD_MODES:
            raise ConfigError(f"{type(self).__name__}.noise_std_mode: expected one of {NOISE_STD_MODES}, got {noise_std_mode!r}")
        self.sigma_ = dipsgnn_sigma(self.eps2, delta, self.C, self.n_steps)

    @property
    def noise_std(self) -> float:
        """Standard deviation of the noise actually added: sigma, or sigma² in legacy mode."""
        return self.sigma_**2 if self.noise_std_mode == "sigma_squared_legacy" else self.sigma_

    def network(self, model: SRGNN, user: UserEncoder | None) -> SRGNNNet:
        """The backbone's network with DIPSGNN's aggregation (Eqs. 6-7)."""
        return NoisyAggregationNet(model.n_items_, model.hidden, model.n_steps, user, self.C, self.noise_std,
                                   self.noise_at_inference, self.noise_generator())

    def privacy_statement(self, context: StatementContext | None = None) -> PrivacyStatement:
        """The edges over the whole run (headline), with the parts ``user features`` (local) and
        ``edges, one forward pass (paper)`` (as the paper states it, at the noise actually
        added); ``context`` is not read: the fitted run fixes the claim."""
        self._check_fitted()
        out = {"user features": self.feature_statement()}
        legacy = self.noise_std_mode == "sigma_squared_legacy"
        if self.noise_std == 0:
            unit = "one transition count (edge) of one user's behaviour graph"
            none = PrivacyStatement.no_guarantee(unit, "every forward pass", "no aggregation noise (eps2 = inf)")
            return self._stated({**out, "edges, one forward pass (paper)": none, "edges, whole training run": none})
        nominal = dipsgnn_nominal_statement(self.noise_std, self.C, self.n_steps, self.delta)
        if legacy:
            note = (f"noise std sigma^2 = {self.noise_std:.4g} (the authors' code) instead of sigma = {self.sigma_:.4g}: "
                    f"the claimed eps2 = {self.eps2:g} does not hold")
            nominal = replace(nominal, notes=(note,) + nominal.notes)
        out["edges, one forward pass (paper)"] = nominal
        out["edges, whole training run"] = self._composed(dipsgnn_composed_statement(
            self.noise_std, self.C, self.n_steps, self.delta, epochs=len(self.history_.losses),
            prefix_reuse=self.edge_reuse(), count_in_out=True, accountant=self.accountant))
        return self._stated(out)

    def _composed(self, statement: PrivacyStatement) -> PrivacyStatement:
        """Add what the whole-run figure leaves out when inference passes are noise-free."""
        if self.noise_at_inference:
            return statement
        note = "noise_at_inference=False: validation and scoring passes release A·H̄ without noise (not covered)"
        return replace(statement, notes=statement.notes + (note,))

