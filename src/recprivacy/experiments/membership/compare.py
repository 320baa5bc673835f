"""Every membership attack against the strongest baseline, with intervals and one verdict.

``score_all(lab, spec)`` gives, for the target users of one setting, the *attacks*: the paper's
shadow-trained MLP, the calibrated attacks (LiRA online / offline, RMIA) and the training-free
statistics of the target's lists (``attacks.membership.list_statistics``: they read the
target's output, so they are attacks, and one of them may be the best); and the *baselines*:
statistics of the users' own histories, which need no target (``history_scores``), beside a
blind guess (ROC AUC 0.5, TPR at FPR f = f).

``judge(runs)`` combines the seeds of one protocol: every attack's and baseline's ROC AUC per
seed; the best attack and the strongest baseline by their mean; on one seed a stratified
bootstrap (paired for the margin), on several the mean with a Student-t interval over the
per-seed values (per-seed differences for the margin). The best of ``m`` attacks is chosen on the
same users it is judged on, so its value and margin intervals are at level ``1 - 0.05 / m``
(Bonferroni): on a target that leaks nothing, at most 5% of audits read "leaks". The verdict is
``metrics.verdict.judge_attack`` on ROC AUC (the primary metric); TPR at 1% and 0.1% FPR are
secondary rows, each against the strongest baseline *at that FPR*. Attacks whose interval lies
wholly below a blind guess are named (their assumptions do not fit the target). Under the
``paper`` protocol, when an output statistic does as well as the best attack and both are above
a blind guess, the note says the signal is the protocol, not memorisation.
``protocol_records`` and ``summarise_records`` run and aggregate the protocol comparison
(``benchmarks/membership_protocols.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from recprivacy.experiments.membership.lab import AttackSpec, LabOptions, MembershipLab
from recprivacy.attacks.membership.list_statistics import TRIVIAL
from recprivacy.attacks.membership.protocols import PROTOCOLS
from recprivacy.data.interactions import Interactions
from recprivacy.metrics.intervals import (LEVEL, Estimate, auc_difference_interval, auc_interval, mean_interval,
                                         tpr_at_fpr_interval, unpaired_difference)
from recprivacy.metrics.summary import mean_sd
from recprivacy.metrics.verdict import Sample, Verdict, judge_attack

ATTACK_NAMES = {"mlp": "paper MLP (shadow-trained)", "lira": "LiRA (online)", "lira_offline": "LiRA (offline)",
                "rmia": "RMIA", "popular_overlap": "output statistic: -overlap with adversary's top-k popular",
                "mean_popularity": "output statistic: -mean item popularity of the list",
                "feature_norm": "output statistic: -norm of paper feature"}  # fmt: skip
BASELINE_NAMES = {"history_length": "history statistic: number of interactions",
                  "history_popularity": "history statistic: mean item popularity", "blind": "blind guess"}  # fmt: skip
FPRS = (0.01, 0.001)
BLIND = "blind"


@dataclass
class Scored:
    """Target labels and each attack's and baseline's scores for one setting and seed."""

    labels: np.ndarray
    attacks: dict[str, np.ndarray]
    baselines: dict[str, np.ndarray]


def score_all(lab: MembershipLab, spec: AttackSpec, calibrated: bool = True) -> Scored:
    """MLP, calibrated attacks (when ``calibrated``) and output statistics (the attacks), and
    the history statistics (the baselines) on ``spec``'s targets."""
    outcome = lab.run(spec)
    attacks = {"mlp": outcome.scores}
    if calibrated:
        attacks.update(lab.calibrated_scores(spec))
    attacks.update(lab.output_statistic_scores(spec))
    return Scored(outcome.labels, attacks, lab.history_scores(spec))


def estimates(labels: np.ndarray, scores: np.ndarray, seed: int = 0) -> dict[str, Estimate]:
    """ROC AUC and TPR at each of ``FPRS`` with their intervals."""
    out = {"auc": auc_interval(labels, scores, seed=seed)}
    out.update({fpr_key(f): tpr_at_fpr_interval(labels, scores, f) for f in FPRS})
    return out


