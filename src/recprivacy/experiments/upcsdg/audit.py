"""The audit's ``synthetic_release`` section: offer a UPC-SDG release (paper 003) of the
audited target's training data, and measure what it costs and what it hides.

Features: the target's own factors when it has them, else a BPR-MF fitted on the training
split. The release (one ``k`` and ``γ`` for every user) retrains the target's algorithm, tested
on the original test split; a blind attacker holding the release and the item embeddings tries
to name each user's replaced originals, judged against the popularity guess on the same users
(``release.judged_recovery``). UPC-SDG makes no formal privacy claim, and the section says so.
"""

from __future__ import annotations

import math

import numpy as np

from pydantic import Field, PositiveInt, field_validator

from recprivacy.attacks.recovery import ReplacementRecoveryAttack
from recprivacy.config import StudyOptions
from recprivacy.data.interactions import Interactions
from recprivacy.defenses.upcsdg import FrozenEmbeddings, SyntheticRelease, pretrain_bpr
from recprivacy.defenses.upcsdg.preferences import check_unit_interval
from recprivacy.experiments.audit import AuditContext, SectionWriter, register_audit_section
from recprivacy.experiments.upcsdg.measurements import ratio
from recprivacy.experiments.upcsdg.options import CUTOFF, METRICS, GeneratorParams
from recprivacy.experiments.upcsdg.release import fit_generator, judged_recovery
from recprivacy.metrics.ranking import evaluate
from recprivacy.metrics.verdict import users_sample
from recprivacy.models import make_model


class SyntheticReleaseOptions(StudyOptions):
    """Audit options: the release's ``k`` and ``gamma``, generator parameters, attack cut-off,
    and ``max_users``: the recovery attack's seeded sample of users with a replaced item (None: all)."""

    k: float = 0.2
    gamma: float = 0.5
    generator: GeneratorParams = Field(default_factory=dict)
    attack_k: PositiveInt = 10
    max_users: PositiveInt | None = 5000

    @field_validator("k", "gamma")
    @classmethod
    def _unit(cls, value: float) -> float:
        return check_unit_interval(value, "value")


def _features(ctx: AuditContext) -> tuple[FrozenEmbeddings, str]:
    """The target's own factors when it has them, else a BPR-MF fitted for the purpose."""
    if hasattr(ctx.model, "user_factors_"):
        return FrozenEmbeddings.from_model(ctx.model), f"the target's ({ctx.config.model.name}) factors"
    return pretrain_bpr(ctx.data.train, ctx.data.valid, seed=ctx.config.seed), "a BPR-MF fitted on the training split"


def synthetic_release_section(ctx: AuditContext, out: SectionWriter) -> None:
    """Offer a UPC-SDG release of the training data: its utility and what an attacker recovers."""
    o, data, seed = ctx.options, ctx.data, ctx.config.seed
    features, source = _features(ctx)
    release = fit_generator(data.train, features, o.k, o.gamma, o.generator, seed, ctx.config.noise).generate()
    params = {"seed": seed, **ctx.config.model.params}
    retrained = make_model(ctx.config.model.name, **params).fit(release.data, data.valid)
    before, after = (evaluate(m, data.test, ks=(CUTOFF,), exclude=data.valid) for m in (ctx.model, retrained))
    key = f"recall@{o.attack_k}"
    value, blind, margin = judged_recovery(ReplacementRecoveryAttack(features.items).fit(release.data), release, o.attack_k,
                                           o.max_users, seed)  # fmt: skip
    attack, guess = {key: value.value}, {key: blind}
    s = release.summary
    rows = [[f"{x}@{CUTOFF}", before[f"{x}@{CUTOFF}"], after[f"{x}@{CUTOFF}"], ratio(after[f"{x}@{CUTOFF}"], before[f"{x}@{CUTOFF}"])]
            for x in METRICS]
    out.add_table("utility", ["metric", "original training data", "synthetic release", "retained"], rows,
                  f"{ctx.config.model.name} trained on each, tested on the original test split")
    out.add_table("privacy", ["quantity", "value"], [
        ["share of each user's items replaced (mean)", s["realised_ratio_mean"]], ["mean f_sim to the original", s["mean_f_sim"]],
        ["interactions with no candidate within gamma (dropped)", s["dropped_interactions"]],
        [f"recovery Recall@{o.attack_k} (blind attacker)", attack[key]], [f"popularity guess Recall@{o.attack_k}", guess[key]],
    ], f"UPC-SDG release with k = {o.k}, γ = {o.gamma}")
    out.add_metric("retention", ratio(after[f"recall@{CUTOFF}"], before[f"recall@{CUTOFF}"]) or math.nan)
    out.add_metric(f"recovery_{key}", attack[key])
    out.judge("synthetic release: item recovery", f"Recall@{o.attack_k}", value, blind,
              f"popularity guess, {o.attack_k} items", margin, f"k={o.k}, γ={o.gamma}",
              sample=users_sample(value.n))  # fmt: skip
    out.write(
        f"UPC-SDG (paper 003) replaced {s['replaced_interactions']} of {s['original_interactions']} training interactions "
        f"(k = {o.k}) by generated items within a similarity cap γ = {o.gamma} and dropped {s['dropped_interactions']} "
        f"that had no candidate within it, using {source} as frozen features. "
        f"{_training_sample(s['method']['train_users'], data.train)}{_attack_sample(release, o.max_users)}"
        f"{ctx.config.model.name} trained on the release keeps {ratio(after[f'recall@{CUTOFF}'], before[f'recall@{CUTOFF}']) or 0:.0%} "
        f"of its Recall@{CUTOFF}. A blind attacker holding the release and the item embeddings names "
        f"{attack[key]:.1%} of the replaced originals in its top {o.attack_k} (popularity guess: {guess[key]:.1%}). "
        "UPC-SDG has no formal privacy guarantee. To release the data: "
        f"`recprivacy synthesize --dataset {ctx.config.dataset.name} --k {o.k} --gamma {o.gamma} --out DIR` "
        "(add `--privacy prefs.csv` for per-user settings)."
    )


def _training_sample(trained: int, train: Interactions) -> str:
    """The sentence stating the generator's training sample, empty when every user trained."""
    active = int((train.user_counts() > 0).sum())
    if trained >= active:
        return ""
    return (f"The selector and generator were trained on a seeded sample of {trained} of the {active} users "
            "(`generator.train_users`) and applied to every user. ")


def _attack_sample(release: SyntheticRelease, max_users: int | None) -> str:
    """The sentence stating the recovery attack's sample, empty when it attacked every user."""
    eligible = int((np.diff(release.pairs_matrix("original_item").indptr) > 0).sum())
    if max_users is None or eligible <= max_users:
        return ""
    return (f"The recovery attack below ran on a seeded sample of {max_users} of the {eligible} users with a replaced "
            "item (`max_users`); its interval is a bootstrap over that sample. ")


register_audit_section("synthetic_release", synthetic_release_section, "Synthetic release (UPC-SDG)",
                       SyntheticReleaseOptions, order=70, needs=("builtin",))
