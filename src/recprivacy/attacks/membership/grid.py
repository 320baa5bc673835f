"""The grid runner: every knowledge setting of paper 001 from recommenders trained once.

An :class:`AttackSpec` names one attack: the shadow (dataset, algorithm), the target
(dataset, algorithm), the list length ``k``, the item-vector size ``l``, the recommendation
weighting, the feature method, the attack model, where the defence runs and the share of the
shadow data kept. Assumption I is ``shadow == target``; Assumption II varies the shadow
algorithm on the same dataset; Assumption III varies both (§1.5 of the digest).

A :class:`MembershipLab` holds one seed's worth of work and caches every stage by the
arguments that determine it, so a grid of specs fits each recommender once (per dataset,
role, algorithm and shadow fraction), computes each list, feature matrix and item-vector
table once, trains one attack model per distinct shadow side and scores it on every target:

    partition -> item vectors -> recommenders -> lists -> features -> attack fit -> attack score

``timings`` records the seconds spent in each stage. Shadow features use the shadow dataset's
item vectors and target features the target dataset's: two independent item spaces in the
cross-dataset settings, as in the paper (decision 21).

The defence enters as ``randomize(ranking, n_users, k, seed) -> lists``, a function that
replaces the non-members' popular lists (the experiments layer passes
``defenses.PopularityRandomization``); ``AttackSpec.defense`` says whether it protects the
target only or both target and shadow (the adaptive adversary of decision 20).
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from recprivacy.attacks.membership.attack_models import make_attack
from recprivacy.attacks.membership.features import user_features
from recprivacy.attacks.membership.item_vectors import fit_item_vectors, load_item_vectors
from recprivacy.attacks.membership.lists import (
    check_list_length,
    hit_rate,
    personalised_lists,
    popular_lists,
    popularity_ranking,
)
from recprivacy.attacks.membership.partition import Group, Partition, partition_dataset
from recprivacy.data.interactions import Interactions
from recprivacy.errors import ConfigError
from recprivacy.metrics.attack import binary_attack_report
from recprivacy.models import make_model
from recprivacy.models.base import Recommender
from recprivacy.progress import stage as announce

DEFENSE_SCOPES = ("none", "target", "both")
#: letters of the paper's setting codes (Table 1); the S3-Rec sets stand in for ADM and lf-2k
DATASET_LETTERS = {"ml-1m": "M", "ml-100k": "K", "s3rec-beauty": "A", "s3rec-lastfm": "L", "synthetic": "S"}
ALGORITHM_LETTERS = {"itemcf": "I", "lfm": "L", "neumf": "N", "ncf": "N"}

Randomize = Callable[[np.ndarray, int, int, int], np.ndarray]


def letter(name: str, table: Mapping[str, str]) -> str:
    """One-letter code of a dataset or algorithm (first character when not in ``table``)."""
    return table.get(name, name[:1].upper())


@dataclass(frozen=True)
class AttackSpec:
    """One attack setting (see module docstring); datasets and algorithms by name."""

    shadow: tuple[str, str]
    target: tuple[str, str]
    k: int = 100
    n_factors: int = 100
    weighting: str = "rank"
    feature: str = "origin"
    attack: str = "mlp"
    defense: str = "none"
    shadow_fraction: float = 1.0

    def __post_init__(self) -> None:
        if self.defense not in DEFENSE_SCOPES:
            raise ConfigError(f"defense: expected one of {list(DEFENSE_SCOPES)}, got {self.defense!r}")

    @property
    def code(self) -> str:
        """The paper's four-letter code: shadow dataset, shadow algorithm, target dataset, target
        algorithm (e.g. ``MIMN``)."""
        (sd, sa), (td, ta) = self.shadow, self.target
        return "".join(
            [letter(sd, DATASET_LETTERS), letter(sa, ALGORITHM_LETTERS), letter(td, DATASET_LETTERS), letter(ta, ALGORITHM_LETTERS)]
        )

    def defended(self, role: str) -> bool:
        """Whether the defence changes the non-member lists of ``role``."""
        return self.defense == "both" or (self.defense == "target" and role == "target")


@dataclass
class LabOptions:
    """How data are prepared and models trained (defaults from the digest).

    ``model_params[algorithm]`` go to ``models.make_model``; ``attack_params[attack]`` to the
    attack model (``"mlp"``, ``"kmeans"`` or a scikit-learn class name); ``vector_params`` to ``LFM`` when learning item vectors; ``vector_files[dataset]``
    replaces the learned vectors by a file (``item_vectors.load_item_vectors``).
    """

    min_interactions: int = 20
    split_mode: str = "user"
    item_coverage: str = "restrict"
    holdout: str = "random"
    vector_mode: str = "rating"
    vector_params: dict[str, Any] = field(default_factory=dict)
    vector_files: dict[str, str | Path] = field(default_factory=dict)
    model_params: dict[str, dict[str, Any]] = field(default_factory=dict)
    attack_params: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass
class AttackOutcome:
    """The result of one spec: the attack report, and the target users' scores and labels."""

    spec: AttackSpec
    report: dict[str, Any]
    scores: np.ndarray
    labels: np.ndarray


