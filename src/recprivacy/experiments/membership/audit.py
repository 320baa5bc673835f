"""The ``membership`` audit section: user-level membership inference (paper 001) against the
target recommender the audit trained, under the ``served`` protocol.

Who plays which part:

* **held-out users** (``study_options.holdout_users`` of the audit, 0.3 by default when this
  section runs) never reach the target. Those with at least ``min_interactions``
  interactions are split (seeded): half are the target's **non-members**, a quarter the
  adversary's **shadow** dataset, a quarter the **item-vector** dataset. Decision: non-members
  get the largest share (the paper's thirds gave 94 of them on ml-100k) because TPR at 1% FPR
  needs at least 100 non-members to be measured at all and 500 to be measured well; the group
  table says how many there were;
* the target's **members** are every training user with at least ``min_interactions``
  interactions (a seeded sample of ``max_users`` when there are more): every member is attacked;
* protocol ``served``: members see the audited target's top-k (training items excluded);
  non-members are served by the target from the same share of their own history that members
  trained on (the rest is held out the same way), as a deployed system serves a new user;
  ``paper`` (the popular list for non-members) is measured beside it for reference;
* attacks: the paper's MLP on Origin features trained on a shadow recommender, and LiRA
  (online and offline) and RMIA on ``n_references`` reference recommenders
  (``attacks.membership.calibrated``), and the training-free statistics of the served lists
  (overlap with the adversary's popular items, mean item popularity, norm of the paper's
  feature): they read the target's output, so they are attacks; baselines: a blind guess and
  statistics of the users' own histories (``compare``), which need no target;
* the adversary's recommenders (shadow and references, ``adversary_trainer``): of the target's
  algorithm when the target can be retrained (a built-in model or a training function;
  Assumption I), or of ``shadow_algorithm``, a built-in algorithm the adversary picks because
  it does not know the target's (Assumption II); the option overrides Assumption I for any
  target. A target that cannot be retrained (logged lists, a fitted model without its training
  function) and names none gets the candidate (``MIMIC_CANDIDATES``) whose lists agree most with
  the target's for the held-out users (``mimicry``, issue 47); the report names the algorithm
  and every candidate's agreement;
* the adversary's shadow and references train as many epochs as the target's kept weights
  did (``trained_like``) when the target stopped early on validation data the adversary lacks;
  the number of references is ``n_references`` (8 by default, chosen by measurement:
  ``benchmarks/strongest_attacker.py``); ``thorough`` raises it to ``THOROUGH_REFERENCES`` and
  trains them on as many users as the target (``mimic_size``);
* the reference recommenders are independent, so they fan out through the study kit's executor
  (``study_options.executor`` of the audit, ``recprivacy audit --executor ray``): on Ray each trains
  as a task of its own, side by side; in this process (the default) one after another. A reference
  depends only on its index, so the numbers are the same on both;
* ``seeds`` repeats all of it with new groups and shadows (``seed``, ``seed + 1``, ...); every
  number is combined over the seeds the same way (mean, t interval) and each seed's value is
  kept; the verdict is on ROC AUC, the best attack against the strongest baseline
  (``compare.judge``, ``metrics.verdict``).

The section also measures the MLP when both target and shadow deploy Popularity Randomization
(``paper`` protocol, the only one whose popular list the defence replaces) and judges the
defence by the change in ROC AUC on the same users and seeds (``metrics.verdict.judge_defence``). The default list
length ``k`` = 100 is fitted to a small catalogue before the target is trained
(``fit_membership_options``); an explicit ``k`` above that is refused. Item coverage is ``init``:
items the vector users never touched keep random vectors (their number is reported).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy import sparse
from pydantic import Field, PositiveInt, field_validator, model_validator
from pydantic_core import PydanticCustomError

from recprivacy.experiments.membership.lab import AttackSpec, LabOptions, MembershipLab
from recprivacy.attacks.membership.partition import Partition
from recprivacy.attacks.membership.protocols import PROTOCOLS
from recprivacy.config import StudyOptions
from recprivacy.defenses.popularity_randomization import PopularityRandomization
from recprivacy.data.interactions import Interactions
from recprivacy.experiments.audit import AuditContext, SectionWriter, fit_list_length, register_audit_section
from recprivacy.experiments.target import Target
from recprivacy.experiments.train import PreparedData
from recprivacy.experiments.membership.audit_groups import (ServedRecommender, audit_partition, eligible_heldout,
                                                               eligible_trained)
from recprivacy.experiments.membership.cells import randomizer
from recprivacy.experiments.membership.compare import (FPRS, Judgement, Scored, auc_metric, combined, fpr_key, judge,
                                                      margin_of, name_of, per_seed, sample_of, score_all, secondary_rows)
from recprivacy.experiments.membership.renderer import ROC_BAND, roc_png
from recprivacy.models import MODELS, make_model
from recprivacy.privacy.accounting import PrivacyStatement


#: reference recommenders of the ``thorough`` preset (``benchmarks/strongest_attacker.py``)
THOROUGH_REFERENCES = 32


class MembershipAuditOptions(StudyOptions):
    """List length ``k``, item-vector size ``l`` (``n_factors``), the minimum history of a
    user the attack considers, the defence's ``alpha``, the number of ``seeds`` and of
    reference recommenders for LiRA / RMIA; ``max_users``: at most this many non-members (as
    many members), shadow and item-vector users each, seeded samples (None: every eligible user);
    ``mimic_size``: references also train on the target's members the attack leaves out, so that
    they train on as many users as the target (``reference_filler``); ``thorough``: the preset of
    a longer audit, ``THOROUGH_REFERENCES`` references (unless ``n_references`` is given) of the
    target's size (``mimic_size``)."""

    k: PositiveInt = 100
    n_factors: PositiveInt = 100
    min_interactions: PositiveInt = 20
    defense_alpha: float = Field(0.1, gt=0, le=1)
    seeds: PositiveInt = 1
    n_references: int = Field(8, ge=2)
    shadow_algorithm: str | None = None
    max_users: PositiveInt | None = 2000
    mimic_size: bool = False
    thorough: bool = False

    @model_validator(mode="after")
    def _preset(self) -> MembershipAuditOptions:
        if self.thorough:
            if "n_references" not in self.model_fields_set:
                self.n_references = THOROUGH_REFERENCES
            self.mimic_size = True
        return self

    @field_validator("shadow_algorithm")
    @classmethod
    def _serves_new_users(cls, name: str | None) -> str | None:
        if name is not None and (name not in MODELS or not MODELS[name]().serves_new_users):
            able = ", ".join(n for n, klass in MODELS.items() if klass().serves_new_users)
            raise PydanticCustomError("shadow_algorithm", "expected a built-in recommender that serves new users: {able}",
                                      {"able": able})  # fmt: skip
        return name


