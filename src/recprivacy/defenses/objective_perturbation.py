"""The noise term of Hua, Xia & Zhong's objective perturbation (IJCAI 2015), shared by the
centralised DPMF baselines (``defenses.dpmf``) and federated F-DPMF
(``defenses.federated_dp.ItemObjectiveNoise``).

Both add ``Σ_j η_jᵀ v_j`` to the objective over item factors ``v_j``. With user factors in the
unit ball and ratings scaled to [0, 1], one rating changes the coefficient of ``v_j`` by at most
2 in L2 norm, so ``SENSITIVITY = Δ = 2``. Each ``η_j`` has density ∝ ``exp(-ε ||η|| / Δ)``: a
uniformly drawn direction times a norm ~ Gamma(d, Δ / ε) (``objective_noise``).

The module imports NumPy only, so a federated device (one Flower ClientApp process per
message) gets F-DPMF's noise without DPMF's models and data tables.
"""

from __future__ import annotations

import numpy as np

SENSITIVITY = 2.0


def objective_noise(n_items: int, n_factors: int, epsilon: float, sensitivity: float,
                    rng: np.random.Generator) -> np.ndarray:
    """``[n_items, n_factors]`` vectors with density ∝ ``exp(-eps ||η|| / Δ)``: uniform
    directions, norms ~ Gamma(n_factors, Δ / eps)."""
    directions = rng.standard_normal((n_items, n_factors))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    return directions * rng.gamma(n_factors, sensitivity / epsilon, size=(n_items, 1))