def fpr_key(fpr: float) -> str:
    """``tpr@1%fpr``, ``tpr@0.1%fpr``."""
    return f"tpr@{fpr:.1%}fpr".replace(".0%", "%")


def name_of(key: str) -> str:
    """The report name of an attack or baseline key."""
    return ATTACK_NAMES.get(key) or BASELINE_NAMES.get(key, key)


def is_output_statistic(key: str) -> bool:
    return key in TRIVIAL


def sample_of(runs: Sequence[Scored], attacks: int = 1) -> Sample:
    """Members and non-members attacked (first seed), how the seeds are combined and, for the
    best of several ``attacks``, the interval level (``family_level``)."""
    y = runs[0].labels
    how = "stratified bootstrap" if len(runs) == 1 else "mean over seeds, t interval"
    if attacks > 1:
        how += f"; best of {attacks} attacks, intervals at {family_level(attacks):.1%} (Bonferroni)"
    return Sample(int(y.sum()), int((y == 0).sum()), len(runs), how)


# ---------------------------------------------------------------------------- per-seed metrics


Metric = Callable[..., Estimate]


def family_level(m: int) -> float:
    """``1 - 0.05 / m``: the interval level that keeps the chance of any false alarm among ``m``
    attacks at 5% (Bonferroni), since the best of ``m`` is chosen on the same users."""
    return 1.0 - (1.0 - LEVEL) / max(m, 1)


def auc_metric(labels: np.ndarray, scores: np.ndarray, level: float = LEVEL) -> Estimate:
    return auc_interval(labels, scores, level=level)


def tpr_metric(fpr: float) -> Metric:
    return lambda labels, scores, level=LEVEL: tpr_at_fpr_interval(labels, scores, fpr, level)


def _scores(run: Scored, key: str) -> np.ndarray | None:
    """An attack's or baseline's scores; None for the blind guess (no scores)."""
    return None if key == BLIND else {**run.attacks, **run.baselines}[key]


def _blind_value(metric: str) -> float:
    """A blind guess's ROC AUC (0.5) or TPR at FPR f (f)."""
    return 0.5 if metric == "auc" else float(metric.split("@")[1].split("%")[0]) / 100


def per_seed(runs: Sequence[Scored], key: str, metric: Metric, level: float = LEVEL) -> list[Estimate]:
    return [metric(r.labels, _scores(r, key), level) for r in runs]


def combine(values: Sequence[Estimate], bounds: tuple[float, float] = (0.0, 1.0), level: float = LEVEL) -> Estimate:
    """One seed's estimate as it is; several seeds' mean with a t interval (unresolvable if any is)."""
    if len(values) == 1:
        return values[0]
    if not all(v.resolvable for v in values):
        bad = next(v for v in values if not v.resolvable)
        return Estimate(float("nan"), bounds[0], bounds[1], bad.method, bad.n, bad.level, resolvable=False)
    return mean_interval([v.value for v in values], level=level, bounds=bounds)


def combined(runs: Sequence[Scored], key: str, metric: str, level: float = LEVEL) -> Estimate:
    """``key``'s ``metric`` (``auc`` or ``tpr@f%fpr``) combined over the seeds; the blind guess is exact."""
    if key == BLIND:
        v = _blind_value(metric)
        return Estimate(v, v, v, "blind guess (exact)", len(runs[0].labels), level)
    return combine(per_seed(runs, key, _metric(metric), level), level=level)


def _metric(metric: str) -> Metric:
    return auc_metric if metric == "auc" else tpr_metric(_blind_value(metric))