def shadow_supplied(o: MembershipAuditOptions) -> set[str]:
    """The ``shadow`` input: the options name the adversary's own algorithm, or the section picks
    it by mimicry (``mimicry``) when the target cannot be retrained."""
    return {"shadow"}


#: the algorithms an adversary who does not know the target's tries, most agreeing first (issue 47)
MIMIC_CANDIDATES = ("itemcf", "als", "bpr", "lfm", "lightgcn")


def list_agreement(a: np.ndarray, b: np.ndarray, n_items: int) -> float:
    """Mean overlap@k of two ``[n, k]`` lists of the same users: ``mean_u |A_u ∩ B_u| / k``."""
    n, k = a.shape
    rows = np.repeat(np.arange(n), k)
    left = sparse.csr_matrix((np.ones(n * k), (rows, a.ravel())), shape=(n, n_items))
    right = sparse.csr_matrix((np.ones(n * k), (rows, b.ravel())), shape=(n, n_items))
    return float(left.multiply(right).sum() / (n * k))


def mimicry(ctx: AuditContext, o: MembershipAuditOptions, seed: int) -> dict[str, float]:
    """Agreement (``list_agreement``) of each of ``MIMIC_CANDIDATES``, trained on the auditor's
    training data, with the target's lists for the held-out users served from their histories:
    the adversary's shadow is the algorithm that serves most like the target."""
    users = eligible_heldout(ctx, o.min_interactions)
    histories = ctx.data.full.take_users(users)
    target = ctx.target.serve(np.arange(len(users)), o.k, histories, trained=False)
    out = {}
    for name in MIMIC_CANDIDATES:
        model = make_model(name, seed=seed).fit(ctx.data.train)
        lists = np.asarray(model.recommend_histories(histories, o.k), dtype=np.int64)
        out[name] = list_agreement(target, lists, ctx.data.full.n_items)
    return out


