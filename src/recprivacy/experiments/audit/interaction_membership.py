"""The ``interaction_membership`` audit section (issue 51): which of a member's (user, item) pairs
trained the target (``experiments.interaction``; attacks and baselines in
``attacks.membership.interaction``).

Who plays which part:

* the **members** attacked are the trained users with held-out rows (the validation and test rows
  of the audit); each is served by id, top-``k`` with training items excluded, as members are;
* **candidate pairs**: up to ``per_user`` of each member's training items (label 1) against up
  to ``per_user`` **hard** non-members (the member's held-out items: they really interacted with
  them) and ``per_user`` **easy** ones (items the member never had, the non-members of MINER,
  CIKM 2024), judged side by side;
* the adversary's item popularity and item-item similarity come from the users held out of
  training (``study_options.holdout_users``), never from the members;
* where the target can be retrained (a built-in model, a training function), ``references``
  recommenders trained as the target was, on every known row except the candidate pairs, tell
  how high a model that never saw a pair ranks it (the reference-calibrated filter).

Each kind is judged by ``compare.judge`` on ROC AUC: the best of the two attacks (the seen-item
filter, the list neighbourhood, the reference-calibrated filter) against the strongest baseline (item popularity, the user's
history, a blind guess) at the Bonferroni level; TPR at 1% and 5% FPR (MINER reports 5%) are
secondary rows against the strongest baseline at that FPR. The target is fixed, so there is one
draw of pairs (seeded by the config's seed) and the intervals are stratified bootstraps over
pairs. Decision: pairs of one member are not independent (they share one list), so these
intervals are narrower than a bootstrap over members would give; the section says so.

Opt-in (``--sections interaction_membership``, or ``sections=[..., "interaction_membership"]``):
scoring the pairs is quick, but the bootstrap intervals over thousands of pairs cost more than a
default audit should spend on one further question (measured in docs/decisions.md, issue 51).
"""

from __future__ import annotations

from pydantic import NonNegativeInt, PositiveInt

from recprivacy.attacks.membership.interaction import name
from recprivacy.config import StudyOptions
from recprivacy.experiments.audit.plan import fit_list_length
from recprivacy.experiments.audit.registry import AuditContext, register_audit_section
from recprivacy.experiments.audit.writer import SectionWriter
from recprivacy.experiments.interaction import (INTERACTION_FPRS, InteractionResult, NoPairsToAttack, interaction_scored,
                                               judge_interactions)
from recprivacy.experiments.membership.audit import target_trainer
from recprivacy.experiments.membership.compare import combined, secondary_rows
from recprivacy.experiments.train import PreparedData

#: what each kind of non-member is, as the risk rows name it
WHAT = {"hard": "held-out items the member really had", "easy": "items the member never had"}


class InteractionAuditOptions(StudyOptions):
    """List length ``k`` served to each member; ``per_user``: candidate pairs of each label and kind per member;
    ``references``: reference recommenders of the reference-calibrated filter (0: not run)."""

    k: PositiveInt = 100
    per_user: PositiveInt = 10
    references: NonNegativeInt = 4


def fit_interaction_options(o: InteractionAuditOptions, data: PreparedData) -> tuple[InteractionAuditOptions, list[str]]:
    """``k`` fitted so that every member has ``k`` items it did not train on."""
    n, longest = data.full.n_items, int(data.train.user_counts().max(initial=0))
    reason = f"the catalogue has {n} items and a member trained on {longest} of them"
    return fit_list_length("interaction_membership", o, "k", n - longest, reason)