def margin_of(runs: Sequence[Scored], attack: str, baseline: str, metric: str, level: float = LEVEL) -> Estimate:
    """``attack - baseline`` on ``metric``: on one seed paired (AUC bootstrap) or unpaired (TPR,
    Clopper-Pearson each); on several the t interval of the per-seed differences."""
    if len(runs) > 1:
        a = per_seed(runs, attack, _metric(metric), level)
        b = [combined([r], baseline, metric, level) for r in runs]
        if not all(x.resolvable for x in a + b):
            return combine(a, level=level)
        return mean_interval([x.value - y.value for x, y in zip(a, b)], level=level, bounds=(-1.0, 1.0))
    r = runs[0]
    if baseline == BLIND:
        return combined(runs, attack, metric, level).shifted(_blind_value(metric))
    if metric == "auc":
        return auc_difference_interval(r.labels, _scores(r, attack), _scores(r, baseline), level=level)
    return unpaired_difference(combined(runs, attack, metric, level), combined(runs, baseline, metric, level))


def strongest_baseline(runs: Sequence[Scored], metric: str) -> str:
    """The baseline with the largest mean value on ``metric`` (the blind guess when none beats it)."""
    means = {BLIND: _blind_value(metric)}
    for key in runs[0].baselines:
        values = per_seed(runs, key, _metric(metric))
        if all(v.resolvable for v in values):
            means[key] = float(np.mean([v.value for v in values]))
    return max(means, key=means.get)


# ---------------------------------------------------------------------------- the judgement


@dataclass(frozen=True)
class Judgement:
    """The verdict on ROC AUC, what it compared (``margin`` = attack - baseline), the sample, each
    seed's AUC of the best attack, and a ``note`` naming any attack below a blind guess and, under
    ``paper``, the protocol artefact."""

    verdict: Verdict
    best_attack: str
    best_baseline: str
    attack: Estimate
    baseline: Estimate
    margin: Estimate
    sample: Sample
    per_seed: tuple[float, ...]
    note: str
    below_chance: tuple[str, ...] = ()


def judge(runs: list[Scored], protocol: str = "served") -> Judgement:
    """Best attack (mean ROC AUC over ``runs``, one per seed) against the strongest baseline."""
    keys = sorted(runs[0].attacks, key=lambda k: not is_output_statistic(k))  # on a tie, the simplest attack is named
    means = {key: float(np.mean([v.value for v in per_seed(runs, key, auc_metric)])) for key in keys}
    a, level = max(means, key=means.get), family_level(len(keys))
    b = strongest_baseline(runs, "auc")
    attack, baseline = combined(runs, a, "auc", level), combined(runs, b, "auc")
    margin, sample = margin_of(runs, a, b, "auc", level), sample_of(runs, len(keys))
    verdict = judge_attack(attack, baseline.value, margin, name_of(b), chance=0.5, sample=sample)
    below = tuple(k for k in keys if combined(runs, k, "auc", level).high < 0.5)
    notes, others = [], [k for k in below if k != a]  # the verdict's own attack below a blind guess is its verdict
    if others:
        notes.append(f"not the verdict's attack, read below a blind guess: {', '.join(name_of(k) for k in others)}, whose "
                     "assumptions do not fit this target (not evidence of safety)")  # fmt: skip
    if protocol == "paper":
        notes += _artefact(runs, a, attack)
    per = tuple(v.value for v in per_seed(runs, a, auc_metric))
    return Judgement(verdict, a, b, attack, baseline, margin, sample, per, "; ".join(notes), below)


def _artefact(runs: list[Scored], best: str, attack: Estimate) -> list[str]:
    """Under ``paper``: the protocol-artefact note when an output statistic matches the best
    attack (the paired difference is not above zero) and both are above a blind guess."""
    stats = [k for k in runs[0].attacks if is_output_statistic(k)]
    top = max(stats, key=lambda k: combined(runs, k, "auc").value)
    statistic = combined(runs, top, "auc")
    matches = top == best or margin_of(runs, best, top, "auc").low <= 0
    if matches and attack.low > 0.5 and statistic.low > 0.5:
        who = "a statistic of the lists is the best attack" if top == best else \
            f"the {name_of(top)} ({statistic.value:.3f}) does as well"
        return [f"{who}: under the paper protocol the signal is the protocol (non-members get the popular list), "
                "not memorisation"]  # fmt: skip
    return []