def choose_shadow(ctx: AuditContext, o: MembershipAuditOptions) -> tuple[MembershipAuditOptions, dict[str, float]]:
    """``o`` with the shadow algorithm chosen by ``mimicry`` when the target cannot be retrained
    and none is named (the agreements, empty otherwise)."""
    if o.shadow_algorithm is not None or ctx.target.can_retrain:
        return o, {}
    agreement = mimicry(ctx, o, ctx.config.seed)
    return o.model_copy(update={"shadow_algorithm": max(agreement, key=agreement.get)}), agreement


def fit_membership_options(o: MembershipAuditOptions, data: PreparedData) -> tuple[MembershipAuditOptions, list[str]]:
    """``k`` fitted so that every possible member has ``k`` unseen items (module docstring)."""
    n, longest = data.full.n_items, int(data.full.user_counts().max(initial=0))
    reason = f"the catalogue has {n} items and a user has interacted with {longest} of them"
    return fit_list_length("membership", o, "k", n - longest, reason)


Trainer = Callable[[Interactions, int], Any]


def adversary_trainer(ctx: AuditContext, o: MembershipAuditOptions, seed: int) -> Trainer | None:
    """``train(interactions, index) -> recommender`` for the adversary's shadow (index -1) and
    reference recommenders: a built-in ``shadow_algorithm`` (seeded by ``seed`` and the index),
    else the target's training function; None for a built-in target, whose algorithm the lab
    trains itself (``make_model``), and for a target that cannot be retrained."""
    if o.shadow_algorithm is not None:
        def fit(train: Interactions, index: int) -> Any:
            model_seed = int(np.random.SeedSequence([seed, index + 1]).generate_state(1)[0])
            return make_model(o.shadow_algorithm, seed=model_seed).fit(train)

        return fit
    if ctx.model is None and ctx.target.fit_fn is not None:
        target = ctx.target  # only the target, not the whole context, goes to a Ray task with each reference
        return lambda train, index: ServedRecommender(target.fit(train), train)
    return None


def target_trainer(target: Target, seed: int) -> Trainer | None:
    """``train(interactions, index) -> recommender`` trained as ``target`` was: a built-in target's
    algorithm and parameters (``trained_like``), seeded by ``seed`` and the index, or the target's
    training function; None for a target that cannot be retrained (lists, an endpoint, an object)."""
    if target.algorithm is not None:
        algorithm, params = target.algorithm, trained_like(target.recommender, target.params)

        def fit(train: Interactions, index: int) -> Any:
            model_seed = int(np.random.SeedSequence([seed, index + 1]).generate_state(1)[0])
            return make_model(algorithm, **{**params, "seed": model_seed}).fit(train)

        return fit
    if target.fit_fn is not None:
        return lambda train, index: ServedRecommender(target.fit(train), train)
    return None


def adversary_text(ctx: AuditContext, o: MembershipAuditOptions, agreement: dict[str, float]) -> str:
    """Which recommenders the adversary trained, whether they share the target's algorithm and,
    when chosen by mimicry, every candidate's agreement with the target."""
    if agreement:
        k = o.k
        tried = ", ".join(f"`{n}` {v:.3f}" for n, v in sorted(agreement.items(), key=lambda kv: -kv[1]))
        return (f"The target's algorithm is unknown, so the adversary's shadow and reference recommenders are "
                f"`{o.shadow_algorithm}`, chosen by mimicry: of the candidates trained on the auditor's data, its lists "
                f"agree most with the target's lists for the held-out users (mean overlap@{k}: {tried}). "
                "`--shadow-model NAME` forces another.")  # fmt: skip
    if o.shadow_algorithm is not None:
        return (f"The adversary's shadow and reference recommenders are `{o.shadow_algorithm}`, the adversary's own "
                "choice and not the target's algorithm (paper 001, Assumption II: the adversary does not know how the "
                "target was built).")  # fmt: skip
    how = f"`{ctx.config.model.name}`" if ctx.model is not None else "the target's own training function"
    text = f"The adversary's shadow and reference recommenders are trained with {how}, the target's algorithm (Assumption I)"
    epochs = trained_like(ctx.model, {}).get("n_epochs")
    if epochs is not None:
        text += (f", for {epochs} epochs: as many as the target's kept weights trained before it stopped early on "
                 "validation data the adversary does not have")  # fmt: skip
    return text + f"; {o.n_references} reference recommenders{' of the target size' if o.mimic_size else ''}."


