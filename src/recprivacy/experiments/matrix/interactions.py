"""The interactions column of the attack x defence matrix (issue 51): interaction-level membership
inference, which of a member's (user, item) pairs trained the row's model, from the top-``k``
list the row serves the member.

It is the audit's ``interaction_membership`` section run on every central row
(``experiments.interaction.interaction_scored`` and ``judge_interactions``; the attacks and
baselines are ``attacks.membership.interaction``): for the members with held-out rows (the
matrix's data split gives every member validation and test rows, which never trained any row's
model), up to ``per_user`` of each member's training pairs (canaries planted in training included:
they trained the model) against up to ``per_user`` **hard** non-members (the member's held-out
items: they really had them) and ``per_user`` **easy** ones (items the member never had, planted
canaries counted as had). The best attack on the served lists (the seen-item filter, the list
neighbourhood, the reference-calibrated filter) is judged against the strongest data-only baseline (item
popularity, the user's history similarity, the references' ranking alone, a blind guess) on ROC AUC by
``compare.judge`` (``metrics.verdict.judge_attack``, intervals at the Bonferroni level of the best of 3
attacks); the cell's verdict is on the hard non-members, the easy ones are reported beside it
(``MatrixCell.beside``).

The reference-calibrated filter needs ``references`` recommenders trained on everything the adversary
knows except the candidate pairs (``experiments.interaction.expectation_of``). The *frozen* attacker's are
trained as the undefended target was (``membership.audit.target_trainer``), once for every row: the
expectation does not depend on the row's model. The *adaptive* attacker's are trained the way the row's
model was, defence included (``World.refit``: DPMF at the row's ε, DP-SGD, BPR-MF on a UPC-SDG release),
when ``adaptive``. A row whose model is the undefended target's (popularity randomization; exposure
perturbation's cell does not apply: it changes exposures, not lists) is attacked by references trained exactly as its model was, so its frozen and adaptive
attackers coincide; it reuses the undefended row's scores and its change is exactly zero. The list
attacks have no trained part and are the same in both.

Every row attacks the same pairs (drawn from the data and the seed, not from the row), so a
defence's change is paired: the defended row's stronger attacker's best attack's ROC AUC minus the
undefended row's, with a paired stratified bootstrap over the pairs at the same level
(``MatrixCell.change``; ``metrics.verdict.judge_defence``); its value is the difference of the two values
as printed.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from pydantic import NonNegativeInt, PositiveInt

from recprivacy.attacks.membership.interaction import name
from recprivacy.config import Config, StudyOptions
from recprivacy.experiments.interaction import (InteractionResult, NoPairsToAttack, Trainer, candidates, expectation_of,
                                               judge_interactions, scored_candidates)
from recprivacy.experiments.matrix.cells import DIGITS, Canaries, Change, Judged, MatrixCell, judged, printed
from recprivacy.experiments.matrix.plan import ATTACKS, not_applicable
from recprivacy.experiments.matrix.world import World
from recprivacy.experiments.membership.audit import target_trainer
from recprivacy.experiments.membership.compare import Scored, family_level
from recprivacy.experiments.target import Target
from recprivacy.experiments.train import PreparedData
from recprivacy.metrics.intervals import Estimate, auc_difference_interval
from recprivacy.metrics.verdict import judge_defence

ATTACK = next(a for a in ATTACKS if a.key == "interactions")
#: the name of the reading beside the verdict's
EASY = "easy non-members"
SAME_TRAINING = "the row's model is the undefended target's: the adaptive attacker's references are the frozen one's"
NO_REFERENCES = "no references (study_options.interactions.references = 0): the list attacks have no trained part, so frozen and adaptive coincide"


class InteractionCellOptions(StudyOptions):
    """The interactions column: served list length ``k`` (fitted to the catalogue as the membership
    column's), ``per_user`` candidate pairs of each label and kind per member (the audit section
    reads 10; the column 5 by default, since every row's judgement bootstraps its pairs several
    times and the column must stay cheap beside the others), ``references`` of the reference-calibrated
    filter (0: none), and ``adaptive``: references also trained under each row's defence."""

    k: PositiveInt = 100
    per_user: PositiveInt = 5
    references: NonNegativeInt = 4
    adaptive: bool = True


Versions = dict[str, dict[str, Scored]]


def interactions_column(config: Config, options: InteractionCellOptions, data: PreparedData, canaries: Canaries,
                        worlds: list[World]) -> None:  # fmt: skip
    """Fill every world's interactions cell (module docstring); ``worlds[0]`` is undefended and
    ``data`` the canary-planted data the rows were trained on."""
    data = replace(data, full=canaries.plant(data.full))  # a planted canary is a pair the member had
    k = min(options.k, data.full.n_items - int(data.train.user_counts().max(initial=0)))
    applicable = [w for w in worlds if not _not_applicable(w)]
    try:
        cands = candidates(data, options.per_user, config.seed)
    except NoPairsToAttack as err:
        for world in applicable:
            world.cells[ATTACK.key] = MatrixCell(reason=f"not measured: {err}")
        return
    members = _members(data)
    frozen = expectation_of(cands, data, target_trainer(Target.from_recommender(worlds[0].model), config.seed),
                            options.references)  # fmt: skip
    by_model: dict[int, dict[str, Scored]] = {}
    versions: dict[str, Versions] = {}
    for world in applicable:
        if id(world.model) not in by_model:
            by_model[id(world.model)] = scored_candidates(Target.from_recommender(world.model), data, cands, k, frozen)
        versions[world.spec.key] = {"frozen": by_model[id(world.model)]}
        if _adaptive_runs(world, worlds[0], options):
            adaptive = expectation_of(cands, data, _trainer(world, config.seed), options.references)
            versions[world.spec.key] = _shared_baselines(versions[world.spec.key]["frozen"], scored_candidates(
                Target.from_recommender(world.model), data, cands, k, adaptive))
        world.cells[ATTACK.key] = _cell(versions[world.spec.key], members, _note(world, worlds[0], options))
    if applicable and applicable[0] is worlds[0]:
        _changes(applicable, versions)


