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
neighbourhood) is judged against the strongest data-only baseline (item popularity, the user's
history similarity, a blind guess) on ROC AUC by ``compare.judge`` (``metrics.verdict.judge_attack``,
intervals at the Bonferroni level of the best of 2 attacks); the cell's verdict is on the hard
non-members, the easy ones are reported beside it (``MatrixCell.beside``).

Every row attacks the same pairs (drawn from the data and the seed, not from the row), so a
defence's change is paired: the defended row's best attack's ROC AUC minus the undefended row's,
with a paired stratified bootstrap over the pairs at the same level (``MatrixCell.change``;
``metrics.verdict.judge_defence``); its value is the difference of the two values as printed.

Frozen and adaptive coincide: the attacks have no trained part (the adversary's popularity and
item similarity come from users held out of training, never from the target or its lists), so
knowing the defence changes nothing they compute. A row that serves members the undefended
target's lists (popularity randomization: it randomizes non-members' lists only) reuses the
undefended row's scores: its change is exactly zero. Nothing is trained here.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from pydantic import PositiveInt

from recprivacy.attacks.membership.interaction import name
from recprivacy.config import Config, StudyOptions
from recprivacy.experiments.interaction import InteractionResult, NoPairsToAttack, interaction_scored, judge_interactions
from recprivacy.experiments.matrix.cells import DIGITS, Canaries, Change, Judged, MatrixCell, judged, printed
from recprivacy.experiments.matrix.plan import ATTACKS, not_applicable
from recprivacy.experiments.matrix.world import World
from recprivacy.experiments.membership.compare import Scored, family_level
from recprivacy.experiments.target import Target
from recprivacy.experiments.train import PreparedData
from recprivacy.metrics.intervals import Estimate, auc_difference_interval
from recprivacy.metrics.verdict import judge_defence

ATTACK = next(a for a in ATTACKS if a.key == "interactions")
#: the name of the reading beside the verdict's
EASY = "easy non-members"
NO_TRAINED_PART = "no trained part: frozen and adaptive coincide"


class InteractionCellOptions(StudyOptions):
    """The interactions column: served list length ``k`` (fitted to the catalogue as the membership
    column's) and ``per_user`` candidate pairs of each label and kind per member (the audit section
    reads 10; the column 5 by default, since every row's judgement bootstraps its pairs several
    times and the column must stay cheap beside the others)."""

    k: PositiveInt = 100
    per_user: PositiveInt = 5


def interactions_column(config: Config, options: InteractionCellOptions, data: PreparedData, canaries: Canaries,
                        worlds: list[World]) -> None:  # fmt: skip
    """Fill every world's interactions cell (module docstring); ``worlds[0]`` is undefended and
    ``data`` the canary-planted data the rows were trained on."""
    data = replace(data, full=canaries.plant(data.full))  # a planted canary is a pair the member had
    k = min(options.k, data.full.n_items - int(data.train.user_counts().max(initial=0)))
    members = _members(data)
    by_model: dict[int, dict[str, Scored]] = {}
    for world in worlds:
        if (why := not_applicable(ATTACK, world.spec)) is not None:
            world.cells[ATTACK.key] = MatrixCell(reason=why)
            continue
        if id(world.model) not in by_model:
            try:
                by_model[id(world.model)] = interaction_scored(Target.from_recommender(world.model), data, k, options.per_user,
                                                               config.seed)  # fmt: skip
            except NoPairsToAttack as err:
                world.cells[ATTACK.key] = MatrixCell(reason=f"not measured: {err}")
                continue
        world.cells[ATTACK.key] = _cell(judge_interactions([by_model[id(world.model)]]), members)
    undefended = worlds[0].cells.get(ATTACK.key)
    if undefended is None or undefended.best is None:
        return
    for world in worlds[1:]:
        cell = world.cells[ATTACK.key]
        if cell.best is not None:
            cell.change = paired_change(by_model[id(world.model)]["hard"], cell.best, by_model[id(worlds[0].model)]["hard"],
                                        undefended.best)  # fmt: skip


def _members(data: PreparedData) -> int:
    """How many members have held-out rows (the users whose pairs are attacked)."""
    heldout = np.bincount(np.concatenate([data.valid.users, data.test.users]), minlength=data.full.n_users)
    return int(((data.train.user_counts() > 0) & (heldout[: data.train.n_users] > 0)).sum())


def _cell(results: dict[str, InteractionResult], members: int) -> MatrixCell:
    hard = judged_interactions(results["hard"], members)
    return MatrixCell(hard, hard, NO_TRAINED_PART, beside={EASY: judged_interactions(results["easy"], members)})


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