def lab_models(ctx: AuditContext, partition: Partition, label: str, trainer: Trainer | None) -> dict[tuple[str, str, str], Any]:
    """Target (and, with a ``trainer``, shadow) recommenders the lab uses instead of training a
    built-in ``label``; without a trainer the lab trains a built-in target's shadow itself."""
    name = ctx.data.full.name
    target = ctx.model if ctx.model is not None else ServedRecommender(ctx.target, ctx.data.train)
    models = {(name, "target", label): target}
    if trainer is not None:
        models[(name, "shadow", label)] = trainer(partition.shadow.train, -1)
    return models


@dataclass
class SeedRun:
    """One seed of the section: scores under each protocol, and under the ``paper`` protocol with
    the defence (the MLP and the output statistics, ``defended``)."""

    partition: Partition
    scored: dict[str, Scored]
    defended: Scored


def trained_like(model: Any, params: dict[str, Any]) -> dict[str, Any]:
    """The target's parameters with ``n_epochs`` fixed to the epochs its kept weights trained for
    when it stopped early on validation data: the adversary's shadow and references have no
    validation data, so without this they train every epoch of ``n_epochs`` and overfit their
    members far more than the target did, and LiRA / RMIA calibrate on the wrong distribution."""
    history = getattr(model, "history_", None)
    if history is None or history.best_epoch < 0:
        return dict(params)
    return {**params, "n_epochs": history.best_epoch + 1}


def reference_filler(ctx: AuditContext, partition: Partition) -> Interactions:
    """The target's training interactions of the members the attack leaves out: every reference
    trains on them too, so that it trains on about as many users as the target did (issue 47)."""
    attacked = np.zeros(ctx.data.full.n_users, dtype=bool)
    attacked[partition.target.users] = True
    others = np.flatnonzero((ctx.data.train.user_counts() > 0) & ~attacked)
    return ctx.data.train.subset_users(others)


def run_seed(ctx: AuditContext, o: MembershipAuditOptions, seed: int) -> SeedRun | None:
    """Both protocols and the defence on new groups drawn with ``seed`` (None: too few users)."""
    partition = audit_partition(ctx, o.min_interactions, seed, o.max_users)
    if partition is None:
        return None
    name = ctx.data.full.name
    algorithm = ctx.config.model.name if ctx.model is not None else "target"
    params = trained_like(ctx.model, ctx.config.model.params) if ctx.model is not None else {}
    options = LabOptions(min_interactions=o.min_interactions, item_coverage="init", holdout="none",
                         model_params={algorithm: params}, n_references=o.n_references)  # fmt: skip
    trainer = adversary_trainer(ctx, o, seed)
    lab = MembershipLab({name: ctx.data.full}, options, seed=seed, randomize=randomizer(o.defense_alpha, ctx.config.noise),
                        partitions={name: partition}, models=lab_models(ctx, partition, algorithm, trainer),
                        trainers={algorithm: trainer} if trainer else {},
                        reference_filler={name: reference_filler(ctx, partition)} if o.mimic_size else {},
                        executor=ctx.executor)  # fmt: skip
    calibrated = trainer is not None or ctx.model is not None
    specs = {p: AttackSpec((name, algorithm), (name, algorithm), k=o.k, n_factors=o.n_factors, protocol=p) for p in PROTOCOLS}
    scored = {p: score_all(lab, spec, calibrated) for p, spec in specs.items()}
    defended = score_all(lab, replace(specs["paper"], defense="both"), calibrated=False)
    return SeedRun(partition, scored, defended)


def membership_section(ctx: AuditContext, out: SectionWriter) -> None:
    """Run the attacks against the audited target under both protocols, and the defence."""
    o, agreement = choose_shadow(ctx, ctx.options)
    runs = [run_seed(ctx, o, ctx.config.seed + i) for i in range(o.seeds)]
    if runs[0] is None:
        out.write(f"Not measured: fewer than 6 users held out of the target's training have at least "
                  f"{o.min_interactions} interactions (set `study_options.holdout_users` or "
                  f"`study_options.membership.min_interactions`).")  # fmt: skip
        return
    statement = PopularityRandomization(o.defense_alpha, ctx.config.seed, ctx.config.noise).privacy_statement()
    _write(out, o, runs, statement)
    out.write(adversary_text(ctx, o, agreement))
    if ctx.executor is not None:
        out.write(f"The {o.n_references} reference recommenders of each seed trained on the study kit's executor "
                  f"`{ctx.executor.name}`, one task each, side by side (`study_options.executor`); the numbers are the "
                  "same as in this process.")  # fmt: skip
    for name, value in agreement.items():
        out.add_metric(f"mimicry/{name}", value)
    _write_caps(out, o, len(eligible_heldout(ctx, o.min_interactions)), len(eligible_trained(ctx, o.min_interactions)))


