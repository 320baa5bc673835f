"""The ``matrix`` study: one dataset, one target recommender, every attack against every
defence that changes what the attack observes.

Steps (``MatrixOptions``):

1. Prepare the data, hold out a share of users (the non-members that popularity
   randomization serves), draw the canaries and plant the included ones in the training data
   (``cells.Canaries``), and train the target on it.
2. Build one *world* per defence: the undefended target; popularity randomization (paper 001:
   non-members get random popular lists); exposure perturbation (paper 000: random positions
   of every logged slate replaced by uniform items, ratio ``perturbation_ratio``); DPMF (an
   item-factor objective-perturbation model in place of the target, at each of
   ``dpmf_epsilons``); DP-SGD (``defenses.dp_engine.make_private``: BPR-MF trained by
   user-level DP-SGD in place of the target, at each of ``dpsgd_epsilons``, engine settings
   ``dpsgd``); UPC-SDG (paper 003: the target retrained on a synthetic release of the
   training data, one row per γ, ``release``). Each world has its privacy statement and its
   utility cost: Recall@10 on the members' test split against the undefended target for a
   replaced model; the slates' next-item recall for exposure perturbation; none for members
   under popularity randomization (their lists are unchanged). The upload defences of paper 004
   get rows of their own federated system, with the uploads column (``uploads``).
3. Run every applicable cell (``plan.not_applicable``), frozen and adaptive (``cells``;
   membership in ``membership``, exposure in ``exposure``, recovery of the release in
   ``release``); judge
   each attacker against its blind guess (``metrics.verdict.judge_attack``) and each defence by
   the change it causes in the stronger attacker's success (``metrics.verdict.judge_defence``:
   *backfires* when the attack gains): the defended value minus the undefended one as the
   matrix prints them, with an unpaired interval (``cells.defence_change``).
4. For every world with a DP claim, the claimed epsilon beside the canary audit's measured
   lower bounds (ROC with Clopper-Pearson, and one run), flagged when a bound exceeds the claim;
   and per-release audits of the federated upload defences (``mechanisms``) with
   ``mechanism_samples`` uploads; and the sequential-model defences of paper 002 (DIPSGNN,
   DP-SGD, EdgeRand), each trained once on the data with its own canaries (``sequential``,
   reduced training).
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Any, Literal

import numpy as np
from pydantic import Field, PositiveInt

from recprivacy.attacks.attribute import recommendation_matrix
from recprivacy.config import Config, StudyOptions
from recprivacy.data.interactions import Interactions
from recprivacy.defenses.dp_engine import make_private
from recprivacy.defenses.dpmf import DPMF
from recprivacy.defenses.exposure_perturbation import ExposurePerturbation
from recprivacy.defenses.popularity_randomization import PopularityRandomization
from recprivacy.experiments.audit import AuditContext, member_users, utility_change
from recprivacy.experiments.federated.audit import served_to_all
from recprivacy.experiments.matrix.cells import (
    Canaries,
    Cell,
    attribute_judged,
    canary_judged,
)
from recprivacy.experiments.matrix.exposure import ExposureCellOptions, exposure_column
from recprivacy.experiments.matrix.membership import MembershipCellOptions, membership_column
from recprivacy.experiments.matrix.plan import ATTACKS, DefenceSpec, not_applicable
from recprivacy.experiments.matrix.release import ReleaseOptions, recovery_column, upcsdg_worlds
from recprivacy.experiments.matrix.render import render
from recprivacy.experiments.matrix.sequential import SequentialAuditOptions, sequential_rows
from recprivacy.experiments.matrix.uploads import UploadCellOptions, uploads_column
from recprivacy.experiments.matrix.world import World
from recprivacy.experiments.results import Results
from recprivacy.experiments.runner import new_results, register_study
from recprivacy.experiments.target import Target
from recprivacy.experiments.train import (
    PreparedData,
    fit_model,
    hold_out_users,
    prepare_data,
)
from recprivacy.federated.features import attribute_labels
from recprivacy.metrics.intervals import Estimate
from recprivacy.models.base import Recommender
from recprivacy.models.bpr import BPRMF
from recprivacy.privacy.accounting import PrivacyStatement
from recprivacy.progress import plan

ATTACK = {a.key: a for a in ATTACKS}




class MatrixOptions(StudyOptions):
    """Options of the ``matrix`` study (module docstring)."""

    k: PositiveInt = 10
    attribute: Literal["gender", "age", "occupation"] = "gender"
    attackers: list[Literal["dnn", "tree", "svc", "knn"]] = Field(default_factory=lambda: ["knn", "tree"], min_length=1)
    zeta: float = Field(0.2, gt=0, lt=1)
    seeds: PositiveInt = 3
    holdout_users: float = Field(0.2, gt=0, lt=1)
    exposure: ExposureCellOptions = Field(default_factory=ExposureCellOptions)
    membership: MembershipCellOptions = Field(default_factory=MembershipCellOptions)
    perturbation_ratio: float = Field(0.5, gt=0, le=1)
    popularity_alpha: float = Field(0.1, gt=0, le=1)
    dpmf_epsilons: list[float] = Field(default_factory=lambda: [1.0, 5.0])
    dpmf: dict[str, Any] = Field(default_factory=lambda: {"n_epochs": 60})
    dpsgd_epsilons: list[float] = Field(default_factory=lambda: [1.0, 4.0, 8.0])
    #: BPR-MF's ``n_factors`` and ``make_private``'s settings of the DP-SGD rows
    dpsgd: dict[str, Any] = Field(default_factory=lambda: {"n_factors": 16, "delta": 1e-6, "batch_users": 512,
                                                           "n_epochs": 40, "lr": 0.01})
    canaries: PositiveInt = 1000
    canary_guesses: PositiveInt = 100
    mechanism_samples: PositiveInt = 20000
    sequential: SequentialAuditOptions = Field(default_factory=SequentialAuditOptions)
    release: ReleaseOptions = Field(default_factory=ReleaseOptions)
    uploads: UploadCellOptions = Field(default_factory=UploadCellOptions)


def run_matrix(config: Config, options: MatrixOptions) -> Results:
    """The ``matrix`` study (module docstring)."""
    plan(matrix_stages(options))
    results = new_results(config)
    data = hold_out_users(prepare_data(config, results), options.holdout_users, config.seed)
    canaries = Canaries.draw(data.full, member_users(data), options.canaries, config.seed)
    planted = replace(data, train=canaries.plant(data.train))
    target = fit_model(config, planted, results)
    worlds = build_worlds(config, options, planted, target, results)
    uploads_column(config, options, data, worlds, results)  # before the other columns: its rows get their cells
    with results.timed("matrix:membership"):
        membership_column(config, options, planted, worlds)
    with results.timed("matrix:attribute"):
        attribute_column(config, options, planted, worlds)
    with results.timed("matrix:exposure"):
        exposure_column(config, options, data, worlds, results)
    with results.timed("matrix:canaries"):
        for world in worlds:
            if (why := not_applicable(ATTACK["canaries"], world.spec)) is not None:
                world.cells["canaries"] = Cell(reason=why)
                continue
            judged, eps = canary_judged(canaries, world.model.item_factors_.numpy(), data.train, options.canary_guesses,
                                        world.statement.delta)  # fmt: skip
            world.cells["canaries"] = Cell(judged, judged, "no trained part: frozen and adaptive coincide", eps)
    with results.timed("matrix:recovery"):
        recovery_column(options.release, worlds)
    with results.timed("matrix:sequential defences' canaries"):
        sequential = sequential_rows(data, member_users(data), options.sequential, config.seed, config.noise)
    with results.timed("matrix:render and upload audits"):
        render(results, worlds, options, canaries, config.seed, sequential)
    return results


def matrix_stages(options: MatrixOptions) -> list[str]:
    """The matrix's long stages in the order they run (``Results.timed`` names), for the run's ETA."""
    columns = ("membership", "attribute", "exposure", "canaries", "recovery", "sequential defences' canaries",
               "render and upload audits")  # fmt: skip
    return ["fit", *(f"matrix:fit DPMF eps={eps:g}" for eps in options.dpmf_epsilons),
            *(f"matrix:fit DP-SGD eps={eps:g}" for eps in options.dpsgd_epsilons),
            *(f"matrix:UPC-SDG release and retraining γ={gamma:g}" for gamma in options.release.gammas),
            *(f"matrix:uploads {method}" for method in ["none", *options.uploads.defences]),
            *(f"matrix:{column}" for column in columns)]  # fmt: skip


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
            world.cells["attribute"] = Cell(reason=why)
            continue
        users, lists = (clean_users, clean_lists) if world.model is worlds[0].model else _lists(config, data, world.model, options.k)
        if world.spec.key == "popularity_randomization":
            lists = _randomized(config, options, data, users, lists)
        users, lists, clean = _aligned(users, lists, clean_users, clean_lists)
        x, x_clean = (recommendation_matrix(v, data.full.n_items) for v in (lists, clean))
        args = (y_all[users], len(names), options.zeta, options.seeds, options.attackers, "balanced_accuracy")
        frozen = attribute_judged(x_clean, x, *args)
        adaptive = frozen if world.spec.key == "none" else attribute_judged(x, x, *args)
        world.cells["attribute"] = Cell(frozen, adaptive)


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


register_study("matrix", run_matrix, MatrixOptions, "every attack against every applicable defence on one dataset and target")
