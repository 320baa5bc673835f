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
   ``dpmf_epsilons``). Each world has its privacy statement and its utility cost: Recall@10 on
   the members' test split against the undefended target for a replaced model; the slates'
   next-item recall for exposure perturbation; none for members under popularity
   randomization (their lists are unchanged). The upload defences of paper 004 get rows of
   their own federated system, with the uploads column (``uploads``).
3. Run every applicable cell (``plan.not_applicable``), frozen and adaptive (``cells``; the
   exposure column in ``exposure``); judge
   each attacker against its blind guess and each defence by the change it causes in the
   stronger attacker's success (``metrics.verdict.judge_defence``: *backfires* when the attack
   gains). The change is an unpaired difference (``intervals.unpaired_difference``).
4. For every world with a DP claim, the claimed epsilon beside the canary audit's measured
   lower bounds (ROC with Clopper-Pearson, and one run), flagged when a bound exceeds the claim;
   and per-release audits of the federated upload defences (``mechanisms``) with
   ``mechanism_samples`` uploads; and the sequential-model defences of paper 002 (DIPSGNN,
   DP-SGD, EdgeRand), each trained once on the data with its own canaries (``sequential``,
   reduced training).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal

import numpy as np
from pydantic import Field, PositiveInt

from recprivacy.attacks.attribute import recommendation_matrix
from recprivacy.attacks.membership import AttackSpec as LabSpec
from recprivacy.attacks.membership import LabOptions, MembershipLab
from recprivacy.config import Config, StudyOptions
from recprivacy.defenses.dpmf import DPMF
from recprivacy.defenses.exposure_perturbation import ExposurePerturbation
from recprivacy.defenses.popularity_randomization import PopularityRandomization
from recprivacy.experiments.audit import AuditContext, member_users, utility_change
from recprivacy.experiments.federated import served_to_all
from recprivacy.experiments.matrix.cells import (
    Canaries,
    Cell,
    World,
    attribute_judged,
    canary_judged,
    membership_judged,
)
from recprivacy.experiments.matrix.exposure import ExposureCellOptions, exposure_column
from recprivacy.experiments.matrix.plan import ATTACKS, DefenceSpec, not_applicable
from recprivacy.experiments.matrix.render import render
from recprivacy.experiments.matrix.sequential import SequentialAuditOptions, sequential_rows
from recprivacy.experiments.matrix.uploads import UploadCellOptions, uploads_column
from recprivacy.experiments.membership.audit import audit_partition
from recprivacy.experiments.membership.collect import randomizer
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
from recprivacy.privacy.accounting import PrivacyStatement

ATTACK = {a.key: a for a in ATTACKS}
#: the membership column runs the ``served`` protocol, where this defence has nothing to replace
POPULARITY_UNDER_SERVED = ("does not apply: Popularity Randomization replaces the popular list that paper 001 gives "
                           "non-members; under the served protocol non-members get the target's own lists, so there is "
                           "nothing to replace (the membership audit section measures it under the paper protocol)")


class MembershipCellOptions(StudyOptions):
    """The membership column: the audit section's list length, item-vector size and minimum history."""

    k: PositiveInt = 100
    n_factors: PositiveInt = 100
    min_interactions: PositiveInt = 20


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
    canaries: PositiveInt = 1000
    canary_guesses: PositiveInt = 100
    mechanism_samples: PositiveInt = 20000
    sequential: SequentialAuditOptions = Field(default_factory=SequentialAuditOptions)
    uploads: UploadCellOptions = Field(default_factory=UploadCellOptions)


def run_matrix(config: Config, options: MatrixOptions) -> Results:
    """The ``matrix`` study (module docstring)."""
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
    with results.timed("matrix:sequential defences' canaries"):
        sequential = sequential_rows(data, member_users(data), options.sequential, config.seed, config.noise)
    with results.timed("matrix:render and upload audits"):
        render(results, worlds, options, canaries, config.seed, sequential)
    return results


def build_worlds(config: Config, options: MatrixOptions, data: PreparedData, target: Recommender,
                 results: Results) -> list[World]:  # fmt: skip
    """The defence rows (module docstring, step 2); DPMF models are trained here."""
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
                            model.privacy_statement()))  # fmt: skip
    for world in worlds:
        if world.model is not target:
            value, _, change = utility_change(world.model, target, data, 10)
            world.utility = ("Recall@10 (members' test)", value, change)
    value, _, _ = utility_change(target, target, data, 10)
    zero = Estimate(0.0, 0.0, 0.0, "unchanged", value.n)
    worlds[0].utility = ("Recall@10 (members' test)", value, zero)
    worlds[1].utility = ("Recall@10 (members' test; non-members get random popular lists)", value, zero)
    return worlds


# ---------------------------------------------------------------------------- membership column


def membership_column(config: Config, options: MatrixOptions, data: PreparedData, worlds: list[World]) -> None:
    """Membership inference through the membership lab, as the audit's membership section
    builds it (its partition of held-out users, its randomizer): frozen (the target alone
    defended) and adaptive (the shadow defended too) for popularity randomization; a DPMF
    world's model is the lab's target, attacked by the undefended target's shadow (frozen
    only: the lab builds shadows with ``models.make_model``, which has no DPMF)."""
    o = options.membership
    ctx = AuditContext(config, data, Target.from_recommender(worlds[0].model), None)
    partition = audit_partition(ctx, o.min_interactions, config.seed)
    name, algorithm = data.full.name, config.model.name
    lab_options = LabOptions(min_interactions=o.min_interactions, item_coverage="init", holdout="none",
                             model_params={algorithm: dict(config.model.params)})  # fmt: skip

    def lab(target: Recommender) -> MembershipLab:
        return MembershipLab({name: data.full}, lab_options, seed=config.seed, partitions={name: partition},
                             randomize=randomizer(options.popularity_alpha, config.noise),
                             models={(name, "target", algorithm): target})  # fmt: skip

    spec = LabSpec((name, algorithm), (name, algorithm), k=min(o.k, data.full.n_items - int(data.full.user_counts().max())),
                   n_factors=o.n_factors)  # fmt: skip
    undefended = lab(worlds[0].model)
    for world in worlds:
        if (why := not_applicable(ATTACK["membership"], world.spec)) is not None:
            world.cells["membership"] = Cell(reason=why)
        elif partition is None:
            world.cells["membership"] = Cell(reason=f"not measured: fewer than 6 held-out users have {o.min_interactions} interactions")
        elif world.spec.key == "none":
            plain = membership_judged(undefended.run(spec))
            world.cells["membership"] = Cell(plain, plain)
        elif world.spec.key == "popularity_randomization":
            world.cells["membership"] = Cell(reason=POPULARITY_UNDER_SERVED)
        elif not world.model.serves_new_users:
            world.cells["membership"] = Cell(reason=f"not measured: {type(world.model).__name__} cannot serve users it was "
                                                    "not trained on, which the served protocol needs for non-members")
        else:
            frozen = membership_judged(lab(world.model).run(spec))
            world.cells["membership"] = Cell(frozen, None, "adaptive not run: the lab cannot build a DPMF shadow")


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
        args = (y_all[users], len(names), options.zeta, options.seeds, options.attackers)
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
