"""The membership column of the matrix: user-level membership inference (paper 001) through
the membership lab, as the audit's membership section builds it (its partition of held-out
users, its randomizer), under the ``served`` protocol.

One lab holds every world's model as a target, so the item vectors, the undefended shadow
and its attack model are built once. Per world:

* *frozen*: the shadow and the LiRA / RMIA references of the undefended algorithm
  (``config.model``) attack the world's model;
* *adaptive*: the shadow is trained the way the world's model was, defence included
  (``World.refit``, given to the lab as the factory of the world's algorithm name: a DPMF at the
  same epsilon, or the target algorithm retrained on a UPC-SDG release of the shadow's data),
  and its attack model attacks the world's model.

Popularity Randomization replaces the popular list paper 001 gives non-members; under
``served`` there is nothing to replace and its cell says so.
"""

from __future__ import annotations

from typing import Any

from recprivacy.config import Config
from recprivacy.experiments.audit import AuditContext
from recprivacy.experiments.matrix.cells import Judged, MatrixCell
from recprivacy.experiments.matrix.options import MatrixOptions
from recprivacy.experiments.matrix.plan import ATTACKS, not_applicable
from recprivacy.experiments.matrix.world import World
from recprivacy.experiments.membership.audit import audit_partition, trained_like
from recprivacy.experiments.membership.collect import randomizer
from recprivacy.experiments.membership.compare import judge, name_of, score_all
from recprivacy.experiments.membership.lab import AttackSpec, LabOptions, MembershipLab
from recprivacy.experiments.target import Target
from recprivacy.experiments.train import PreparedData

ATTACK = next(a for a in ATTACKS if a.key == "membership")
#: the membership column runs the ``served`` protocol, where this defence has nothing to replace
POPULARITY_UNDER_SERVED = ("does not apply: Popularity Randomization replaces the popular list that paper 001 gives "
                           "non-members; under the served protocol non-members get the target's own lists, so there is "
                           "nothing to replace (the membership audit section measures it under the paper protocol)")


def membership_column(config: Config, options: MatrixOptions, data: PreparedData, worlds: list[World]) -> None:
    """Fill every world's membership cell (module docstring); ``worlds[0]`` is undefended."""
    o = options.membership
    ctx = AuditContext(config, data, Target.from_recommender(worlds[0].model), None)
    partition = audit_partition(ctx, o.min_interactions, config.seed)
    name, algorithm = data.full.name, config.model.name
    lab_options = LabOptions(min_interactions=o.min_interactions, item_coverage="init", holdout="none",
                             model_params={algorithm: trained_like(worlds[0].model, config.model.params)},
                             n_references=o.n_references)  # fmt: skip
    targets = {(name, "target", algorithm if w is worlds[0] else w.spec.key): w.model for w in worlds}
    refits = {w.spec.key: w.refit for w in worlds if w.refit is not None}
    lab = MembershipLab({name: data.full}, lab_options, seed=config.seed, partitions={name: partition},
                        randomize=randomizer(options.popularity_alpha, config.noise), models=targets, factories=refits,
                        trainers={key: _reference_trainer(refit, config.seed) for key, refit in refits.items()})  # fmt: skip
    k = min(o.k, data.full.n_items - int(data.full.user_counts().max()))

    def judged_run(shadow: str, target: str) -> Judged:
        return strongest(lab, AttackSpec((name, shadow), (name, target), k=k, n_factors=o.n_factors))

    for world in worlds:
        if (why := not_applicable(ATTACK, world.spec)) is not None:
            world.cells["membership"] = MatrixCell(reason=why)
        elif partition is None:
            world.cells["membership"] = MatrixCell(reason=f"not measured: fewer than 6 held-out users have {o.min_interactions} interactions")
        elif world is worlds[0]:
            plain = judged_run(algorithm, algorithm)
            world.cells["membership"] = MatrixCell(plain, plain)
        elif world.spec.key == "popularity_randomization":
            world.cells["membership"] = MatrixCell(reason=POPULARITY_UNDER_SERVED)
        elif not world.model.serves_new_users:
            world.cells["membership"] = MatrixCell(reason=f"not measured: {type(world.model).__name__} cannot serve users it was "
                                                          "not trained on, which the served protocol needs for non-members")
        else:
            frozen = judged_run(algorithm, world.spec.key)
            if world.refit is None:
                world.cells["membership"] = MatrixCell(frozen, None, "adaptive not run: the row gives no way to train a shadow under its defence")
            else:
                world.cells["membership"] = MatrixCell(frozen, judged_run(world.spec.key, world.spec.key))


def _reference_trainer(refit: Any, seed: int) -> Any:
    """``train(interactions, index) -> recommender``: a reference trained under the defence."""
    return lambda train, index: refit(train, seed * 1000 + index + 1)


def strongest(lab: MembershipLab, spec: AttackSpec) -> Judged:
    """Every attack the audit runs on ``spec``'s targets (LiRA and RMIA on references of the
    shadow's algorithm: the undefended one for the frozen attacker, the defended one for the
    adaptive), judged as the audit judges them: the strongest attack by ROC AUC against the
    strongest baseline, named in the cell."""
    j = judge([score_all(lab, spec)])
    return Judged(j.attack, j.baseline.value, name_of(j.best_baseline), j.margin, j.verdict, 0.5, j.sample,
                  attack=name_of(j.best_attack))
