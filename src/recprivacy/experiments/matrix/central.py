"""The centrally trained target's rows of the matrix and the columns that attack them.

``Central`` is the kit group of these cells (``matrix.grid``): built on first need in the
process that measures them, it holds the canary-planted data, the target trained on it and one
``World`` per defence (``build_worlds``: the undefended target, popularity randomization,
exposure perturbation, DPMF and DP-SGD at each epsilon, UPC-SDG at each γ, with each row's
privacy statement and utility cost). ``Central.column(key)`` fills every world's cell of one
column: membership (``matrix.membership``), attribute (``attribute_column``), exposure
(``matrix.exposure``), canaries (``canaries_column``), recovery (``matrix.release``) and
interactions (``matrix.interactions``). A column
is one unit of work because its attackers share what is trained on the undefended row (the
membership lab's shadow, references and item vectors; the exposure attacker on the clean slates;
the attribute attackers' clean lists).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property, partial
from typing import Any

import numpy as np

from recprivacy.attacks.attribute import recommendation_matrix
from recprivacy.config import Config
from recprivacy.data.interactions import Interactions
from recprivacy.defenses.dp_engine import make_private
from recprivacy.defenses.dpmf import DPMF
from recprivacy.defenses.exposure_perturbation import ExposurePerturbation
from recprivacy.defenses.popularity_randomization import PopularityRandomization
from recprivacy.experiments.audit import AuditContext, utility_change
from recprivacy.experiments.federated.audit import served_to_all
from recprivacy.experiments.matrix.cells import Canaries, MatrixCell, attribute_judged, canary_judged
from recprivacy.experiments.matrix.exposure import exposure_column
from recprivacy.experiments.matrix.interactions import interactions_column
from recprivacy.experiments.matrix.membership import membership_column
from recprivacy.experiments.matrix.options import MatrixOptions
from recprivacy.experiments.matrix.plan import ATTACKS, DefenceSpec, not_applicable
from recprivacy.experiments.matrix.release import recovery_column, upcsdg_worlds
from recprivacy.experiments.matrix.world import Utility, World
from recprivacy.experiments.results import Results
from recprivacy.experiments.target import Target
from recprivacy.experiments.train import PreparedData, fit_model
from recprivacy.federated.features import attribute_labels
from recprivacy.metrics.intervals import Estimate
from recprivacy.models.base import Recommender
from recprivacy.models.bpr import BPRMF
from recprivacy.privacy.accounting import PrivacyStatement

ATTACK = {a.key: a for a in ATTACKS}
#: the central columns in the order they run
COLUMNS = ("membership", "attribute", "exposure", "canaries", "recovery", "interactions")


@dataclass
class Central:
    """The central rows' shared state (module docstring); ``results`` takes the stage timings
    and seeds of the work done here."""

    config: Config
    options: MatrixOptions
    data: PreparedData
    canaries: Canaries
    results: Results

    @cached_property
    def planted(self) -> PreparedData:
        """The data with the included canaries planted in the training split."""
        return replace(self.data, train=self.canaries.plant(self.data.train))

    @cached_property
    def target(self) -> Recommender:
        """The configured target trained on the planted data."""
        return fit_model(self.config, self.planted, self.results)

    @cached_property
    def worlds(self) -> list[World]:
        """One world per central defence row, the undefended one first."""
        return build_worlds(self.config, self.options, self.planted, self.target, self.results)

    def column(self, key: str) -> tuple[dict[str, MatrixCell], dict[str, Utility]]:
        """Column ``key``'s cell of every world by defence key, and the utility costs the column
        measured (the exposure column: exposure perturbation's, on the slates)."""
        before = {w.spec.key: w.utility for w in self.worlds}
        fill: dict[str, Callable[[], None]] = {
            "membership": lambda: membership_column(self.config, self.options, self.planted, self.worlds),
            "attribute": lambda: attribute_column(self.config, self.options, self.planted, self.worlds),
            "exposure": lambda: exposure_column(self.config, self.options, self.data, self.worlds, self.results),
            "canaries": lambda: canaries_column(self.canaries, self.data.train, self.options.canary_guesses, self.worlds),
            "recovery": lambda: recovery_column(self.options.release, self.worlds),
            "interactions": lambda: interactions_column(self.config, self.options.interactions, self.planted, self.canaries,
                                                        self.worlds),
        }
        with self.results.timed(f"matrix:{key}"):
            fill[key]()
        return ({w.spec.key: w.cells[key] for w in self.worlds},
                {w.spec.key: w.utility for w in self.worlds if w.utility is not before[w.spec.key]})  # fmt: skip


def build_worlds(config: Config, options: MatrixOptions, data: PreparedData, target: Recommender,
                 results: Results) -> list[World]:  # fmt: skip
    """The defence rows (module docstring, step 2); DPMF and DP-SGD models are trained here."""
    none = DefenceSpec("none", "no defence", "nothing")
    pop = PopularityRandomization(options.popularity_alpha, config.seed, config.noise)
    perturb = ExposurePerturbation(options.perturbation_ratio, seed=config.seed, noise=config.noise)
    worlds = [
        World(none, target, PrivacyStatement.no_guarantee("interactions", "training and serving", "the undefended target")),
        World(DefenceSpec("popularity_randomization", f"popularity randomization (α = {options.popularity_alpha:g})", "lists"),
              target, pop.privacy_statement()),
        World(DefenceSpec("exposure_perturbation", f"exposure perturbation (random/uniform, L = {options.perturbation_ratio:g})",
                          "exposures"), target, perturb.privacy_statement()),
    ]  # fmt: skip
    for eps in options.dpmf_epsilons:
        params = {"seed": config.seed, "noise": config.noise, "epsilon": eps, **options.dpmf}
        with results.timed(f"matrix:fit DPMF eps={eps:g}"):
            model = DPMF(**params).fit(data.train, data.valid)
        worlds.append(World(DefenceSpec(f"dpmf_eps{eps:g}", f"DPMF (ε = {eps:g})", "model training"), model,
                            model.privacy_statement(), refit=partial(_dpmf, params)))  # fmt: skip
    for eps in options.dpsgd_epsilons:
        refit = partial(_dpsgd, options.dpsgd, eps, config.noise)
        with results.timed(f"matrix:fit DP-SGD eps={eps:g}"):
            model = refit(data.train, config.seed)
        worlds.append(World(DefenceSpec(f"dpsgd_eps{eps:g}", f"DP-SGD BPR-MF (ε = {eps:g})", "model training"), model,
                            model.privacy_statement(), refit=refit))  # fmt: skip
    worlds += upcsdg_worlds(config, options.release, data, target, results)
    for world in worlds:
        if world.model is not target:
            value, _, change = utility_change(world.model, target, data, 10)
            world.utility = ("Recall@10 (members' test)", value, change)
    value, _, _ = utility_change(target, target, data, 10)
    zero = Estimate(0.0, 0.0, 0.0, "unchanged", value.n)
    worlds[0].utility = ("Recall@10 (members' test)", value, zero)
    worlds[1].utility = ("Recall@10 (members' test; non-members get random popular lists)", value, zero)
    return worlds


def _dpmf(params: dict[str, Any], train: Interactions, seed: int) -> DPMF:
    """``World.refit`` of a DPMF row: the row's DPMF, reseeded, fitted on ``train``."""
    return DPMF(**{**params, "seed": seed}).fit(train)


def _dpsgd(params: dict[str, Any], epsilon: float, noise: str, train: Interactions, seed: int) -> Recommender:
    """A DP-SGD row's model and its ``World.refit``: ``BPRMF(n_factors)`` with ``seed`` trained on
    ``train`` by ``make_private`` at ``epsilon`` with the row's other settings."""
    engine = {k: v for k, v in params.items() if k != "n_factors"}
    model = BPRMF(n_factors=params.get("n_factors", 16), seed=seed)
    return make_private(model, epsilon=epsilon, noise=noise, **engine).fit(train)


# ---------------------------------------------------------------------------- attribute column


def _lists(config: Config, data: PreparedData, model: Recommender, k: int) -> tuple[np.ndarray, np.ndarray]:
    return served_to_all(AuditContext(config, data, Target.from_recommender(model), None), k)


def attribute_column(config: Config, options: MatrixOptions, data: PreparedData, worlds: list[World]) -> None:
    """Attribute inference from each world's top-k lists, frozen (trained on the undefended
    lists) and adaptive (trained on the world's own lists)."""
    spec = ATTACK["attribute"]
    y_all, names = attribute_labels(data.full, options.attribute)
    clean_users, clean_lists = _lists(config, data, worlds[0].model, options.k)
    for world in worlds:
        if (why := not_applicable(spec, world.spec)) is not None:
            world.cells["attribute"] = MatrixCell(reason=why)
            continue
        users, lists = (clean_users, clean_lists) if world.model is worlds[0].model else _lists(config, data, world.model, options.k)
        if world.spec.key == "popularity_randomization":
            lists = _randomized(config, options, data, users, lists)
        users, lists, clean = _aligned(users, lists, clean_users, clean_lists)
        x, x_clean = (recommendation_matrix(v, data.full.n_items) for v in (lists, clean))
        args = (y_all[users], len(names), options.zeta, options.seeds, options.attackers, "balanced_accuracy")
        frozen = attribute_judged(x_clean, x, *args)
        adaptive = frozen if world.spec.key == "none" else attribute_judged(x, x, *args)
        world.cells["attribute"] = MatrixCell(frozen, adaptive)


def _randomized(config: Config, options: MatrixOptions, data: PreparedData, users: np.ndarray,
                lists: np.ndarray) -> np.ndarray:  # fmt: skip
    """Popularity randomization: the non-members' lists drawn from the popular candidates."""
    ranking = np.argsort(-data.train.item_counts(), kind="stable")
    pop = PopularityRandomization(options.popularity_alpha, config.seed, config.noise)
    outsiders = np.isin(users, data.heldout_users)
    lists = lists.copy()
    lists[outsiders] = pop.lists(ranking, int(outsiders.sum()), lists.shape[1])
    return lists


def _aligned(users: np.ndarray, lists: np.ndarray, clean_users: np.ndarray,
             clean_lists: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """The users served in both worlds, with their lists in each."""
    common, a, b = np.intersect1d(users, clean_users, return_indices=True)
    return common, lists[a], clean_lists[b]


# ---------------------------------------------------------------------------- canaries column


def canaries_column(canaries: Canaries, train: Interactions, k_guess: int, worlds: list[World]) -> None:
    """The canary attack on each world's item factors (``cells.canary_judged``; ``train``: the
    training data without canaries, the attacker's knowledge of each user's other items)."""
    for world in worlds:
        if (why := not_applicable(ATTACK["canaries"], world.spec)) is not None:
            world.cells["canaries"] = MatrixCell(reason=why)
            continue
        judged, eps = canary_judged(canaries, world.model.item_factors_.numpy(), train, k_guess, world.statement.delta)
        world.cells["canaries"] = MatrixCell(judged, judged, "no trained part: frozen and adaptive coincide", eps)
