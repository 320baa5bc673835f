"""The measurements of one seed of the ``upcsdg`` study: releases, downstream utility, the
recovery attack and the membership attack, each appended as one row to ``SeedRun.rows``.

Each synthetic dataset is generated once per (variant, k, γ) and shared by the parts; each
downstream model is trained once per (model, variant, k, γ). Downstream models train on the
synthetic data with early stopping on the *original* validation split (the paper's protocol);
test ranking masks each user's synthetic training items and validation items (digest decision
18), and, beside it, the user's original history (``HistoryMasked``). Random is the exact
expectation of a uniformly random ranking of the same candidates
(``audit.random_ranking_expectation``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from recprivacy.attacks.membership import AttackSpec, LabOptions, MembershipLab, popular_lists, popularity_ranking, user_features
from recprivacy.attacks.membership.lists import personalised_lists
from recprivacy.attacks.recovery import PopularityGuess, ReplacementRecoveryAttack, recovery_metrics
from recprivacy.config import Config
from recprivacy.defenses.upcsdg import FrozenEmbeddings, SyntheticRelease, pretrain_bpr
from recprivacy.experiments.audit import random_ranking_expectation
from recprivacy.experiments.train import PreparedData
from recprivacy.experiments.upcsdg.options import CUTOFF, METRICS, VARIANTS, UPCSDGOptions
from recprivacy.experiments.upcsdg.release import fit_generator
from recprivacy.metrics.attack import binary_attack_report
from recprivacy.metrics.ranking import evaluate
from recprivacy.models import make_model
from recprivacy.models.base import Recommender


@dataclass
class SeedRun:
    """The data, frozen features and caches of one seed; ``rows`` collects measurements."""

    config: Config
    options: UPCSDGOptions
    data: PreparedData
    features: FrozenEmbeddings
    feature_model: Recommender
    seed: int
    rows: list[dict[str, Any]] = field(default_factory=list)
    releases: dict[tuple[str, float, float], SyntheticRelease] = field(default_factory=dict)
    models: dict[tuple[str, str, float, float], Recommender] = field(default_factory=dict)

    def release(self, k: float, gamma: float, variant: str = "UPC-SDG") -> SyntheticRelease:
        """The synthetic training data of one setting (generated once)."""
        key = (variant, k, gamma)
        if key not in self.releases:
            start = time.perf_counter()
            params = {**self.options.generator, **VARIANTS[variant]}
            release = fit_generator(self.data.train, self.features, k, gamma, params, self.seed, self.config.noise).generate()
            s = release.summary
            self.rows.append(self._row("release", variant, k, gamma, seconds=time.perf_counter() - start,
                                       epochs=s["method"]["epochs_trained"], mean_f_sim=s["mean_f_sim"],
                                       mean_cosine=s["mean_cosine"], dropped=s["dropped_interactions"],
                                       share_dropped=s["share_dropped"],
                                       share_heldout=heldout_share(release, self.data)))
            self.releases[key] = release
        return self.releases[key]

    def utility(self, name: str, variant: str = "original", k: float = math.nan, gamma: float = math.nan) -> Recommender | None:
        """Fit downstream model ``name`` on the original or a synthetic training set, record
        its test metrics, and return it (None for Random)."""
        train = self.data.train if variant == "original" else self.release(k, gamma, variant).data
        if name == "random":
            masked = train.to_csr() + self.data.valid.to_csr()
            blind = random_ranking_expectation(self.data.test.to_csr(), masked, CUTOFF)
            self.rows.append(self._row("utility", variant, k, gamma, model=name, **blind))
            return None
        key = (name, variant, k, gamma)
        if key not in self.models:
            model = self.models[key] = self._fit_downstream(name, train, variant)
            found = evaluate(model, self.data.test, ks=(CUTOFF,), exclude=self.data.valid)
            real = evaluate(HistoryMasked(model, self.data.train.to_csr()), self.data.test, ks=(CUTOFF,), exclude=self.data.valid)
            self.rows.append(self._row("utility", variant, k, gamma, model=name,
                                       **{m: float(found[f"{m}@{CUTOFF}"]) for m in METRICS},
                                       **{f"{m}_history": float(real[f"{m}@{CUTOFF}"]) for m in METRICS}))
        return self.models[key]

    def _fit_downstream(self, name: str, train: Any, variant: str) -> Recommender:
        params = self.options.downstream.get(name, {})
        same_as_features = name == self.config.model.name and params == self.config.model.params
        if variant == "original" and same_as_features:
            return self.feature_model
        return make_model(name, **{"seed": self.seed, **params}).fit(train, self.data.valid)

    def recovery(self, k: float, gamma: float) -> None:
        """Replaced-item recovery against one grid cell (every attacker of ``ATTACKS``)."""
        release = self.release(k, gamma)
        truth = release.pairs_matrix("original_item")
        learned = self.utility("bpr", "UPC-SDG", k, gamma)
        weight = self.options.attack_weight
        attackers = {
            "blind": ReplacementRecoveryAttack(self.features.items, weight=weight).fit(release.data),
            "informed": ReplacementRecoveryAttack(self.features.items, informed=True, weight=weight).fit(
                release.data, release.pairs_matrix("replacement_item")),
            "release": ReplacementRecoveryAttack(learned.item_factors_, weight=weight).fit(release.data),
            "popularity": PopularityGuess().fit(release.data),
        }
        ks = (self.options.attack_k,)
        for name, attacker in attackers.items():
            found = recovery_metrics(attacker, truth, ks=ks)
            self.rows.append(self._row("recovery", "UPC-SDG", k, gamma, attack=name,
                                       recall=float(found[f"recall@{ks[0]}"]), ndcg=float(found[f"ndcg@{ks[0]}"])))

    def membership(self) -> None:
        """User-level membership inference (paper 001, Assumption I) against a recommender
        trained on the real members' data, then on UPC-SDG releases of it for every grid cell."""
        o, full = self.options, self.data.full
        algorithm, params = o.membership_algorithm, o.downstream.get(o.membership_algorithm, {})
        lab = MembershipLab({full.name: full}, LabOptions(min_interactions=o.membership_min_interactions, holdout="none",
                                                          model_params={algorithm: params}), seed=self.seed)
        spec = AttackSpec((full.name, algorithm), (full.name, algorithm), k=o.membership_list_k, protocol="paper")
        self.rows.append(self._row("membership", "original", math.nan, math.nan, **_attack_summary(lab.run(spec).report)))
        group = lab.partition(full.name).target
        attack, vectors = lab.attack_model(spec), lab.vectors(full.name, spec.n_factors)
        features = pretrain_bpr(group.train, None, self.seed, **self.config.model.params)
        for k in o.grid_k:
            for gamma in o.grid_gamma:
                release = fit_generator(group.train, features, k, gamma, o.generator, self.seed, self.config.noise).generate()
                target = make_model(algorithm, **{"seed": self.seed, **params}).fit(release.data)
                lists = np.concatenate([personalised_lists(target, group.members, spec.k),
                                        popular_lists(popularity_ranking(release.data), len(group.nonmembers), spec.k)])
                x = user_features(spec.feature, group.data, group.users, lists, vectors, spec.weighting)
                report = binary_attack_report(group.labels, attack.score(x), threshold=attack.threshold_)
                self.rows.append(self._row("membership", "UPC-SDG", k, gamma, **_attack_summary(report)))

    def _row(self, kind: str, variant: str, k: float, gamma: float, **values: Any) -> dict[str, Any]:
        return {"kind": kind, "seed": self.seed, "variant": variant, "k": k, "gamma": gamma, **values}


def _attack_summary(report: dict[str, Any]) -> dict[str, float]:
    """ROC AUC, TPR at 1% FPR and advantage of a membership attack report."""
    return {"auc": float(report["auc"]), "tpr_at_1pct_fpr": float(report["tpr@1%fpr"]), "advantage": float(report["advantage"])}


class HistoryMasked:
    """A fitted model seen through another training matrix: ranking then masks the user's
    *original* history instead of the synthetic items the model was trained on (the view of a
    service that knows what its users really did)."""

    def __init__(self, model: Recommender, history: Any) -> None:
        self.model = model
        self.train_csr_ = history

    def score(self, users: Any) -> Any:
        return self.model.score(users)


def heldout_share(release: SyntheticRelease, data: PreparedData) -> float:
    """Share of replacements that are real interactions the generator never saw (the user's
    validation or test items): generated "fake" items that are in fact true."""
    added = release.pairs_matrix("replacement_item")
    heldout = (data.valid.to_csr() + data.test.to_csr()) != 0
    return float(added.multiply(heldout).sum() / max(added.nnz, 1))