def _write_caps(out: SectionWriter, o: MembershipAuditOptions, eligible: int, trained: int) -> None:
    """Say which groups ``max_users`` capped (the intervals are over those samples)."""
    if o.max_users is None:
        return
    if eligible // 2 > o.max_users:
        out.write(f"Each group is a seeded random sample of at most {o.max_users} of the {eligible} held-out users with at "
                  f"least {o.min_interactions} interactions (`max_users`); the intervals above are over these samples.")  # fmt: skip
    if trained > o.max_users:
        out.write(f"The members are a seeded random sample of {o.max_users} of the {trained} trained users with at least "
                  f"{o.min_interactions} interactions (`max_users`).")  # fmt: skip


def _write(out: SectionWriter, o: MembershipAuditOptions, runs: list[SeedRun], statement: PrivacyStatement) -> None:
    rows, curves = [], {}
    for protocol in PROTOCOLS:
        scored = [r.scored[protocol] for r in runs]
        rows += _attack_rows(out, protocol, scored)
        if protocol == "served":
            first = scored[0]
            curves = {name_of(key): (first.labels, scores) for key, scores in {**first.attacks, **first.baselines}.items()}
            baselines = [name_of(key) for key in first.baselines]
        _add_risks(out, protocol, judge(scored, protocol), scored)
    _judge_defence(out, o, runs)
    seeds_column = ["ROC AUC per seed"] if len(runs) > 1 else []
    combined_how = ("one seed: stratified bootstrap (ROC AUC), Clopper-Pearson (TPR)" if len(runs) == 1
                    else f"mean over {len(runs)} seeds with a Student-t interval over the per-seed values")  # fmt: skip
    out.add_table("attack", ["protocol", "kind", "attack or baseline", "ROC AUC [95%]", "TPR@1%FPR [95%]", "TPR@0.1%FPR [95%]",
                             *seeds_column], rows,
                  f"Membership attacks and baselines, top-{o.k} lists, item vectors l = {o.n_factors}; {combined_how}. "
                  "Attacks read the target's lists (output statistics included); baselines read only the users' own "
                  "histories")  # fmt: skip
    _groups_table(out, runs[0].partition)
    out.add_figure("roc", roc_png(curves, baselines), "ROC of every attack and baseline (dashed: the baselines, which "
                   f"read only the users' own histories; protocol served, first seed) on log-log axes; the diagonal is a "
                   f"blind guess. {ROC_BAND}")  # fmt: skip
    out.write(
        "An adversary who sees a user's interactions and the target's top-k list for that user guesses whether the "
        "user's data trained the target. Protocol `served` (the verdict): non-members are users held out of training, "
        "served by the target from their history as a deployed system serves a new user, so members and non-members get "
        "lists made the same way. Protocol `paper` (paper 001, for reference): non-members get the popular list, which a "
        "statistic of the list already separates from personalised lists. Attacks: the paper's MLP on a shadow "
        "recommender, LiRA and RMIA calibrated per user on reference recommenders (which algorithm: below), and "
        "training-free statistics of the served list (they read the target's output, so they are attacks too). "
        "Baselines: a blind guess and statistics of the users' own histories (what the adversary knows without the "
        "target; they show how the given members and non-members differ in the data alone). The verdict is on ROC AUC: "
        "the best attack against the strongest baseline; TPR at 1% and 0.1% FPR are shown against the strongest "
        "baseline at that FPR. The defence row randomizes non-members' popular lists (protocol `paper`) in target and "
        f"shadow, against an adversary who knows the defence.\n\n```\n{statement}\n```"
    )