class MembershipLab:
    """One seed of the membership study with every stage cached (module docstring).

    Parameters
    ----------
    datasets:
        Loaded datasets by name.
    options:
        :class:`LabOptions`.
    seed:
        Seeds the partition, recommenders, defence draws and attack models.
    randomize:
        The defence applied to non-members' lists (needed only by specs with a defence).
    partitions:
        Ready partitions by dataset name, used instead of ``partition_dataset`` (the audit
        builds its own around a target trained elsewhere).
    models:
        Fitted recommenders by ``(dataset, role, algorithm)``, used instead of training one
        on the group's members (the audit's target).
    """

    def __init__(
        self,
        datasets: Mapping[str, Interactions],
        options: LabOptions | None = None,
        seed: int = 0,
        randomize: Randomize | None = None,
        partitions: Mapping[str, Partition] | None = None,
        models: Mapping[tuple[str, str, str], Recommender] | None = None,
    ) -> None:
        self.datasets = dict(datasets)
        self.options = options or LabOptions()
        self.seed = seed
        self.randomize = randomize
        self.timings: dict[str, float] = {}
        self._cache: dict[tuple, Any] = {("partition", name): p for name, p in (partitions or {}).items()}
        self._cache.update({("model", *key, 1.0): model for key, model in (models or {}).items()})
        self.k_max = 0

    # ------------------------------------------------------------------ plumbing
    @contextmanager
    def _timed(self, stage: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.timings[stage] = self.timings.get(stage, 0.0) + time.perf_counter() - start

    def _cached(self, key: tuple, stage: str, make: Callable[[], Any]) -> Any:
        if key not in self._cache:
            announce(f"membership {stage}: {' '.join(str(part) for part in key[1:])}")
            with self._timed(stage):
                self._cache[key] = make()
        return self._cache[key]

    def _dataset(self, name: str) -> Interactions:
        if name not in self.datasets:
            raise ConfigError(f"dataset {name!r} is not loaded; loaded: {', '.join(self.datasets)}")
        return self.datasets[name]

    def _sub_seed(self, *parts: Any) -> int:
        """A seed for one random choice, derived from the lab seed and a label."""
        return int(np.random.SeedSequence([self.seed, zlib.crc32(repr(parts).encode())]).generate_state(1)[0])

    # ------------------------------------------------------------------ stages
    def partition(self, dataset: str) -> Partition:
        """Shadow / target / vector parts of ``dataset`` (seeded)."""
        o = self.options
        return self._cached(("partition", dataset), "partition", lambda: partition_dataset(
            self._dataset(dataset), o.min_interactions, o.split_mode, o.item_coverage, o.holdout,
            self._sub_seed("partition", dataset)))  # fmt: skip

    def vectors(self, dataset: str, n_factors: int) -> np.ndarray:
        """``[n_items, l]`` item vectors of ``dataset`` (learned on its vector part, or read)."""
        part = self.partition(dataset)
        path = self.options.vector_files.get(dataset)
        if path is not None:
            return self._cached(("vectors", dataset, "file"), "item_vectors",
                                lambda: load_item_vectors(path, part.data.item_ids))  # fmt: skip
        return self._cached(("vectors", dataset, n_factors), "item_vectors", lambda: fit_item_vectors(
            part.vector, n_factors, self.options.vector_mode, self._sub_seed("vectors", dataset),
            **self.options.vector_params))  # fmt: skip

    def group(self, dataset: str, role: str, fraction: float = 1.0) -> Group:
        """The shadow or target group, sub-sampled to ``fraction`` of its users when < 1."""
        base = self.partition(dataset).group(role)
        if fraction == 1.0:
            return base
        return self._cached(("group", dataset, role, fraction), "partition",
                            lambda: base.subsample(fraction, self._sub_seed("subsample", dataset, role, fraction)))  # fmt: skip

    def recommender(self, dataset: str, role: str, algorithm: str, fraction: float = 1.0) -> Recommender:
        """The recommender of ``role`` trained on its members' training interactions."""
        group = self.group(dataset, role, fraction)
        params = {"seed": self._sub_seed("model", dataset, role, algorithm, fraction),
                  **self.options.model_params.get(algorithm, {})}  # fmt: skip
        return self._cached(("model", dataset, role, algorithm, fraction), f"fit:{algorithm}",
                            lambda: make_model(algorithm, **params).fit(group.train))  # fmt: skip

    def member_lists(self, dataset: str, role: str, algorithm: str, k: int, fraction: float = 1.0) -> np.ndarray:
        """``[n_members, k]`` personalised lists (computed once at the longest k, then sliced)."""
        group = self.group(dataset, role, fraction)
        k_max = max(k, self.k_max)
        check_list_length(k_max, group.train)
        key = ("member_lists", dataset, role, algorithm, fraction)
        if key in self._cache and self._cache[key].shape[1] < k:
            del self._cache[key]
        model = self.recommender(dataset, role, algorithm, fraction)
        lists = self._cached(key, "lists", lambda: personalised_lists(model, group.members, k_max))
        return lists[:, :k]

    def nonmember_lists(self, dataset: str, role: str, k: int, defended: bool, fraction: float = 1.0) -> np.ndarray:
        """``[n_nonmembers, k]``: the members' popular list, or the defence's random lists."""
        group = self.group(dataset, role, fraction)
        check_list_length(k, group.train)

        def make() -> np.ndarray:
            ranking = popularity_ranking(group.train)
            if not defended:
                return popular_lists(ranking, len(group.nonmembers), k)
            if self.randomize is None:
                raise ConfigError("a spec asks for the defence, but the lab was built without randomize")
            return self.randomize(ranking, len(group.nonmembers), k, self._sub_seed("defense", dataset, role, k, fraction))

        return self._cached(("nonmember_lists", dataset, role, k, defended, fraction), "lists", make)

    def lists(self, dataset: str, role: str, algorithm: str, k: int, defended: bool, fraction: float = 1.0) -> np.ndarray:
        """Lists of members then non-members (the order of ``Group.users``)."""
        return np.concatenate([self.member_lists(dataset, role, algorithm, k, fraction),
                               self.nonmember_lists(dataset, role, k, defended, fraction)])  # fmt: skip

    def features(self, spec: AttackSpec, role: str) -> tuple[np.ndarray, np.ndarray]:
        """Feature matrix and labels (1 = member) of the shadow or target users of ``spec``."""
        dataset, algorithm = spec.shadow if role == "shadow" else spec.target
        fraction = spec.shadow_fraction if role == "shadow" else 1.0
        defended = spec.defended(role)
        group = self.group(dataset, role, fraction)
        key = ("features", dataset, role, algorithm, fraction, spec.k, spec.n_factors, spec.weighting, spec.feature, defended)
        if key not in self._cache:
            lists = self.lists(dataset, role, algorithm, spec.k, defended, fraction)
            vectors = self.vectors(dataset, spec.n_factors)
            with self._timed("features"):
                self._cache[key] = user_features(spec.feature, group.data, group.users, lists, vectors, spec.weighting)
        return self._cache[key], group.labels

    def hit_rates(self, dataset: str, role: str, algorithm: str, k: int = 100, defended: bool = False) -> dict[str, float]:
        """HR@k of members, non-members and all users of a group (needs a hold-out)."""
        group = self.group(dataset, role)
        if group.heldout is None:
            raise ConfigError("hit rates need held-out interactions; set holdout to 'random' or 'latest'")
        members = hit_rate(self.member_lists(dataset, role, algorithm, k), group.members, group.heldout)
        others = hit_rate(self.nonmember_lists(dataset, role, k, defended), group.nonmembers, group.heldout)
        n_m, n_o = len(group.members), len(group.nonmembers)
        return {"members": members, "nonmembers": others, "all": (members * n_m + others * n_o) / (n_m + n_o)}

    # ------------------------------------------------------------------ attacks
    def attack_model(self, spec: AttackSpec) -> Any:
        """The attack model trained on the shadow side of ``spec`` (fitted on the target
        features for the unsupervised K-Means baseline)."""
        if spec.attack == "kmeans":
            x, _ = self.features(spec, "target")
            key = ("attack", "kmeans", spec.target, spec.k, spec.n_factors, spec.weighting, spec.feature, spec.defended("target"))
            params = self.options.attack_params.get("kmeans", {})
            return self._cached(key, "attack_fit", lambda: make_attack("kmeans", self._sub_seed(*key), **params).fit(x))
        x, y = self.features(spec, "shadow")
        key = ("attack", spec.attack, spec.shadow, spec.k, spec.n_factors, spec.weighting, spec.feature,
               spec.defended("shadow"), spec.shadow_fraction)  # fmt: skip
        params = self.options.attack_params.get(spec.attack, {})
        return self._cached(key, "attack_fit", lambda: make_attack(spec.attack, self._sub_seed("attack", *key), **params).fit(x, y))

    def run(self, spec: AttackSpec) -> AttackOutcome:
        """Train (or reuse) the attack of ``spec`` and evaluate it on the target users."""
        model = self.attack_model(spec)
        x, y = self.features(spec, "target")
        with self._timed("attack_score"):
            scores = model.score(x)
            report = binary_attack_report(y, scores, threshold=model.threshold_)
        if spec.attack == "kmeans":
            report["auc_aligned"] = max(report["auc"], 1.0 - report["auc"])
        report["attack_restarts"] = getattr(model, "restarts_", 0)
        return AttackOutcome(spec, report, scores, y)

    def run_all(self, specs: list[AttackSpec]) -> list[AttackOutcome]:
        """Run every spec, computing each member list once at the longest ``k`` asked for."""
        self.k_max = max([self.k_max, *(s.k for s in specs)])
        return [self.run(spec) for spec in specs]
