"""The attack cells of the ``federated`` study: the honest-but-curious server attacks the
uploads of one extra round (digest G11) for every attribute, ζ, attacker and component of ΔΘ,
over ``attack_seeds`` random ζ-splits (mean ± sample sd, ``metrics.summary.mean_sd``).

Beside the paper's attackers every cell carries the blind baselines (majority, uniform) and,
for models with a feature user tower, the trivial zero-column rule on ``ΔE_U`` (digest §3.5,
G22): it reads which one-hot column of ΔE_U is non-zero, and misses only clients whose whole
ΔE_U is zero (``zero_update_share``). ``attack_inputs``: ``zscore`` (G12, the default) or
``raw``, the ablation that feeds the attackers the unscaled ΔΘ; ``fused_adam``: the DNN
attacker uses PyTorch's fused Adam (about 2x faster, not bitwise equal to the default).
"""

from __future__ import annotations

import numpy as np

from recprivacy.attacks.attribute import (
    COMPONENT_SETS,
    attack_report,
    component_matrix,
    zero_column_attack,
    zero_updates,
    zeta_split,
)
from recprivacy.experiments.federated.options import FederatedOptions
from recprivacy.federated.simulator import FederatedSimulator, RoundUploads
from recprivacy.metrics.attack import multiclass_attack_report
from recprivacy.metrics.summary import mean_sd

Cell = tuple[int, str, str, float, str, str]
"""(d, method, attribute, ζ, attacker, component) of one attack cell."""


def attack_round(sim: FederatedSimulator, up: RoundUploads, labels: dict, blocks: dict, options: FederatedOptions,
                 dim: int, method: str) -> tuple[int, dict[Cell, dict]]:  # fmt: skip
    """Attack the uploads ``up`` of the extra round: every attribute x ζ x attacker x component
    over ``attack_seeds`` splits, plus the zero-column rule. Returns the number of clients
    attacked and mean / std per cell."""
    deltas = up.pseudo_gradients(sim.local.lr)
    comps = sim.model.components()
    inputs = {c: component_matrix(deltas, comps, c) for c in options.components
              if any(comps[n] in COMPONENT_SETS[c] for n in deltas)}
    out: dict[Cell, dict] = {}
    zero_share = float(zero_updates(deltas["E_U"]).mean()) if "E_U" in deltas else None
    for attribute, (y_all, names) in labels.items():
        y = y_all[up.users]
        for zeta in options.zetas:
            for component, x in inputs.items():
                for kind in options.attackers:
                    reps = [attack_report(x, y, names, zeta, seed, kind, options.fused_adam, options.attack_inputs == "zscore")
                            for seed in range(options.attack_seeds)]
                    out[(dim, method, attribute, zeta, kind, component)] = summary(reps)
            if "E_U" in deltas and attribute in blocks:
                pred = zero_column_attack(deltas["E_U"], blocks[attribute])
                reps = [multiclass_attack_report(y[u], pred[u], np.arange(len(names)))
                        for u in (zeta_split(len(y), zeta, s)[1] for s in range(options.attack_seeds))]
                out[(dim, method, attribute, zeta, "zero-column", "user")] = {**summary(reps), "zero_update_share": zero_share}
    return len(up.users), out


def summary(reports: list[dict]) -> dict[str, float]:
    """Mean and sample sd over the splits' reports of weighted F1, macro F1 and accuracy, and
    the mean weighted F1 of the blind and the majority-class guess."""
    keys = ("weighted_f1", "macro_f1", "accuracy")
    out = {}
    for k in keys:
        stats = mean_sd(r[k] for r in reports)
        out[f"{k}_mean"], out[f"{k}_std"] = stats.mean, stats.sd
    out["blind_weighted_f1"] = float(np.mean([r["blind"]["weighted_f1"] for r in reports]))
    out["majority_weighted_f1"] = float(np.mean([r["baseline_majority"]["weighted_f1"] for r in reports]))
    return out
