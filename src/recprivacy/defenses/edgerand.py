"""EdgeRand: Gaussian noise on the adjacency of every behaviour graph, the baseline DIPSGNN is
compared with (paper 002, Sec. 5.1.3; LapGraph with Gaussian instead of Laplace noise).

For each forward pass, the session-local transition counts get i.i.d. noise on every entry of
the real ``n_nodes x n_nodes`` block (padding nodes of the batch get none):
``Â_out = A_out + N(0, sigma_A²)``, ``Â_in = Â_outᵀ`` (post-processing), and the ordinary
count aggregation runs on ``Â`` in all T steps, with no row normalisation (the paper names
EdgeRand without these details). One count changes one entry by 1, so one release of ``Â_out`` is the Gaussian
mechanism with L2 sensitivity 1 and ``sigma_A`` comes from Theorem 4.2's closed form with
C = 1, T = 1: ``sigma_A = 1 / (sqrt(2(L + eps2)) - sqrt(2L))`` (1.1870 at eps2 = 5,
delta = 2.5e-7). User features are perturbed exactly as in DIPSGNN (eps1, Algorithm 3).

EdgeRand wraps an ``SRGNN`` backbone object with raw counts (``defenses.private_srgnn``) and
trains a copy whose network is ``NoisyAdjacencyNet``.

The whole-run statement composes one release per forward pass that holds the edge: prefixes
whose input window holds it x epochs (no factor 2: ``Â_in`` is computed from ``Â_out``).
"""

from __future__ import annotations

import torch

from recprivacy.defenses.private_srgnn import PrivateSRGNN
from recprivacy.models.srgnn import SRGNN, SessionGraphs, SRGNNNet, UserEncoder
from recprivacy.privacy.accounting import (
    PrivacyStatement,
    StatementContext,
    check_positive,
    compose_gaussian,
    dipsgnn_sigma,
)

_UNIT = "one transition count (edge) of one user's behaviour graph"


class NoisyAdjacencyNet(SRGNNNet):
    """SR-GNN network on ``Â_out = A_out + N(0, sigma²)`` (real nodes only), ``Â_in = Â_outᵀ``."""

    def __init__(self, n_items: int, hidden: int, n_steps: int, user: UserEncoder | None, sigma: float,
                 noise_at_inference: bool, generator: torch.Generator) -> None:
        super().__init__(n_items, hidden, n_steps, "count", user)
        self.sigma = sigma
        self.noise_at_inference = noise_at_inference
        self.generator = generator

    def scores_are_random(self) -> bool:
        return self.sigma > 0 and self.noise_at_inference

    def adjacencies(self, graphs: SessionGraphs) -> tuple[torch.Tensor, torch.Tensor]:
        a_out = graphs.adjacency
        if self.sigma > 0 and (self.training or self.noise_at_inference):
            real = graphs.node_mask[:, :, None] & graphs.node_mask[:, None, :]
            a_out = a_out + self.sigma * torch.randn(a_out.shape, generator=self.generator) * real
        return a_out.transpose(1, 2), a_out


class EdgeRand(PrivateSRGNN):
    """EdgeRand baseline (module docstring).

    Parameters
    ----------
    backbone:
        The ``SRGNN`` to train (unchanged; a copy is trained): ``adjacency="count"``; default
        ``SRGNN(adjacency="count", user_mode="features")``.
    eps1:
        LDP budget of the user features (20).
    eps2, delta:
        Edge-level budget of one release of a graph's adjacency (5, 2.5e-7).
    noise_at_inference:
        Perturb the adjacency when scoring too (True, as for DIPSGNN).
    accountant:
        dp-accounting accountant of the whole-run statement (``"rdp"``).
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
        noise_at_inference: bool = True,
        accountant: str = "rdp",
        noise: str = "secure",
    ) -> None:
        super().__init__(backbone, eps1, noise)
        self.eps2 = check_positive(f"{type(self).__name__}.eps2", eps2, allow_inf=True)
        self.delta = delta
        self.noise_at_inference = noise_at_inference
        self.accountant = accountant
        self.sigma_ = dipsgnn_sigma(self.eps2, delta, 1.0, 1)

    def network(self, model: SRGNN, user: UserEncoder | None) -> SRGNNNet:
        """The backbone's network on the noisy adjacency."""
        return NoisyAdjacencyNet(model.n_items_, model.hidden, model.n_steps, user, self.sigma_, self.noise_at_inference,
                                 self.noise_generator())

    def privacy_statement(self, context: StatementContext | None = None) -> PrivacyStatement:
        """The edges over the whole training run (headline), with the parts ``user features``
        and ``edges, one forward pass (paper)`` (one release of a graph); ``context`` is not
        read: the fitted run fixes the claim."""
        self._check_fitted()
        out = {"user features": self.feature_statement()}
        if self.sigma_ == 0:
            none = PrivacyStatement.no_guarantee(_UNIT, "every forward pass", "no adjacency noise (eps2 = inf)")
            return self._stated({**out, "edges, one forward pass (paper)": none, "edges, whole training run": none})
        out["edges, one forward pass (paper)"] = PrivacyStatement(
            epsilon=self.eps2, delta=self.delta, unit=_UNIT,
            accountant="Gaussian mechanism, sensitivity 1, Theorem 4.2 conversion with C = 1, T = 1",
            scope="one noisy adjacency of one user graph (one forward pass)",
            notes=("no composition over training prefixes or epochs",),
        )
        releases = self.edge_reuse() * len(self.history_.losses)
        notes = ["inference-time releases are not included"]
        if not self.noise_at_inference:
            notes.append("noise_at_inference=False: validation and scoring passes read A without noise (not covered)")
        out["edges, whole training run"] = PrivacyStatement(
            epsilon=compose_gaussian(self.sigma_, releases, self.delta, self.accountant),
            delta=self.delta, unit=_UNIT, accountant=f"{self.accountant} (dp-accounting)",
            scope=f"whole training run: {self.edge_reuse()} prefix(es) x {len(self.history_.losses)} epoch(s), one release each",
            notes=tuple(notes),
        )
        return self._stated(out)
