"""Per-release audits of the upload defences (paper 004: APM, uniform LDP, Gaussian, FixRec) and
of F-GERAI's feature LDP, which a centrally trained target gives no row in the matrix.

Each defence's own ``ClippedNoise.perturb`` (clipping included, so a broken clip shows) is run
on ``n`` clients uploading one scalar of the ``user`` component far outside the clip bound on
either side, ``+10 delta`` or ``-10 delta`` (neighbours: one value changed as much as the
clip allows); the attacker's score is the noisy upload. The ROC lower bound
(``metrics.epsilon.roc_epsilon``) is set against the per-scalar, per-release claim (the unit
the paper states); claims above ``largest_roc_epsilon`` cannot be tested with ``n`` samples.
"""

from __future__ import annotations

import numpy as np
import torch

from recprivacy.defenses.apm import ClippedNoise, make_defence
from recprivacy.defenses.federated_dp import make_baseline
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


def mechanism_rows(n: int, seed: int) -> list[list]:
    """Rows of every upload defence's audit and of F-GERAI's feature LDP."""
    return [audit_upload_defence(name, n, seed) for name in UPLOAD_DEFENCES] + [audit_feature_ldp(n, seed)]
