"""Running the settings of the ``membership`` study over seeds and collecting what they give.

One ``MembershipLab`` per seed runs the merged plan of every requested experiment; reports are
kept per seed (averaged when rendered), while ROC curves, 2-D embeddings of the feature
vectors and the partition summary come from the first seed.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.decomposition import PCA
from sklearn.manifold import TSNE

from recprivacy.attacks.membership import AttackSpec, LabOptions, MembershipLab
from recprivacy.data.interactions import Interactions
from recprivacy.defenses.popularity_randomization import PopularityRandomization
from recprivacy.experiments.membership.options import MembershipOptions
from recprivacy.experiments.membership.plan import HitRateKey, Plan
from recprivacy.experiments.results import Results
from recprivacy.metrics.summary import mean_sd

#: attack metrics averaged over seeds
METRICS = ("auc", "balanced_accuracy", "tpr@0.1%fpr", "tpr@1%fpr", "advantage", "precision", "recall", "accuracy")


@dataclass
class Collected:
    """Everything the seeds produced, for rendering."""

    reports: dict[AttackSpec, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    hit_rates: dict[HitRateKey, list[dict[str, float]]] = field(default_factory=lambda: defaultdict(list))
    roc: dict[AttackSpec, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    embeddings: dict[AttackSpec, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    groups: dict[str, dict[str, Any]] = field(default_factory=dict)
    seeds: list[int] = field(default_factory=list)

    def stat(self, spec: AttackSpec, metric: str = "auc") -> tuple[float, float]:
        """Mean and sample sd over seeds (``metrics.summary``) of one metric of one setting."""
        summary = mean_sd(r[metric] for r in self.reports[spec] if metric in r)
        return summary.mean, summary.sd

    def hit(self, key: HitRateKey, part: str = "members") -> float:
        return float(np.mean([h[part] for h in self.hit_rates[key]])) if key in self.hit_rates else float("nan")


def lab_options(o: MembershipOptions) -> LabOptions:
    return LabOptions(
        min_interactions=o.min_interactions, split_mode=o.split_mode, item_coverage=o.item_coverage,
        holdout=o.holdout, vector_mode=o.vector_mode, vector_params=dict(o.vector_params),
        vector_files=dict(o.vector_files), model_params={k: dict(v) for k, v in o.model_params.items()},
        attack_params={k: dict(v) for k, v in o.attack_params.items()},
    )  # fmt: skip


def randomizer(alpha: float, noise: str):
    """The defence as the lab's ``randomize(ranking, n_users, k, seed)``, drawing from ``noise``
    (``"secure"`` or ``"simulation"``, the config's ``noise``)."""
    return lambda ranking, n_users, k, seed: PopularityRandomization(alpha, seed, noise).lists(ranking, n_users, k)


def merge_plans(plans: list[Plan]) -> Plan:
    """One plan with every setting once, in first-seen order."""

    def unique(items: list) -> list:
        return list(dict.fromkeys(items))

    return Plan(unique([s for p in plans for s in p.specs]), unique([h for p in plans for h in p.hit_rates]),
                unique([s for p in plans for s in p.roc]), unique([s for p in plans for s in p.embed]))  # fmt: skip


def collect(
    datasets: dict[str, Interactions], options: MembershipOptions, plan: Plan, seeds: list[int], results: Results,
    noise: str = "secure",
) -> Collected:
    """Run ``plan`` once per seed; ROC curves and embeddings come from the first seed; the
    defence's lists draw from ``noise``."""
    out = Collected(seeds=list(seeds))
    for n, seed in enumerate(seeds):
        lab = MembershipLab(datasets, lab_options(options), seed=seed, randomize=randomizer(options.defense.alpha, noise))
        for outcome in lab.run_all(plan.specs):
            out.reports[outcome.spec].append(outcome.report)
            if n == 0 and outcome.spec in plan.roc:
                out.roc[outcome.spec] = (outcome.labels, outcome.scores)
        for dataset, role, algorithm, defended in plan.hit_rates:
            key = (dataset, role, algorithm, defended)
            out.hit_rates[key].append(lab.hit_rates(dataset, role, algorithm, options.k, defended))
        if n == 0:
            for spec in plan.embed:
                out.embeddings[spec] = embed(*lab.features(spec, "target"), options.embedding, seed)
            out.groups = {name: describe_partition(lab, name) for name in datasets}
        for stage, seconds in lab.timings.items():
            results.timings[f"lab:{stage}"] = results.timings.get(f"lab:{stage}", 0.0) + seconds
    return out


def embed(features: np.ndarray, labels: np.ndarray, method: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """2-D PCA or t-SNE embedding of the feature rows, with their labels."""
    if method == "tsne":
        points = TSNE(n_components=2, random_state=seed, perplexity=min(30.0, (len(features) - 1) / 3)).fit_transform(features)
    else:
        points = PCA(n_components=2, random_state=seed).fit_transform(features)
    return points, labels


def describe_partition(lab: MembershipLab, dataset: str) -> dict[str, Any]:
    """Group sizes and item coverage of one dataset's partition (first seed)."""
    part = lab.partition(dataset)
    sizes = {f"{role}_{kind}": len(getattr(part.group(role), kind))
             for role in ("shadow", "target") for kind in ("members", "nonmembers")}  # fmt: skip
    sizes["vector_users"] = int((part.vector.user_counts() > 0).sum())
    sizes["vector_interactions"] = len(part.vector)
    return {**sizes, **part.coverage, "implicit": lab.datasets[dataset].ratings is None}