def _shared_baselines(frozen: dict[str, Scored], adaptive: dict[str, Scored]) -> Versions:
    """Both attackers judged against every baseline either knows: the references' ranking under the
    defence is data the adversary has without the target, as is the frozen references' ranking (the
    other baselines are the same in both)."""
    def baselines(kind: str) -> dict[str, np.ndarray]:
        return {**frozen[kind].baselines, "reference_fit_defended": adaptive[kind].baselines["reference_fit"]}

    return {"frozen": {kind: replace(frozen[kind], baselines=baselines(kind)) for kind in frozen},
            "adaptive": {kind: replace(adaptive[kind], baselines=baselines(kind)) for kind in adaptive}}  # fmt: skip


def _not_applicable(world: World) -> bool:
    """Whether the column does not apply to the row's defence; if so, the row's cell says why."""
    if (why := not_applicable(ATTACK, world.spec)) is not None:
        world.cells[ATTACK.key] = MatrixCell(reason=why)
        return True
    return False


def _adaptive_runs(world: World, undefended: World, options: InteractionCellOptions) -> bool:
    return options.adaptive and options.references > 0 and world.refit is not None and world.model is not undefended.model


def _trainer(world: World, seed: int) -> Trainer:
    """``train(interactions, index) -> recommender`` under the row's defence (seeded apart from the frozen references)."""
    assert world.refit is not None
    refit = world.refit
    return lambda train, index: refit(train, seed * 1000 + index + 1)


def _note(world: World, undefended: World, options: InteractionCellOptions) -> str:
    """Why a cell has no adaptive attacker of its own (empty when it has one)."""
    if options.references == 0:
        return NO_REFERENCES
    if world.model is undefended.model:
        return SAME_TRAINING
    if world.refit is None:
        return "adaptive not run: the row gives no way to train references under its defence"
    return "" if options.adaptive else "adaptive not run (study_options.interactions.adaptive = false)"


def _cell(versions: Versions, members: int, note: str) -> MatrixCell:
    """The frozen and (when run) adaptive attackers on the hard pairs; the easy pairs beside, read by the
    stronger attacker."""
    judged_hard = {v: judged_interactions(judge_interactions([s])["hard"], members) for v, s in versions.items()}
    frozen = judged_hard["frozen"]
    cell = MatrixCell(frozen, judged_hard.get("adaptive", frozen if note in (SAME_TRAINING, NO_REFERENCES) else None), note)
    easy = judge_interactions([versions[cell.best_name]])["easy"]
    return replace(cell, beside={EASY: judged_interactions(easy, members)})


def _changes(worlds: list[World], versions: dict[str, Versions]) -> None:
    """Each defended row's paired change against the undefended row (``worlds[0]``), read by each row's stronger attacker."""
    undefended = worlds[0].cells[ATTACK.key]
    base = versions[worlds[0].spec.key][undefended.best_name]["hard"]
    for world in worlds[1:]:
        cell = world.cells[ATTACK.key]
        cell.change = paired_change(versions[world.spec.key][cell.best_name]["hard"], cell.best, base, undefended.best)


def _members(data: PreparedData) -> int:
    """How many members have held-out rows (the users whose pairs are attacked)."""
    heldout = np.bincount(np.concatenate([data.valid.users, data.test.users]), minlength=data.full.n_users)
    return int(((data.train.user_counts() > 0) & (heldout[: data.train.n_users] > 0)).sum())


def judged_interactions(result: InteractionResult, members: int) -> Judged:
    """One kind's judgement (``compare.judge``) as a matrix attacker: the best attack named, the
    sample in pairs with the members whose lists were read; the verdict is ``compare.judge``'s rule on
    its numbers (``cells.judged``), its sentence naming the baseline as the report does."""
    j = result.judgement
    sample = replace(j.sample, combined=f"{members} members' lists; {j.sample.combined} over pairs")
    return judged(j.attack, j.baseline.value, name(j.best_baseline), j.margin, chance=0.5, sample=sample,
                  attack=name(j.best_attack))  # fmt: skip


def paired_change(defended: Scored, d: Judged, undefended: Scored, u: Judged) -> Change:
    """The defence's change on the same pairs: its value the two printed values' difference, its
    interval the paired stratified bootstrap of the two best attacks' ROC AUC difference, at the
    cells' level; ``judge_defence`` on it."""
    if not np.array_equal(defended.labels, undefended.labels):
        raise AssertionError("the interactions column attacks the same pairs in every row")
    keys = {n: k for k, n in ((k, name(k)) for k in defended.attacks)}
    diff = auc_difference_interval(defended.labels, defended.attacks[keys[d.attack]], undefended.attacks[keys[u.attack]],
                                   level=family_level(len(defended.attacks)))  # fmt: skip
    a, b = printed(d.value).value, printed(u.value).value
    estimate = Estimate(round(a - b, DIGITS), diff.low, diff.high, f"{diff.method}, the same pairs", diff.n, diff.level)
    return Change(a, b, estimate, judge_defence(estimate, ATTACK.title, sample=d.sample))
