"""Every membership attack beside the trivial statistics, with intervals and one verdict.

``score_all(lab, spec)`` gives, for the target users of one setting, the paper's shadow-trained
MLP, the calibrated attacks (LiRA online / offline, RMIA; Assumption I only) and the trivial
baselines (``attacks.membership.list_statistics``). ``estimates`` turns scores into ROC AUC
(stratified bootstrap) and TPR at 0.1% / 1% FPR (Clopper-Pearson, or "not resolvable with n =
..." below ``1 / n_non-members``). ``judge`` applies ``metrics.verdict.judge_attack`` twice: the
best attack against the best trivial baseline (paired AUC difference on the same targets) and
against a blind guess (0.5); when the attack leaks but does not beat a trivial statistic, the
verdict says the signal is the protocol, not memorisation. Over several seeds the margins are
per-seed AUC differences with a t interval (``mean_interval``). ``protocol_records`` and
``summarise_records`` run and aggregate the protocol comparison (``benchmarks/membership_protocols.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from recprivacy.attacks.membership import AttackSpec, LabOptions, MembershipLab
from recprivacy.attacks.membership.protocols import PROTOCOLS
from recprivacy.data.interactions import Interactions
from recprivacy.metrics.intervals import Estimate, auc_difference_interval, auc_interval, mean_interval, tpr_at_fpr_interval
from recprivacy.metrics.summary import mean_sd
from recprivacy.metrics.verdict import Verdict, judge_attack

ATTACK_NAMES = {"mlp": "paper MLP (shadow-trained)", "lira": "LiRA (online)", "lira_offline": "LiRA (offline)",
                "rmia": "RMIA"}  # fmt: skip
TRIVIAL_NAMES = {"popular_overlap": "trivial: -overlap with adversary's top-k popular",
                 "mean_popularity": "trivial: -mean item popularity", "feature_norm": "trivial: -norm of paper feature"}  # fmt: skip
FPRS = (0.001, 0.01)


@dataclass
class Scored:
    """Target labels and each attack's and trivial baseline's scores for one setting and seed."""

    labels: np.ndarray
    attacks: dict[str, np.ndarray]
    baselines: dict[str, np.ndarray]


def score_all(lab: MembershipLab, spec: AttackSpec, calibrated: bool = True) -> Scored:
    """MLP, calibrated attacks (when ``calibrated``) and trivial baselines on ``spec``'s targets."""
    outcome = lab.run(spec)
    attacks = {"mlp": outcome.scores}
    if calibrated:
        attacks.update(lab.calibrated_scores(spec))
    return Scored(outcome.labels, attacks, lab.trivial_scores(spec))


def estimates(labels: np.ndarray, scores: np.ndarray, seed: int = 0) -> dict[str, Estimate]:
    """ROC AUC and TPR at each of ``FPRS`` with their intervals."""
    out = {"auc": auc_interval(labels, scores, seed=seed)}
    out.update({f"tpr@{f:.1%}fpr".replace(".0%", "%"): tpr_at_fpr_interval(labels, scores, f) for f in FPRS})
    return out


def name_of(key: str) -> str:
    """The report name of an attack or trivial baseline key."""
    return ATTACK_NAMES.get(key) or TRIVIAL_NAMES.get(key, key)


@dataclass(frozen=True)
class Judgement:
    """The verdict, what it compared (``margin`` = attack - baseline on ROC AUC), and a ``note``
    naming the best attack and, when a trivial statistic does as well, saying so."""

    verdict: Verdict
    best_attack: str
    best_baseline: str
    attack: Estimate
    baseline: Estimate
    margin: Estimate
    note: str


def _auc(labels: np.ndarray, scores: np.ndarray) -> float:
    return auc_interval(labels, scores, n_boot=1).value


def judge(runs: list[Scored], seed: int = 0) -> Judgement:
    """Best attack (mean AUC over ``runs``, one per seed) against the best trivial baseline and 0.5."""
    mean_auc = {group: {key: float(np.mean([_auc(r.labels, getattr(r, group)[key]) for r in runs]))
                        for key in getattr(runs[0], group)} for group in ("attacks", "baselines")}  # fmt: skip
    a = max(mean_auc["attacks"], key=mean_auc["attacks"].get)
    b = max(mean_auc["baselines"], key=mean_auc["baselines"].get)
    if len(runs) == 1:
        r = runs[0]
        attack, baseline = auc_interval(r.labels, r.attacks[a], seed=seed), auc_interval(r.labels, r.baselines[b], seed=seed)
        margin = auc_difference_interval(r.labels, r.attacks[a], r.baselines[b], seed=seed)
    else:
        attack = mean_interval([_auc(r.labels, r.attacks[a]) for r in runs], bounds=(0.0, 1.0))
        baseline = mean_interval([_auc(r.labels, r.baselines[b]) for r in runs], bounds=(0.0, 1.0))
        margin = mean_interval([_auc(r.labels, r.attacks[a]) - _auc(r.labels, r.baselines[b]) for r in runs], bounds=(-1.0, 1.0))
    against_trivial = judge_attack(margin, name_of(b), attack=attack, chance=0.5)
    against_chance = judge_attack(attack.shifted(0.5), "a blind guess (0.5)", attack=attack, chance=0.5)
    note = f"best attack: {name_of(a)}"
    if against_chance.label.startswith("leaks") and against_trivial.label != "leaks":
        note += f"; against a blind guess it {against_chance}: a trivial statistic does as well, the signal is the protocol, not memorisation"
    return Judgement(against_trivial, a, b, attack, baseline, margin, note)


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
                for kind, group in (("attack", s.attacks), ("trivial", s.baselines)):
                    for key, scores in group.items():
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
                    "n_nonmembers": rows[0]["n_nonmembers"]})  # fmt: skip
    return out