def _attack_rows(out: SectionWriter, protocol: str, scored: list[Scored]) -> list[list]:
    """One row per attack and baseline: ROC AUC and TPR combined over the seeds (``compare.combined``);
    the metrics keep the combined value and each seed's."""
    rows = []
    for kind, keys in (("attack", scored[0].attacks), ("baseline", scored[0].baselines)):
        for key in keys:
            auc = combined(scored, key, "auc")
            seeds = [v.value for v in per_seed(scored, key, auc_metric)]
            out.add_metric(f"{protocol}/{key}/auc", auc.value)
            for i, v in enumerate(seeds):
                out.add_metric(f"{protocol}/{key}/auc/seed{i}", v)
            tprs = [combined(scored, key, fpr_key(f)) for f in FPRS]
            if tprs[0].resolvable:
                out.add_metric(f"{protocol}/{key}/tpr@1%fpr", tprs[0].value)
            flag = " (below a blind guess)" if kind == "attack" and auc.high < 0.5 else ""
            rows.append([protocol, kind, name_of(key) + flag, str(auc), *map(str, tprs)]
                        + ([", ".join(f"{v:.3f}" for v in seeds)] if len(scored) > 1 else []))  # fmt: skip
    return rows


def _add_risks(out: SectionWriter, protocol: str, j: Judgement, scored: list[Scored]) -> None:
    """The best attack's ROC AUC judged against the strongest baseline (``compare.judge``), and
    its TPR at 1% and 0.1% FPR as secondary rows against the strongest baseline at that FPR."""
    attack = f"user-level membership inference (protocol {protocol}, best: {name_of(j.best_attack)})"
    out.judge(attack, "ROC AUC", j.attack, j.baseline.value, name_of(j.best_baseline), j.margin, j.note, chance=0.5,
              sample=j.sample, per_seed=j.per_seed)  # fmt: skip
    for metric, value, baseline, name, margin, seeds in secondary_rows(scored, j):
        out.secondary(attack, metric, "ROC AUC", value, baseline, name, margin, sample=j.sample, per_seed=seeds)


def _judge_defence(out: SectionWriter, o: MembershipAuditOptions, runs: list[SeedRun]) -> None:
    """Change in the strongest attack's ROC AUC when Popularity Randomization protects target and
    shadow, on the same users and seeds: the strongest of the attacks run against the defence (the
    MLP, trained on a defended shadow, and the output statistics) against the strongest of the same
    attacks undefended. The row's value is the defended AUC, its baseline the undefended one, its
    margin the change (paired bootstrap on one seed, t interval of per-seed changes on several)."""
    keys = list(runs[0].defended.attacks)
    pairs = [Scored(r.defended.labels, {**{f"defended:{k}": v for k, v in r.defended.attacks.items()},
                                        **{k: r.scored["paper"].attacks[k] for k in keys}}, {}) for r in runs]  # fmt: skip
    def best(prefix: str) -> str:
        return max((prefix + k for k in keys), key=lambda key: combined(pairs, key, "auc").value)
    defended, undefended = best("defended:"), best("")
    after, before = combined(pairs, defended, "auc"), combined(pairs, undefended, "auc")
    change = margin_of(pairs, defended, undefended, "auc")
    out.add_metric("defended/best/auc", after.value)
    out.add_metric("defended/best/auc_change", change.value)
    which = name_of(defended.removeprefix("defended:"))
    out.defence(f"user-level membership inference vs Popularity Randomization (alpha {o.defense_alpha}, protocol paper, "
                f"best: {which})", "ROC AUC", after, before.value, change,
                f"the strongest undefended attack's ROC AUC ({name_of(undefended)})", sample=sample_of(pairs))  # fmt: skip


def _groups_table(out: SectionWriter, partition: Partition) -> None:
    target, shadow = partition.target, partition.shadow
    sizes = [["target members (trained users)", len(target.members)], ["target non-members (held out)", len(target.nonmembers)],
             ["shadow members", len(shadow.members)], ["shadow non-members", len(shadow.nonmembers)],
             ["item-vector users", int((partition.vector.user_counts() > 0).sum())],
             ["items without vector data (random vectors)", partition.coverage["items_without_vector_data"]]]  # fmt: skip
    out.add_table("groups", ["group", "users"], sizes, "Who plays which part in the attack (first seed); TPR at 1% FPR "
                  "needs at least 100 non-members, 500 to be measured well")  # fmt: skip


register_audit_section("membership", membership_section, "Membership inference (paper 001)", MembershipAuditOptions,
                       order=10, heldout_users=True, fit=fit_membership_options, needs=("non_members", "shadow"),
                       supplies=shadow_supplied)  # fmt: skip
