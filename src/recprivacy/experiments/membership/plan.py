"""Which attack settings each experiment of paper 001 needs.

``plan_experiment(name, options, datasets)`` returns a :class:`Plan`: the
:class:`~recprivacy.attacks.membership.AttackSpec` list, the recommenders whose HR@k is
reported, and the settings whose ROC curves and 2-D feature embeddings are drawn. The study
runs the union of all plans through one ``MembershipLab`` per seed, so experiments that share
recommenders (all of them) train each recommender once.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from recprivacy.experiments.membership.lab import AttackSpec
from recprivacy.experiments.membership.options import MembershipOptions

#: experiment -> the paper's table or figure it reproduces
EXPERIMENTS = {
    "hit_rate": "Table 2: HR@k of the shadow and target recommenders",
    "assumption1": "Figure 3: Assumption I (same dataset, same algorithm)",
    "assumption2": "Tables 3-5: Assumption II (same dataset, every shadow x target algorithm)",
    "assumption3": "Figure 6: Assumption III (every dataset x algorithm pair)",
    "kmeans": "Tables 6-7: the MLP attack against the K-Means baseline",
    "sweep_k": "Figure 8a: list length k",
    "sweep_l": "Figure 8b: item vector size l",
    "weighting": "Figure 8c: uniform vs rank-linear recommendation weights",
    "mimi": "Figure 9: k and l together on Item-CF (MIMI)",
    "shadow_size": "Section 3.4: shadow dataset size",
    "features": "Figure 10: feature generation methods",
    "defense": "Figures 12-13: Popularity Randomization",
}

#: (dataset, role, algorithm, defended) of a recommender whose HR@k is reported
HitRateKey = tuple[str, str, str, bool]


@dataclass
class Plan:
    """What one experiment needs from the lab."""

    specs: list[AttackSpec] = field(default_factory=list)
    hit_rates: list[HitRateKey] = field(default_factory=list)
    roc: list[AttackSpec] = field(default_factory=list)
    embed: list[AttackSpec] = field(default_factory=list)


def base_spec(o: MembershipOptions, dataset: str, algorithm: str) -> AttackSpec:
    """The Assumption I setting of ``(dataset, algorithm)`` with the configured defaults, under the
    paper's protocol (popular lists for non-members), which the study reproduces."""
    pair = (dataset, algorithm)
    return AttackSpec(pair, pair, k=o.k, n_factors=o.n_factors, weighting=o.weighting, feature=o.feature, attack=o.attack,
                      protocol="paper")


def plan_experiment(name: str, o: MembershipOptions, datasets: list[str]) -> Plan:
    """The :class:`Plan` of experiment ``name`` (a key of ``EXPERIMENTS``)."""
    diagonal = [base_spec(o, d, a) for d in datasets for a in o.algorithms]
    grid = [replace(base_spec(o, d, t), shadow=(d, s)) for d in datasets for s in o.algorithms for t in o.algorithms]
    if name == "hit_rate":
        return Plan(hit_rates=[(d, r, a, False) for d in datasets for r in ("shadow", "target") for a in o.algorithms])
    if name == "assumption1":
        served = [replace(s, protocol="served") for s in diagonal]
        return Plan(diagonal + served, roc=diagonal)
    if name == "assumption2":
        return Plan(grid)
    if name == "assumption3":
        pairs = [(d, a) for d in datasets for a in o.algorithms]
        return Plan([replace(base_spec(o, *t), shadow=s) for s in pairs for t in pairs])
    if name == "kmeans":
        return Plan(grid + [replace(s, attack="kmeans") for s in diagonal])
    if name == "sweep_k":
        return Plan([replace(s, k=k) for s in diagonal for k in o.ks])
    if name == "sweep_l":
        return Plan([replace(s, n_factors=n) for s in diagonal for n in o.ls])
    if name == "weighting":
        return Plan([replace(s, weighting=w) for s in diagonal for w in ("uniform", "rank")])
    if name == "mimi":
        mimi = [base_spec(o, d, o.mimi_algorithm) for d in datasets]
        cells = {(k, n) for v in o.mimi_values for k, n in [(v, n) for n in o.ls] + [(k, v) for k in o.ks]}
        return Plan([replace(s, k=k, n_factors=n) for s in mimi for k, n in sorted(cells)])
    if name == "shadow_size":
        sizes = [base_spec(o, d, o.shadow_size_algorithm) for d in datasets]
        return Plan([replace(s, shadow_fraction=f) for s in sizes for f in o.shadow_fractions])
    if name == "features":
        return Plan([replace(s, feature=m) for s in diagonal for m in o.feature_methods])
    if name == "defense":
        defended = [replace(s, defense=scope) for s in diagonal for scope in o.defense.scopes]
        hit_rates = [(d, "target", a, flag) for d in datasets for a in o.algorithms for flag in (False, True)]
        first = [s for s in diagonal if s.target[0] == datasets[0]]
        embed = first + [replace(s, defense=o.defense.scopes[0]) for s in first]
        return Plan(diagonal + defended, hit_rates, roc=diagonal + defended, embed=embed)
    raise ValueError(f"unknown experiment {name!r}")