def secondary_rows(runs: list[Scored], j: Judgement, fprs: Sequence[float] = FPRS,
                   names: Callable[[str], str] = name_of) -> list[tuple[str, Estimate, float, str, Estimate, tuple[float, ...]]]:  # fmt: skip
    """TPR at each of ``fprs`` of the best attack against the strongest baseline at that FPR:
    (metric name, value, baseline value, baseline name (``names``), margin, per-seed values)."""
    out = []
    for fpr in fprs:
        key = fpr_key(fpr)
        b = strongest_baseline(runs, key)
        value, baseline = combined(runs, j.best_attack, key), combined(runs, b, key)
        seeds = tuple(v.value for v in per_seed(runs, j.best_attack, _metric(key)))
        name = f"{names(b)} at {fpr:.1%} FPR".replace(".0%", "%")
        out.append((f"TPR at {fpr:.1%} FPR".replace(".0%", "%"), value, baseline.value if baseline.resolvable else float("nan"),
                    name, margin_of(runs, j.best_attack, b, key), seeds))  # fmt: skip
    return out


# ---------------------------------------------------------------------------- protocol records


def protocol_records(data: Interactions, algorithms: Sequence[str], seeds: Sequence[int], options: LabOptions,
                     k: int = 100, n_factors: int = 100) -> list[dict[str, Any]]:  # fmt: skip
    """One record per (seed, algorithm, protocol, attack or baseline): ROC AUC with its bootstrap
    interval and TPR at 1% FPR with its Clopper-Pearson interval, Assumption I on ``data``."""
    records = []
    for seed in seeds:
        lab = MembershipLab({data.name: data}, options, seed=seed)
        for algorithm in algorithms:
            for protocol in PROTOCOLS:
                spec = AttackSpec((data.name, algorithm), (data.name, algorithm), k=k, n_factors=n_factors, protocol=protocol)
                s = score_all(lab, spec)
                for key, scores in {**s.attacks, **s.baselines}.items():
                    kind = "baseline" if key in s.baselines else "output statistic" if is_output_statistic(key) else "attack"
                    e = estimates(s.labels, scores, seed=seed)
                    records.append({"seed": seed, "algorithm": algorithm, "protocol": protocol, "kind": kind, "name": key,
                                    "n_members": int(s.labels.sum()), "n_nonmembers": int((s.labels == 0).sum()),
                                    **{m: v.to_dict() for m, v in e.items()}})  # fmt: skip
    return records


def summarise_records(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mean over seeds (t interval, sample sd) of ROC AUC and TPR at 1% FPR per algorithm, protocol and name."""
    keys = list(dict.fromkeys((r["algorithm"], r["protocol"], r["kind"], r["name"]) for r in records))
    out = []
    for algorithm, protocol, kind, name in keys:
        rows = [r for r in records if (r["algorithm"], r["protocol"], r["kind"], r["name"]) == (algorithm, protocol, kind, name)]
        aucs = [r["auc"]["value"] for r in rows]
        tprs = [r["tpr@1%fpr"]["value"] for r in rows if r["tpr@1%fpr"]["resolvable"]]
        auc = mean_interval(aucs, bounds=(0.0, 1.0))
        out.append({"algorithm": algorithm, "protocol": protocol, "kind": kind, "name": name, "seeds": len(rows),
                    "auc": auc.to_dict(), "auc_sd": mean_sd(aucs).sd,
                    "tpr@1%fpr": mean_interval(tprs, bounds=(0.0, 1.0)).to_dict() if tprs else None,
                    "n_nonmembers": rows[0]["n_nonmembers"], "n_members": rows[0].get("n_members")})  # fmt: skip
    return out
