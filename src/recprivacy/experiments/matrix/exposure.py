"""The exposure column of the attack x defence matrix: exposure leakage (paper 000) from each
world's logged slates, by a frozen attacker (trained on the undefended target's slates) and an
adaptive one (retrained on the world's slates); exposure perturbation's utility cost is the
slates' next-item recall against the clean slates'."""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import PositiveInt

from recprivacy.attacks.exposure import ExposureAttack
from recprivacy.config import Config, StudyOptions
from recprivacy.data.exposure_pairs import ExposurePairs, simulate_exposure, split_pairs, user_groups
from recprivacy.defenses.exposure_perturbation import ExposurePerturbation, next_item_recall
from recprivacy.experiments.matrix.cells import MatrixCell, exposure_judged
from recprivacy.experiments.matrix.world import World
from recprivacy.experiments.matrix.plan import ATTACKS, not_applicable
from recprivacy.experiments.results import Results
from recprivacy.experiments.train import PreparedData
from recprivacy.metrics.intervals import Estimate, paired_difference_interval, weighted_mean
from recprivacy.models.base import Recommender

EXPOSURE = next(a for a in ATTACKS if a.key == "exposure")


class ExposureCellOptions(StudyOptions):
    """The exposure column: simulated slates and one attacker (reduced training by default)."""

    history_len: PositiveInt = 5
    slate_size: PositiveInt = 10
    max_pairs_per_user: PositiveInt = 5
    attacker: str = "mean+gru"
    dim: PositiveInt = 32
    n_epochs: PositiveInt = 5
    patience: PositiveInt = 2


def exposure_column(config: Config, options: Any, data: PreparedData, worlds: list[World],
                    results: Results) -> None:  # fmt: skip
    """Exposure leakage from each world's slates, frozen (the attacker trained on the
    undefended target's slates) and adaptive (retrained on the world's slates)."""
    o = options.exposure
    groups = user_groups(np.flatnonzero(data.full.user_counts() > o.history_len), data.full.n_users, config.seed)

    def parts_of(model: Recommender) -> dict[str, ExposurePairs]:
        pairs = simulate_exposure(model, data.full, o.history_len, o.slate_size, max_pairs_per_user=o.max_pairs_per_user)
        return split_pairs(pairs, groups)

    def fitted(parts: dict[str, ExposurePairs]) -> ExposureAttack:
        encoder, _, decoder = o.attacker.partition("+")
        attack = ExposureAttack(encoder, decoder, dim=o.dim, n_epochs=o.n_epochs, patience=o.patience, seed=config.seed)
        return attack.fit(parts["train"], parts["valid"])

    clean = parts_of(worlds[0].model)
    frozen = fitted(clean)
    for world in worlds:
        if (why := not_applicable(EXPOSURE, world.spec)) is not None:
            world.cells["exposure"] = MatrixCell(reason=why)
            continue
        if world.spec.key == "none":
            judged = exposure_judged(frozen, clean)
            world.cells["exposure"] = MatrixCell(judged, judged)
            continue
        if world.spec.key == "exposure_perturbation":
            defence = ExposurePerturbation(options.perturbation_ratio, seed=config.seed, noise=config.noise).fit(clean["train"])
            parts = {name: defence.perturb(p) for name, p in clean.items()}
            world.utility = _slate_utility(clean["test"], parts["test"])
        else:
            parts = parts_of(world.model)
        with results.timed(f"matrix:exposure adaptive {world.spec.key}"):
            adaptive = fitted(parts)
        world.cells["exposure"] = MatrixCell(exposure_judged(frozen, parts), exposure_judged(adaptive, parts))


def _slate_utility(clean: ExposurePairs, perturbed: ExposurePairs) -> tuple[str, Estimate, Estimate]:
    """Next-item recall of the perturbed slates against the clean ones, paired over users."""
    value, _, change = paired_difference_interval(weighted_mean(next_item_recall(perturbed)),
                                                  weighted_mean(next_item_recall(clean)), clean.users)  # fmt: skip
    return (f"next-item recall@{clean.slate_size} of the slates", value, change)