def interaction_section(ctx: AuditContext, out: SectionWriter) -> None:
    """Score every candidate pair, judge each kind of non-member and write rows, table and text."""
    o = ctx.options
    try:
        trainer = target_trainer(ctx.target, ctx.config.seed)
        scored = interaction_scored(ctx.target, ctx.data, o.k, o.per_user, ctx.config.seed, trainer, o.references)
    except NoPairsToAttack as err:  # a bad input (e.g. logged lists shorter than k) is refused, not skipped
        out.write(f"Not measured: {err}.")
        return
    rows = []
    for kind, result in judge_interactions([scored]).items():
        _add_risks(out, kind, result)
        rows += _table_rows(out, kind, result)
    out.add_table("attack", ["non-members", "kind", "attack or baseline", "ROC AUC [95%]", "TPR@1%FPR [95%]",
                             "TPR@5%FPR [95%]"], rows,
                  f"Interaction-level membership: training pairs against each kind of non-member pair, top-{o.k} lists "
                  "served by id; stratified bootstrap over pairs (ROC AUC), Clopper-Pearson (TPR)")  # fmt: skip
    out.write(_text(o, trainer is not None))


def _attack(kind: str, best: str) -> str:
    return f"interaction-level membership inference ({kind} non-members: {WHAT[kind]}, best: {name(best)})"


def _add_risks(out: SectionWriter, kind: str, r: InteractionResult) -> None:
    """The best attack's ROC AUC judged against the strongest baseline (``compare.judge``), and its
    TPR at 1% and 5% FPR as secondary rows against the strongest baseline at that FPR."""
    j, attack = r.judgement, _attack(kind, r.judgement.best_attack)
    out.judge(attack, "ROC AUC", j.attack, j.baseline.value, name(j.best_baseline), j.margin, j.note, chance=0.5,
              sample=j.sample, per_seed=j.per_seed)  # fmt: skip
    for metric, value, baseline, baseline_name, margin, seeds in secondary_rows([r.scored], j, INTERACTION_FPRS, name):
        out.secondary(attack, metric, "ROC AUC", value, baseline, baseline_name, margin, sample=j.sample, per_seed=seeds)


def _table_rows(out: SectionWriter, kind: str, r: InteractionResult) -> list[list[str]]:
    """One row per attack and baseline of one kind; the metrics keep each ROC AUC."""
    rows = []
    for role, keys in (("attack", r.scored.attacks), ("baseline", r.scored.baselines)):
        for key in keys:
            auc = combined([r.scored], key, "auc")
            out.add_metric(f"{kind}/{key}/auc", auc.value)
            rows.append([kind, role, name(key), str(auc), *map(str, r.tprs[key])])
    return rows


def _text(o: InteractionAuditOptions, retrainable: bool) -> str:
    if not retrainable or o.references == 0:
        references = ("The reference-calibrated filter did not run: " + ("`references` is 0." if retrainable else
                      "the target cannot be retrained (its algorithm or training function is not given)."))  # fmt: skip
    else:
        references = (f"The **reference-calibrated filter** trains {o.references} recommenders as the target was trained, on "
                      "every row the adversary knows except the candidate pairs, and scores an item missing from the "
                      "target's list by how high the references rank it for the member: an item a model that never saw "
                      "the pair would show, and the target does not, was filtered out as seen.")  # fmt: skip
    return (
        "An adversary who knows a member's interactions and sees the top-k list the target serves them guesses which of "
        "those interactions trained the target. Training pairs are set against **hard** non-members (items the member "
        "really had but that were held out of training: what the target itself reveals) and **easy** ones (items the "
        "member never had, as MINER, CIKM 2024, measures; there a statistic of the data alone already does well, and the "
        "margin over it is what the target adds). Attacks read the served list: the **seen-item filter** scores an item "
        "missing from the list by its popularity (a target that excludes seen items never shows a trained one), the "
        "**list neighbourhood** by its similarity to the listed items. Baselines need no target: item popularity and the "
        "item's similarity to the user's other known items; popularity and similarity are learned from users held out of "
        f"training. {o.per_user} pairs of each label and kind per member; the verdict is on ROC AUC, the best attack "
        "against the strongest baseline at the Bonferroni level; TPR at 1% and 5% FPR are shown against the strongest "
        "baseline at that FPR. The intervals resample pairs; a member's pairs share one list, so they are optimistic "
        "about how the result would vary over other members. " + references
    )


register_audit_section("interaction_membership", interaction_section, "Interaction-level membership inference",
                       InteractionAuditOptions, order=15, heldout_users=True, fit=fit_interaction_options,
                       needs=("test",), default=False)  # fmt: skip
