"""Per-release audits of the upload defences (paper 004: APM, uniform LDP, Gaussian, FixRec), of
F-GERAI's feature LDP and functional mechanism and of F-DPMF's objective perturbation, which a
centrally trained target gives no row in the matrix.

Each defence's own ``ClippedNoise.perturb`` (clipping included, so a broken clip shows) is run
on ``n`` clients uploading one scalar of the ``user`` component far outside the clip bound on
either side, ``+10 delta`` or ``-10 delta`` (neighbours: one value changed as much as the
clip allows); the attacker's score is the noisy upload. The ROC lower bound
(``metrics.epsilon.roc_epsilon``) is set against the per-scalar, per-release claim (the unit
the paper states); claims above ``largest_roc_epsilon`` cannot be tested with ``n`` samples.

The two objective perturbations protect one training label (whether the user interacted with
the item) as it enters the local objective; the upload carries the objective's gradient
linearly (``Δq_v = -lr ∂L/∂q_v`` for one step), so the attacker's score is the gradient of the
defence's own perturbed loss for one sample whose label is 1 or 0 (neighbours: that label
changed), at logit 0 with the user vector a unit vector ``p``: for F-GERAI ``-∂L/∂s`` of
``FunctionalMechanism.loss`` (the clipped slope ``1/2 - r + η``, ``η ~ Lap(Δ_f/ε_f)``), for
F-DPMF ``-pᵀ ∂L/∂q_v`` of the BCE plus ``η_vᵀ q_v`` with ``η_v`` from
``ItemObjectiveNoise.draw``. Both claims are per label and per release of one local step.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from recprivacy.defenses.apm import ClippedNoise, make_defence
from recprivacy.defenses.federated_dp import FunctionalMechanism, ItemObjectiveNoise, ObjectiveNoise, make_baseline
from recprivacy.metrics.epsilon import judge_claim, largest_roc_epsilon, roc_epsilon
from recprivacy.privacy.mechanisms import GaussianMechanism, LaplaceMechanism

#: the upload defences audited, by ``defenses.apm.make_defence`` name
UPLOAD_DEFENCES = ("apm", "ldp", "gaussian", "fixrec_max", "fixrec_min")


def per_scalar_claim(defence: ClippedNoise) -> tuple[float, float, str]:
    """(epsilon, delta, accountant) of one release of one ``user`` scalar."""
    mech = defence.mechanisms["user"]
    if isinstance(mech, LaplaceMechanism):
        return mech.epsilon, 0.0, f"Laplace, sensitivity 2δ = {mech.sensitivity:g}"
    delta = 1e-5
    eps = GaussianMechanism(mech.sigma, 2 * defence.delta).epsilon_at(delta)
    return eps, delta, f"analytic Gaussian, σ = {mech.sigma:g}, sensitivity 2δ = {2 * defence.delta:g}"


def audit_upload_defence(name: str, n: int, seed: int) -> list:
    """One table row: claim, measured ROC bound, the largest testable bound, the reading."""
    defence = make_defence(name)
    bits = np.random.default_rng([seed, 4]).random(n) < 0.5
    uploads = {"u": torch.from_numpy(np.where(bits, 10.0, -10.0) * defence.delta)[:, None]}
    rngs = [np.random.default_rng([seed, 5, i]) for i in range(n)]
    scores = defence.perturb(uploads, {"u": "user"}, rngs)["u"].numpy().ravel()
    eps, delta, accountant = per_scalar_claim(defence)
    measured = roc_epsilon(bits, scores, delta).low
    limit = largest_roc_epsilon(int(bits.sum()), int((~bits).sum()))
    check = judge_claim(eps, measured, f"ROC over {n} single-scalar uploads", limit)
    return [name, eps, delta, accountant, "one uploaded scalar, one release", measured, limit, check.text]


def audit_feature_ldp(n: int, seed: int, eps_x: float = 1.0) -> list:
    """The row of F-GERAI's feature LDP (stage i, k-RR on each one-hot block): ``n`` users whose
    two-class block is ``[1, 0]`` or ``[0, 1]`` with probability 1/2 each (neighbours: the one
    attribute changed); the attacker's score is the reported first column. k-RR claims
    ``eps_x``-LDP per block and report, small enough for ``n`` samples to test."""
    ldp = make_baseline("fgerai", {"attribute": np.array([0, 1])}, eps_x=eps_x).features
    bits = np.random.default_rng([seed, 6]).random(n) < 0.5
    rngs = [np.random.default_rng([seed, 7, i]) for i in range(n)]
    scores = ldp.perturb(np.stack([bits, ~bits], axis=1).astype(float), np.arange(n), rngs)[:, 0]
    measured = roc_epsilon(bits, scores, 0.0).low
    limit = largest_roc_epsilon(int(bits.sum()), int((~bits).sum()))
    check = judge_claim(eps_x, measured, f"ROC over {n} one-block reports", limit)
    return ["fgerai (feature LDP)", eps_x, 0.0, "k-RR, k = 2", "one attribute of one user, one report", measured, limit,
            check.text]  # fmt: skip


def _label_bits_and_noise(objective: Any, n: int, seed: int, dim: int) -> tuple[np.ndarray, ObjectiveNoise]:
    """The neighbours' labels (1 with probability 1/2) and the objective's noise for ``n`` draws."""
    bits = np.random.default_rng([seed, 8]).random(n) < 0.5
    return bits, objective.draw(np.ones((1, n)), n, dim, np.random.default_rng([seed, 9]))


def audit_functional_mechanism(n: int, seed: int, fm: FunctionalMechanism | None = None) -> list:
    """F-GERAI's stage (ii) (``fm``, default the method's own): ``n`` one-sample objectives with
    label 1 or 0 (module docstring)."""
    fm = fm or make_baseline("fgerai", {}).objective
    bits, noise = _label_bits_and_noise(fm, n, seed, 1)
    logits = torch.zeros(n, dtype=torch.float64, requires_grad=True)
    labels = torch.from_numpy(bits.astype(float))
    fm.loss(logits, labels, torch.ones(n, dtype=torch.float64), torch.from_numpy(noise.slots[0])).backward()
    scores = -logits.grad.numpy()
    return _objective_row("fgerai (functional mechanism)", fm.epsilon, f"Laplace on the Taylor coefficient, Δ_f = "
                          f"{fm.sensitivity:g}, slope clipped to ±{fm.max_slope:g}", bits, scores)  # fmt: skip


def audit_item_objective(n: int, seed: int, objective: ItemObjectiveNoise | None = None, dim: int = 8) -> list:
    """F-DPMF (``objective``, default the method's own): ``n`` one-interaction objectives
    ``BCE(pᵀq, r) + η_vᵀ q`` (module docstring)."""
    objective = objective or make_baseline("fdpmf", {}).objective
    bits, noise = _label_bits_and_noise(objective, n, seed, dim)
    p = torch.zeros(dim, dtype=torch.float64)
    p[0] = 1.0
    q = torch.zeros(n, dim, dtype=torch.float64, requires_grad=True)
    labels = torch.from_numpy(bits.astype(float))
    loss = F.binary_cross_entropy_with_logits(q @ p, labels, reduction="sum") + (torch.from_numpy(noise.items) * q).sum()
    loss.backward()
    scores = -(q.grad @ p).numpy()
    return _objective_row("fdpmf (objective perturbation)", objective.epsilon,
                          f"Hua et al. objective noise, Δ = {objective.sensitivity:g}, d = {dim}", bits, scores)


def _objective_row(name: str, eps: float, accountant: str, bits: np.ndarray, scores: np.ndarray) -> list:
    measured = roc_epsilon(bits, scores, 0.0).low
    limit = largest_roc_epsilon(int(bits.sum()), int((~bits).sum()))
    check = judge_claim(eps, measured, f"ROC over {len(bits)} one-label gradients", limit)
    return [name, eps, 0.0, accountant, "one training label, one local step", measured, limit, check.text]


def mechanism_rows(n: int, seed: int) -> list[list]:
    """Rows of every upload defence's audit, of F-GERAI's feature LDP and functional mechanism and
    of F-DPMF's objective perturbation."""
    return ([audit_upload_defence(name, n, seed) for name in UPLOAD_DEFENCES]
            + [audit_feature_ldp(n, seed), audit_functional_mechanism(n, seed), audit_item_objective(n, seed)])  # fmt: skip
