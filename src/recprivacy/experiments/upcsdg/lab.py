"""What one seed of the ``upcsdg`` study computes, each thing once: the frozen features, the
synthetic releases, the downstream models and the membership attack's shadow side.

``SeedLab`` builds every piece on first need and keeps it, so the cells of a seed (``cells``)
share them whichever of them run: a resumed run that measures only some cells computes the same
releases and models as an uninterrupted one, because every piece is seeded from the seed alone
(each model and the generator seed their own random state when they fit).

Downstream models train on the synthetic data with early stopping on the *original* validation
split (the paper's protocol); test ranking masks each user's synthetic training items and
validation items (what a downstream consumer of the release knows), and, beside it, the user's original history
(``HistoryMasked``). Random is the exact expectation of a uniformly random ranking of the same
candidates (``audit.random_ranking_expectation``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from recprivacy.attacks.membership import popular_lists, popularity_ranking, user_features

from recprivacy.experiments.membership.lab import AttackSpec, LabOptions, MembershipLab
from recprivacy.attacks.membership.lists import personalised_lists
from recprivacy.attacks.recovery import PopularityGuess, ReplacementRecoveryAttack, recovery_metrics
from recprivacy.config import Config
from recprivacy.defenses.upcsdg import FrozenEmbeddings, SyntheticRelease, pretrain_bpr
from recprivacy.experiments.audit import random_ranking_expectation
from recprivacy.experiments.results import Results
from recprivacy.experiments.train import PreparedData, fit_model
from recprivacy.experiments.upcsdg.options import CUTOFF, METRICS, VARIANTS, UPCSDGOptions
from recprivacy.experiments.upcsdg.release import fit_generator
from recprivacy.metrics.attack import binary_attack_report
from recprivacy.metrics.ranking import evaluate
from recprivacy.models import make_model, resolved_params
from recprivacy.models.base import Recommender

ReleaseKey = tuple[str, float, float]


@dataclass
class SeedLab:
    """The caches of one seed (module docstring); ``log`` collects the feature fit's seconds."""

    config: Config
    options: UPCSDGOptions
    data: PreparedData
    log: Results
    releases: dict[ReleaseKey, tuple[SyntheticRelease, float]] = field(default_factory=dict)
    models: dict[tuple[str, str, float, float], Recommender] = field(default_factory=dict)

    @property
    def seed(self) -> int:
        return self.config.seed

    @cached_property
    def feature_model(self) -> Recommender:
        """The configured model fitted on the training split (``train.fit_model``)."""
        return fit_model(self.config, self.data, self.log)

    @cached_property
    def features(self) -> FrozenEmbeddings:
        return FrozenEmbeddings.from_model(self.feature_model)

    def release(self, variant: str, k: float, gamma: float) -> tuple[SyntheticRelease, float]:
        """The synthetic training data of one setting and the seconds generating it took."""
        key = (variant, k, gamma)
        if key not in self.releases:
            start = time.perf_counter()
            params = {**self.options.generator, **VARIANTS[variant]}
            release = fit_generator(self.data.train, self.features, k, gamma, params, self.seed, self.config.noise).generate()
            self.releases[key] = release, time.perf_counter() - start
        return self.releases[key]

    def release_values(self, variant: str, k: float, gamma: float) -> dict[str, float]:
        """Generation seconds, epochs, similarity of replacements, drops and held-out share."""
        release, seconds = self.release(variant, k, gamma)
        s = release.summary
        return {"seconds": seconds, "epochs": float(s["method"]["epochs_trained"]), "mean_f_sim": float(s["mean_f_sim"]),
                "mean_cosine": float(s["mean_cosine"]), "dropped": float(s["dropped_interactions"]),
                "share_dropped": float(s["share_dropped"]), "share_heldout": heldout_share(release, self.data)}  # fmt: skip

    def training(self, variant: str, k: float, gamma: float) -> Any:
        """The original training split, or the release of one setting."""
        return self.data.train if variant == "original" else self.release(variant, k, gamma)[0].data

    def model(self, name: str, variant: str, k: float, gamma: float) -> Recommender:
        """Downstream model ``name`` fitted on the original or a synthetic training set (once);
        on the original data the feature model itself when it is the same model."""
        key = (name, variant, k, gamma)
        if key not in self.models:
            params = self.options.downstream.get(name, {})
            same = name == self.config.model.name and resolved_params(name, params) == resolved_params(
                name, self.config.model.params)
            if variant == "original" and same:
                self.models[key] = self.feature_model
            else:
                fresh = make_model(name, **{"seed": self.seed, **params})
                self.models[key] = fresh.fit(self.training(variant, k, gamma), self.data.valid)
        return self.models[key]

    def utility_values(self, name: str, variant: str, k: float, gamma: float) -> dict[str, float]:
        """Test ranking metrics at ``CUTOFF`` of one downstream model, synthetic items masked and
        (``*_history``) original history masked; Random's exact expectation."""
        data = self.data
        if name == "random":
            masked = self.training(variant, k, gamma).to_csr() + data.valid.to_csr()
            return random_ranking_expectation(data.test.to_csr(), masked, CUTOFF)
        model = self.model(name, variant, k, gamma)
        found = evaluate(model, data.test, ks=(CUTOFF,), exclude=data.valid)
        real = evaluate(HistoryMasked(model, data.train.to_csr()), data.test, ks=(CUTOFF,), exclude=data.valid)
        return {**{m: float(found[f"{m}@{CUTOFF}"]) for m in METRICS}, **{f"{m}_history": float(real[f"{m}@{CUTOFF}"]) for m in METRICS}}

    def recovery_values(self, k: float, gamma: float, attack: str) -> dict[str, float]:
        """Replaced-item recovery by one attacker of ``options.ATTACKS`` against one grid cell."""
        release, weight, at = self.release("UPC-SDG", k, gamma)[0], self.options.attack_weight, self.options.attack_k
        if attack == "blind":
            attacker = ReplacementRecoveryAttack(self.features.items, weight=weight).fit(release.data)
        elif attack == "informed":
            attacker = ReplacementRecoveryAttack(self.features.items, informed=True, weight=weight).fit(
                release.data, release.pairs_matrix("replacement_item"))
        elif attack == "release":
            learned = self.model("bpr", "UPC-SDG", k, gamma)
            attacker = ReplacementRecoveryAttack(learned.item_factors_, weight=weight).fit(release.data)
        else:
            attacker = PopularityGuess().fit(release.data)
        found = recovery_metrics(attacker, release.pairs_matrix("original_item"), ks=(at,))
        return {"recall": float(found[f"recall@{at}"]), "ndcg": float(found[f"ndcg@{at}"])}

    @cached_property
    def membership(self) -> MembershipTarget:
        return MembershipTarget(self)

    def membership_values(self, variant: str, k: float, gamma: float) -> dict[str, float]:
        """The membership attack (paper 001, Assumption I) against the target trained on the
        members' real data (``original``) or on a UPC-SDG release of it."""
        target = self.membership
        return _attack_summary(target.original() if variant == "original" else target.released(k, gamma))


