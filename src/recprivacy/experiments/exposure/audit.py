"""The audit's ``exposure`` section (paper 000's attack on the auditor's own exposures).

The exposures the auditor logged (``Audit(exposures=...)``, ``--exposures FILE``), else
simulated exposure from the audit's built-in target, become (recent clicks, shown slate) pairs
of a seeded user sample split 8:1:1. One attacker is trained on the training users' slates; its
Recall@10 over all items on the held-out users is judged (``metrics.verdict``) against the
stronger 10-item blind guess (``popularity`` or ``exposed``, never the k*M lists) by a paired
bootstrap over users; random-position uniform replacement at each ``ratio`` is judged by its
change in Rec*@10 against L = 0 (``protection.judge_rows``).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field, PositiveInt

from recprivacy.attacks.exposure import ExposureAttack, evaluate_baselines
from recprivacy.attacks.exposure.attack import rank_pairs
from recprivacy.attacks.exposure.baselines import BASELINES, baseline_scores, popularity_scores
from recprivacy.attacks.exposure.metrics import per_pair_metrics
from recprivacy.config import StudyOptions
from recprivacy.data.exposure_pairs import ExposurePairs, simulate_exposure, split_pairs, user_groups
from recprivacy.defenses.exposure_perturbation import ExposurePerturbation
from recprivacy.experiments.audit import AuditContext, SectionWriter, register_audit_section
from recprivacy.experiments.exposure.cells import CANDIDATES, attacker_parts
from recprivacy.experiments.exposure.pairs import log_pairs
from recprivacy.experiments.exposure.protection import CHANGE_LABEL, judge_rows, protection_point
from recprivacy.experiments.sampling import sample_users
from recprivacy.metrics.intervals import Estimate, paired_difference_interval, weighted_mean
from recprivacy.metrics.verdict import users_sample
from recprivacy.report.figures import line_plot


class ExposureAuditOptions(StudyOptions):
    """The audit's exposure section: the exposures the auditor logged (``Audit(exposures=...)``,
    ``--exposures FILE``), else simulated exposure from the audit's built-in target; one
    attacker, and random-position uniform replacement at ``ratios``; ``max_users``: attack a
    seeded random sample of at most this many users (None: all; ``experiments.sampling``);
    ``log_rule``: how logged exposures become (clicks, slate) pairs (``data.exposure_pairs``;
    None: ``mind`` / ``zhihu`` for those loaders' logs, else one pair per impression);
    ``softmax_sample``: the attacker's training softmax over a sample of items on large
    catalogues (``ExposureAttack``; None: every item)."""

    history_len: PositiveInt = 5
    slate_size: PositiveInt = 10
    max_pairs_per_user: PositiveInt | None = 10
    attacker: str = "mean+gru"
    dim: PositiveInt = 64
    n_epochs: PositiveInt = 10
    patience: PositiveInt = 3
    ratios: list[float] = Field(default_factory=lambda: [0.2, 0.4, 0.6])
    max_users: PositiveInt | None = 3000
    log_rule: Literal["impressions", "mind", "zhihu"] | None = None
    softmax_sample: PositiveInt | Literal["auto"] | None = "auto"


def audit_pairs(ctx: AuditContext, opts: ExposureAuditOptions, out: SectionWriter) -> tuple[ExposurePairs, dict, str]:
    """(clicks, slate) pairs of a seeded sample of at most ``max_users`` users, their 8:1:1 user
    groups, and a sentence saying where the slates come from: the logged exposures when the audit
    has them, else the built-in target replayed along every user's history."""
    log = ctx.data.exposures
    if log is not None:
        rule = opts.log_rule or (log.name if log.name in ("mind", "zhihu") else "impressions")
        pairs = log_pairs(rule, log, opts.history_len, opts.slate_size)
        eligible = np.unique(pairs.users)
        chosen = sample_users(eligible, opts.max_users, ctx.config.seed)
        pairs = pairs.for_users(chosen)
        how = (f"The slates come from the {len(log)} logged impressions of {log.name}: the {rule} rule "
               f"(`data.exposure_pairs`) made {len(pairs)} pairs of a shown slate of {opts.slate_size} items and the "
               f"{opts.history_len} clicks before it, which an attacker tries to recover from the slate alone.")  # fmt: skip
    else:
        data = ctx.data.full
        eligible = np.flatnonzero(data.user_counts() > opts.history_len)
        chosen = sample_users(eligible, opts.max_users, ctx.config.seed)
        pairs = simulate_exposure(ctx.model, data, opts.history_len, opts.slate_size, users=chosen,
                                  max_pairs_per_user=opts.max_pairs_per_user)  # fmt: skip
        how = (f"The target recommender was replayed along each user's history: at {len(pairs)} time steps "
               f"({opts.max_pairs_per_user or 'all'} per user at most) it showed the {opts.slate_size} best items the user "
               f"had not seen, and the {opts.history_len} clicks before each step are what an attacker tries to recover "
               "from that slate alone.")  # fmt: skip
    if len(chosen) < len(eligible):
        out.write(f"Attacked a seeded random sample of {len(chosen)} of the {len(eligible)} users (`max_users`).")
    return pairs, user_groups(chosen, pairs.n_users, ctx.config.seed), how


def exposure_section(ctx: AuditContext, out: SectionWriter) -> None:
    """Replay the target along every user's history, attack the slates of held-out users,
    judge the attack against the stronger k-item guess at the same k, and judge what random
    uniform perturbation changes."""
    opts = ctx.options
    encoder, decoder = attacker_parts(opts.attacker, "study_options.exposure.attacker")
    pairs, groups, how = audit_pairs(ctx, opts, out)
    parts = split_pairs(pairs, groups)
    attack = ExposureAttack(encoder, decoder, dim=opts.dim, n_epochs=opts.n_epochs, patience=opts.patience, seed=ctx.config.seed,
                            softmax_sample=opts.softmax_sample)  # fmt: skip
    attack.fit(parts["train"], parts["valid"])
    scores = {c: attack.evaluate(parts["test"], (10,), c) for c in CANDIDATES}
    baselines = {c: evaluate_baselines(attack.vocab_, parts["train"], parts["test"], (10,), c) for c in CANDIDATES}
    value, name, blind, margin = judged_recall(attack, parts["train"], parts["test"])
    attacked = np.unique(parts["test"].users[attack.vocab_.known_rows(parts["test"])])  # the pairs judged_recall keeps
    sample = users_sample(len(attacked))
    out.judge("exposure leakage (recent clicks from one shown slate)", "Recall@10 (all items)", value, blind,
              f"{name} guess, 10 items", margin, attack.name, chance=None, sample=sample)  # fmt: skip
    for c in CANDIDATES:
        out.add_metric(f"recall@10/{c}", scores[c]["recall@10"])
    rows = [[f"attack {attack.name}"] + [scores[c][m] for c in CANDIDATES for m in ("recall@10", "ndcg@10")]]
    rows += [[f"baseline: {b}"] + [baselines[c][b][m] for c in CANDIDATES for m in ("recall@10", "ndcg@10")] for b in baselines["all"]]
    out.add_table("attack", ["guess", "recall@10 (all)", "ndcg@10 (all)", "recall@10 (user log)", "ndcg@10 (user log)"], rows,
                  f"{len(parts['test'])} slates of {len(groups['test'])} held-out users; '@kM' baselines list k*M items "
                  "(shown for the paper's sequence decoders, not the verdict's baseline)")  # fmt: skip
    audit_protection(attack, parts, pairs, opts, out, ctx.config.seed, ctx.config.noise)
    out.write(
        f"{how} An {attack.name} attacker trained on the slates of {len(groups['train'])} users recovers "
        f"{value.value:.1%} [{value.low:.1%}, {value.high:.1%}] of the held-out users' recent clicks in its top-10 lists "
        f"over all {pairs.n_items} items; the stronger 10-item blind guess (the {name} guess) recovers {blind:.1%}. "
        "Intervals are a bootstrap over held-out users (a user's slates resampled together). Exposure logs leak recent "
        "behaviour only as far as the attack's margin over that guess clears zero (risk summary)."
    )
    if attack.sample_ is not None:
        out.write(f"The attacker's training softmax ran over {attack.sample_} items drawn per step plus the step's "
                  f"targets (`softmax_sample`); validation and the results above rank all {attack.vocab_.n_items} items.")  # fmt: skip


def judged_recall(attack: ExposureAttack, train: ExposurePairs, test: ExposurePairs, k: int = 10,
                  oov: str = "drop") -> tuple[Estimate, str, float, Estimate]:  # fmt: skip
    """The attack's Recall@k over all items against the stronger k-item blind guess
    (``popularity`` or ``exposed``, never the k*M lists) on the same pairs, with a paired
    bootstrap over users: (attack, baseline name, baseline value, margin); ``oov`` as
    ``ExposureAttack.encode`` (``token`` keeps perturbed slates with unseen items)."""
    encoded = attack.encode(test, oov)
    recall = per_pair_metrics(attack.pair_ranks(encoded, None, k), (k,))[f"recall@{k}"]
    popularity = popularity_scores(attack.vocab_, train)
    guesses = {b: per_pair_metrics(rank_pairs(baseline_scores(b, popularity), encoded, None, depth=k), (k,))[f"recall@{k}"]
               for b in BASELINES}  # fmt: skip
    name = max(guesses, key=lambda b: guesses[b].mean())
    value, blind, margin = paired_difference_interval(weighted_mean(recall), weighted_mean(guesses[name]), encoded.users)
    return value, name, blind, margin


def audit_protection(attack: ExposureAttack, parts: dict, pairs: ExposurePairs, opts: ExposureAuditOptions,
                     out: SectionWriter, seed: int, noise: str) -> None:  # fmt: skip
    """Frozen attacker against random-position uniform replacement at each ratio (drawn from
    ``noise``); each ratio is judged by its change in Rec*@10 against L = 0 (``judge_rows``)."""
    test = parts["test"].subset(attack.vocab_.known_rows(parts["test"]))
    simulated = pairs.next_items is not None
    rows = judge_rows([{"selection": "random", "replacement": "uniform", "L": ratio, "attacker": "frozen",
                        **protection_point(attack, ExposurePerturbation(ratio, seed=seed, noise=noise).fit(pairs).perturb(test),
                                           simulated)}
                       for ratio in [0.0, *opts.ratios]])  # fmt: skip
    utility, label = ("next-item recall@N", f"next-item recall@{opts.slate_size}") if simulated else ("acc*", "Acc* (Eq. 18)")
    columns = ["L", "recall@10", "change vs L = 0", "acc*", "next-item recall@N"]
    out.add_table("protection", ["L", "Rec*@10", "change vs L = 0 [95% CI]", "Acc*", f"next-item recall@{opts.slate_size}"],
                  [[r[c] for c in columns] for r in rows], "Random positions replaced by uniformly drawn items (frozen "
                  "attacker); change = defended - undefended Rec*@10 on the same pairs, paired bootstrap over users; "
                  "next-item recall needs simulated exposure (logged slates carry no next item: Acc* is their utility)")  # fmt: skip
    backfires = [r["L"] for r in rows if r[CHANGE_LABEL] == "backfires"]
    if backfires:
        out.write(f"**The perturbation backfires** at L = {', '.join(f'{r:g}' for r in backfires)}: the frozen attacker "
                  "recovers *more* recent clicks from perturbed slates than from clean ones (the interval of the change "
                  "lies above zero). Replacing shown items by uniform draws moves the slates towards what the attacker "
                  "predicts without information; this defence does not protect these users at these ratios.")  # fmt: skip
    png = line_plot({"random/uniform": ([r[utility] for r in rows], [r["recall@10"] for r in rows])},
                    f"{label} (utility)", "Rec*@10 (leakage)", markers=True)  # fmt: skip
    out.add_figure("privacy-utility", png, "Each point one replacement ratio L, from L = 0 (right) to the largest")


register_audit_section("exposure", exposure_section, "Exposure leakage (paper 000)", ExposureAuditOptions, order=20,
                       needs=("exposures",))