class MembershipTarget:
    """The membership attack's side of a seed: a ``MembershipLab`` on the whole dataset, its
    target group, the attack model trained once on real shadow data, and BPR-MF features of the
    members' data for the releases."""

    def __init__(self, lab: SeedLab) -> None:
        o, full = lab.options, lab.data.full
        self.algorithm, self.params = o.membership_algorithm, o.downstream.get(o.membership_algorithm, {})
        self.seed_lab, self.name = lab, full.name
        self.lab = MembershipLab({full.name: full}, LabOptions(min_interactions=o.membership_min_interactions, holdout="none",
                                                               model_params={self.algorithm: self.params}), seed=lab.seed)  # fmt: skip
        self.spec = AttackSpec((full.name, self.algorithm), (full.name, self.algorithm), k=o.membership_list_k, protocol="paper")

    def original(self) -> dict[str, Any]:
        return self.lab.run(self.spec).report

    @cached_property
    def group(self) -> Any:
        return self.lab.partition(self.name).target

    @cached_property
    def features(self) -> FrozenEmbeddings:
        return pretrain_bpr(self.group.train, None, self.seed_lab.seed, **self.seed_lab.config.model.params)

    def released(self, k: float, gamma: float) -> dict[str, Any]:
        """The attack report against the target fitted on a release of the members' data; the
        non-members receive the target's popular list."""
        config, spec, group = self.seed_lab.config, self.spec, self.group
        attack, vectors = self.lab.attack_model(spec), self.lab.vectors(self.name, spec.n_factors)
        options = self.seed_lab.options
        release = fit_generator(group.train, self.features, k, gamma, options.generator, config.seed, config.noise).generate()
        target = make_model(self.algorithm, **{"seed": config.seed, **self.params}).fit(release.data)
        lists = np.concatenate([personalised_lists(target, group.members, spec.k),
                                popular_lists(popularity_ranking(release.data), len(group.nonmembers), spec.k)])  # fmt: skip
        x = user_features(spec.feature, group.data, group.users, lists, vectors, spec.weighting)
        return binary_attack_report(group.labels, attack.score(x), threshold=attack.threshold_)


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

