"""The membership lab: every knowledge setting of paper 001 from recommenders trained once (the
study runner of the membership study; the attacks it composes live in ``attacks.membership``).

An :class:`AttackSpec` names one attack: the shadow (dataset, algorithm), the target
(dataset, algorithm), the list length ``k``, the item-vector size ``l``, the recommendation
weighting, the feature method, the attack model, where the defence runs and the share of the
shadow data kept. Assumption I is ``shadow == target``; Assumption II varies the shadow
algorithm on the same dataset; Assumption III varies both (paper 001 §2.2, the threat model).

A :class:`MembershipLab` holds one seed's worth of work and caches every stage by the
arguments that determine it, so a grid of specs fits each recommender once (per dataset,
role, algorithm and shadow fraction), computes each list, feature matrix and item-vector
table once, trains one attack model per distinct shadow side and scores it on every target:

    partition -> item vectors -> recommenders -> lists -> features -> attack fit -> attack score

``timings`` records the seconds spent in each stage (``recprivacy.timing.timed``). Shadow
features use the shadow dataset's item vectors and target features the target dataset's: two
independent item spaces in the cross-dataset settings, as in the paper and its code (no alignment).

``AttackSpec.protocol`` says what non-members are shown (:mod:`.protocols`): ``served`` (the
default; the recommender serves them from their history as new users) or ``paper`` (the
members' popular list). Shadow and target follow the same protocol: the adversary knows how
the system treats new users.

The defence enters as ``randomize(ranking, n_users, k, seed) -> lists``, a function that
replaces the non-members' popular lists (``paper`` protocol only) (the experiments layer passes
``defenses.PopularityRandomization``); ``AttackSpec.defense`` says whether it protects the
target only or both target and shadow (an adaptive adversary, who knows the defence).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from recprivacy.attacks.membership.attack_models import make_attack
from recprivacy.attacks.membership.calibrated import direction, lira_offline_scores, lira_scores, rmia_scores
from recprivacy.attacks.membership.features import origin_features, user_features
from recprivacy.attacks.membership.item_vectors import fit_item_vectors, load_item_vectors
from recprivacy.attacks.membership.lists import (
    check_list_length,
    hit_rate,
    personalised_lists,
    popular_lists,
    popularity_ranking,
)
from recprivacy.attacks.membership.partition import Group, Partition, partition_dataset
from recprivacy.attacks.membership.list_statistics import (
    HISTORY,
    TRIVIAL,
    feature_norm,
    history_length,
    history_popularity,
    mean_popularity,
    orientation,
    popular_overlap,
)
from recprivacy.attacks.membership.protocols import PROTOCOLS, check_protocol, served_histories, served_lists
from recprivacy.attacks.membership.references import FitFn, ReferenceLists, reference_lists, union
from recprivacy.data.interactions import Interactions
from recprivacy.errors import ConfigError
from recprivacy.experiments.kit.executor import Executor
from recprivacy.experiments.membership.reference_cells import on_executor
from recprivacy.metrics.attack import binary_attack_report
from recprivacy.models import make_model
from recprivacy.models.base import Recommender
from recprivacy.progress import detail
from recprivacy.progress import stage as announce
from recprivacy.timing import timed

DEFENSE_SCOPES = ("none", "target", "both")
#: letters of the paper's setting codes (Table 1); the S3-Rec sets stand in for ADM and lf-2k
DATASET_LETTERS = {"ml-1m": "M", "ml-100k": "K", "s3rec-beauty": "A", "s3rec-lastfm": "L", "synthetic": "S"}
ALGORITHM_LETTERS = {"itemcf": "I", "lfm": "L", "neumf": "N", "ncf": "N"}

Randomize = Callable[[np.ndarray, int, int, int], np.ndarray]


def sub_seed(seed: int, *parts: Any) -> int:
    """A seed for one random choice, derived from the lab seed and a label."""
    return int(np.random.SeedSequence([seed, zlib.crc32(repr(parts).encode())]).generate_state(1)[0])


@dataclass(frozen=True)
class BuiltinReference:
    """``fit(train, j)`` of reference ``j`` of a built-in ``algorithm`` (seeded by the lab's seed, the
    dataset and ``j``): a small picklable object rather than a closure over the lab, so that an
    executor on Ray sends each reference task this and not the lab's whole cache (the target,
    every list and feature matrix)."""

    algorithm: str
    params: Mapping[str, Any]
    seed: int
    dataset: str

    def __call__(self, train: Interactions, j: int) -> Recommender:
        model_seed = sub_seed(self.seed, "reference", self.dataset, self.algorithm, j)
        return make_model(self.algorithm, **{"seed": model_seed, **self.params}).fit(train)


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
    protocol: str = "served"

    def __post_init__(self) -> None:
        if self.defense not in DEFENSE_SCOPES:
            raise ConfigError(f"defense: expected one of {list(DEFENSE_SCOPES)}, got {self.defense!r}")
        check_protocol(self.protocol)
        if self.defense != "none" and self.protocol != "paper":
            raise ConfigError("defense: Popularity Randomization replaces the popular list of the 'paper' protocol; "
                              f"under {self.protocol!r} non-members get personalised lists (set protocol='paper')")

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
    """How data are prepared and models trained (defaults: the paper's, and where it is silent
    the choices of docs/decisions.md, "Membership inference (paper 001)").

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
    n_references: int = 8
    calibration_statistics: tuple[str, ...] = ("popular_overlap", "feature_norm")


#: the calibrated attacks (``calibrated`` module) the lab runs on reference recommenders
CALIBRATED = ("lira", "lira_offline", "rmia")


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
    trainers:
        ``fit(train, index) -> model`` by algorithm, used instead of ``make_model`` to train the
        calibrated attacks' reference recommenders (the audit's training function).
    factories:
        ``fit(train, seed) -> model`` by algorithm name, used instead of ``make_model`` to train
        the shadow and target recommenders: an algorithm trained under a defence (a DPMF, a
        model retrained on a synthetic release of its data), so that the adversary's shadow is
        defended as the target is (the adaptive adversary).
    reference_filler:
        Interactions of other users by dataset that every reference recommender also trains on
        (``references.reference_lists``): the audit gives the target's members it does not attack,
        so that references train on as many users as the target did.
    executor:
        The study kit's executor the reference recommenders are trained on, one cell each
        (``reference_cells``: ``kit.executor.InProcess`` or ``RayExecutor``, which trains them side
        by side); None (default) trains them one after another in this process, without a
        progress line per reference. The lists are the same either way.
    """

    def __init__(
        self,
        datasets: Mapping[str, Interactions],
        options: LabOptions | None = None,
        seed: int = 0,
        randomize: Randomize | None = None,
        partitions: Mapping[str, Partition] | None = None,
        models: Mapping[tuple[str, str, str], Recommender] | None = None,
        trainers: Mapping[str, FitFn] | None = None,
        factories: Mapping[str, Callable[[Interactions, int], Recommender]] | None = None,
        reference_filler: Mapping[str, Interactions] | None = None,
        executor: Executor | None = None,
    ) -> None:
        self.datasets = dict(datasets)
        self.options = options or LabOptions()
        self.seed = seed
        self.randomize = randomize
        self.timings: dict[str, float] = {}
        self._cache: dict[tuple, Any] = {("partition", name): p for name, p in (partitions or {}).items()}
        self._cache.update({("model", *key, 1.0): model for key, model in (models or {}).items()})
        self.trainers = dict(trainers or {})
        self.factories = dict(factories or {})
        self.reference_filler = dict(reference_filler or {})
        self.executor = executor
        self.k_max = 0

    # ------------------------------------------------------------------ plumbing
    def _cached(self, key: tuple, stage: str, make: Callable[[], Any]) -> Any:
        if key not in self._cache:
            self._announce(key, stage)
            with timed(self.timings, stage):
                self._cache[key] = make()
        return self._cache[key]

    def _announce(self, key: tuple, stage: str) -> None:
        """A step in words when it trains something (a progress line); every step as an internal detail."""
        kind, _, algorithm = stage.partition(":")
        if kind == "fit":
            announce(f"membership: training the {key[2]} recommender ({algorithm})")
        elif kind == "references":
            announce(f"membership: training {self.options.n_references} reference recommenders ({algorithm})")
        elif kind == "item_vectors" and key[2] != "file":
            announce("membership: learning the item vectors of the attack's features")
        detail(f"membership {stage}: {' '.join(str(part) for part in key[1:])}")

    def _dataset(self, name: str) -> Interactions:
        if name not in self.datasets:
            raise ConfigError(f"dataset {name!r} is not loaded; loaded: {', '.join(self.datasets)}")
        return self.datasets[name]

    def _sub_seed(self, *parts: Any) -> int:
        """A seed for one random choice, derived from the lab seed and a label (``sub_seed``)."""
        return sub_seed(self.seed, *parts)

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
        """The recommender of ``role`` trained on its members' training interactions (by the
        algorithm's factory when it has one)."""
        group = self.group(dataset, role, fraction)
        seed = self._sub_seed("model", dataset, role, algorithm, fraction)

        def fit() -> Recommender:
            if algorithm in self.factories:
                return self.factories[algorithm](group.train, seed)
            return make_model(algorithm, **{"seed": seed, **self.options.model_params.get(algorithm, {})}).fit(group.train)

        return self._cached(("model", dataset, role, algorithm, fraction), f"fit:{algorithm}", fit)

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

    def histories(self, dataset: str, role: str, fraction: float = 1.0) -> Interactions:
        """The group's interactions minus the held-out ones (what served non-members are served from)."""
        return self._cached(("histories", dataset, role, fraction), "lists",
                            lambda: served_histories(self.group(dataset, role, fraction)))  # fmt: skip

    def nonmember_lists(self, dataset: str, role: str, algorithm: str, k: int, defended: bool,
                        protocol: str = "paper", fraction: float = 1.0) -> np.ndarray:  # fmt: skip
        """``[n_nonmembers, k]``: served by the recommender (``served``), or the members' popular
        list or the defence's random lists (``paper``)."""
        group = self.group(dataset, role, fraction)
        check_list_length(k, group.train)
        if check_protocol(protocol) == "served":
            model = self.recommender(dataset, role, algorithm, fraction)
            key = ("served_lists", dataset, role, algorithm, k, fraction)
            return self._cached(key, "lists", lambda: served_lists(
                model, self.histories(dataset, role, fraction), group.nonmembers, k))  # fmt: skip

        def make() -> np.ndarray:
            ranking = popularity_ranking(group.train)
            if not defended:
                return popular_lists(ranking, len(group.nonmembers), k)
            if self.randomize is None:
                raise ConfigError("a spec asks for the defence, but the lab was built without randomize")
            return self.randomize(ranking, len(group.nonmembers), k, self._sub_seed("defense", dataset, role, k, fraction))

        return self._cached(("nonmember_lists", dataset, role, k, defended, fraction), "lists", make)

    def lists(self, dataset: str, role: str, algorithm: str, k: int, defended: bool, fraction: float = 1.0,
              protocol: str = "paper") -> np.ndarray:  # fmt: skip
        """Lists of members then non-members (the order of ``Group.users``)."""
        return np.concatenate([self.member_lists(dataset, role, algorithm, k, fraction),
                               self.nonmember_lists(dataset, role, algorithm, k, defended, protocol, fraction)])  # fmt: skip

    def features(self, spec: AttackSpec, role: str) -> tuple[np.ndarray, np.ndarray]:
        """Feature matrix and labels (1 = member) of the shadow or target users of ``spec``."""
        dataset, algorithm = spec.shadow if role == "shadow" else spec.target
        fraction = spec.shadow_fraction if role == "shadow" else 1.0
        defended = spec.defended(role)
        group = self.group(dataset, role, fraction)
        key = ("features", dataset, role, algorithm, fraction, spec.k, spec.n_factors, spec.weighting, spec.feature, defended,
               spec.protocol)  # fmt: skip
        if key not in self._cache:
            lists = self.lists(dataset, role, algorithm, spec.k, defended, fraction, spec.protocol)
            vectors = self.vectors(dataset, spec.n_factors)
            with timed(self.timings, "features"):
                self._cache[key] = user_features(spec.feature, group.data, group.users, lists, vectors, spec.weighting)
        return self._cache[key], group.labels

    def hit_rates(self, dataset: str, role: str, algorithm: str, k: int = 100, defended: bool = False,
                  protocol: str = "paper") -> dict[str, float]:  # fmt: skip
        """HR@k of members, non-members and all users of a group (needs a hold-out)."""
        group = self.group(dataset, role)
        if group.heldout is None:
            raise ConfigError("hit rates need held-out interactions; set holdout to 'random' or 'latest'")
        members = hit_rate(self.member_lists(dataset, role, algorithm, k), group.members, group.heldout)
        others = hit_rate(self.nonmember_lists(dataset, role, algorithm, k, defended, protocol), group.nonmembers, group.heldout)
        n_m, n_o = len(group.members), len(group.nonmembers)
        return {"members": members, "nonmembers": others, "all": (members * n_m + others * n_o) / (n_m + n_o)}

    # ------------------------------------------------------------------ attacks
    def attack_model(self, spec: AttackSpec) -> Any:
        """The attack model trained on the shadow side of ``spec`` (fitted on the target
        features for the unsupervised K-Means baseline)."""
        if spec.attack == "kmeans":
            x, _ = self.features(spec, "target")
            key = ("attack", "kmeans", spec.target, spec.k, spec.n_factors, spec.weighting, spec.feature, spec.defended("target"),
                   spec.protocol)  # fmt: skip
            params = self.options.attack_params.get("kmeans", {})
            return self._cached(key, "attack_fit", lambda: make_attack("kmeans", self._sub_seed(*key), **params).fit(x))
        x, y = self.features(spec, "shadow")
        key = ("attack", spec.attack, spec.shadow, spec.k, spec.n_factors, spec.weighting, spec.feature,
               spec.defended("shadow"), spec.shadow_fraction, spec.protocol)  # fmt: skip
        params = self.options.attack_params.get(spec.attack, {})
        return self._cached(key, "attack_fit", lambda: make_attack(spec.attack, self._sub_seed("attack", *key), **params).fit(x, y))

    def run(self, spec: AttackSpec) -> AttackOutcome:
        """Train (or reuse) the attack of ``spec`` and evaluate it on the target users."""
        model = self.attack_model(spec)
        x, y = self.features(spec, "target")
        with timed(self.timings, "attack_score"):
            scores = model.score(x)
            report = binary_attack_report(y, scores, threshold=model.threshold_)
        if spec.attack == "kmeans":
            report["auc_aligned"] = max(report["auc"], 1.0 - report["auc"])
        report["attack_restarts"] = getattr(model, "restarts_", 0)
        return AttackOutcome(spec, report, scores, y)

    # ------------------------------------------------------------------ baselines and calibrated attacks
    def adversary_counts(self, dataset: str) -> np.ndarray:
        """Interactions per item in the adversary's own data (every interaction of the shadow users)."""
        return self._cached(("adversary_counts", dataset), "baselines",
                            lambda: self.group(dataset, "shadow").data.item_counts().astype(np.float64))  # fmt: skip

    def statistic(self, name: str, spec: AttackSpec, dataset: str, data: Interactions, users: np.ndarray,
                  lists: np.ndarray) -> np.ndarray:  # fmt: skip
        """The :mod:`.list_statistics` value ``name`` of ``users``' ``lists`` (``data``: their interactions)."""
        counts = self.adversary_counts(dataset)
        if name == "popular_overlap":
            return popular_overlap(lists, counts)
        if name == "mean_popularity":
            return mean_popularity(lists, counts)
        if name == "feature_norm":
            return feature_norm(origin_features(data, users, lists, self.vectors(dataset, spec.n_factors), spec.weighting))
        raise ConfigError(f"list statistic: expected one of {list(TRIVIAL)}, got {name!r}")

    def _role_statistic(self, name: str, spec: AttackSpec, role: str) -> np.ndarray:
        dataset, algorithm = spec.shadow if role == "shadow" else spec.target
        fraction = spec.shadow_fraction if role == "shadow" else 1.0
        group = self.group(dataset, role, fraction)
        lists = self.lists(dataset, role, algorithm, spec.k, spec.defended(role), fraction, spec.protocol)
        return self.statistic(name, spec, dataset, group.data, group.users, lists)

    def output_statistic_scores(self, spec: AttackSpec) -> dict[str, np.ndarray]:
        """Each training-free statistic of the target users' lists (attacks: they read the
        target's output), pointed the way it separates the adversary's own shadow users
        (``list_statistics.orientation``)."""
        labels = self.group(spec.shadow[0], "shadow", spec.shadow_fraction).labels
        with timed(self.timings, "baselines"):
            return {name: orientation(self._role_statistic(name, spec, "shadow"), labels)
                    * self._role_statistic(name, spec, "target") for name in TRIVIAL}  # fmt: skip

    def history_scores(self, spec: AttackSpec) -> dict[str, np.ndarray]:
        """Each statistic of the target users' own histories (``list_statistics.HISTORY``): the
        baselines, which need no target, oriented on the adversary's shadow users."""
        counts = self.adversary_counts(spec.target[0])
        shadow = self.group(spec.shadow[0], "shadow", spec.shadow_fraction)
        target = self.group(spec.target[0], "target")

        def stat(name: str, group: Group) -> np.ndarray:
            if name == "history_length":
                return history_length(group.data, group.users)
            return history_popularity(group.data, group.users, counts)

        with timed(self.timings, "baselines"):
            return {name: orientation(stat(name, shadow), shadow.labels) * stat(name, target) for name in HISTORY}

    def references(self, dataset: str, algorithm: str, k: int) -> ReferenceLists:
        """Reference recommenders on shares of the shadow and target users as large as the target's
        members (``references`` module)."""
        shadow, target = self.group(dataset, "shadow"), self.group(dataset, "target")
        histories = union(self.histories(dataset, "shadow"), self.histories(dataset, "target"))
        params = self.options.model_params.get(algorithm, {})
        fit = self.trainers.get(algorithm) or BuiltinReference(algorithm, params, self.seed, dataset)
        users = np.concatenate([shadow.users, target.users])
        share = len(target.members) / len(users)
        return self._cached(("references", dataset, algorithm, k), f"references:{algorithm}", lambda: reference_lists(
            fit, histories, users, self.options.n_references, k, PROTOCOLS, self._sub_seed("references", dataset), share,
            self.reference_filler.get(dataset), None if self.executor is None else on_executor(self.executor)))  # fmt: skip

    def calibrated_scores(self, spec: AttackSpec) -> dict[str, np.ndarray]:
        """LiRA (online, offline) and RMIA scores of the target users (``calibrated`` module) from
        the ``calibration_statistics`` of their lists; the shadow users are RMIA's population.
        The references are trained with the shadow's algorithm (the adversary's) on the target's
        dataset: the target's own under Assumption I, the undefended algorithm for the matrix's
        frozen attacker of a defended target."""
        if spec.shadow[0] != spec.target[0] or spec.defense != "none" or spec.shadow_fraction != 1.0:
            raise ConfigError("calibrated attacks need shadow and target on one dataset without defence "
                              "(defense='none', shadow_fraction=1)")  # fmt: skip
        dataset, algorithm = spec.target[0], spec.shadow[1]
        shadow, target = self.group(dataset, "shadow"), self.group(dataset, "target")
        refs = self.references(dataset, algorithm, spec.k)
        data, population_lists = union(shadow.data, target.data), self._population_lists(spec)
        with timed(self.timings, "calibrated"):
            stats = np.stack([np.stack([self.statistic(name, spec, dataset, data, refs.users, lists)
                                        for lists in refs.lists[spec.protocol]], axis=1)
                              for name in self.options.calibration_statistics], axis=2)  # fmt: skip
            t = np.stack([self._role_statistic(name, spec, "target") for name in self.options.calibration_statistics], axis=1)
            population = np.stack([self.statistic(name, spec, dataset, shadow.data, shadow.users, population_lists)
                                   for name in self.options.calibration_statistics], axis=1)  # fmt: skip
            scale = direction(stats, refs.in_mask) / stats.std(axis=(0, 1)).clip(1e-12)
            stats, t, population = stats * scale, t * scale, population * scale
            is_target = np.arange(len(refs.users)) >= len(shadow.users)
            on_target, mask = stats[is_target], refs.in_mask[is_target]
            return {"lira": lira_scores(t, on_target, mask), "lira_offline": lira_offline_scores(t, on_target, mask),
                    "rmia": rmia_scores(t, on_target, population, stats[~is_target])}  # fmt: skip

    def _population_lists(self, spec: AttackSpec) -> np.ndarray:
        """What the target shows the shadow users, who never trained it: a non-member's list."""
        dataset, algorithm = spec.target
        shadow = self.group(dataset, "shadow")
        if spec.protocol == "paper":
            return popular_lists(popularity_ranking(self.group(dataset, "target").train), len(shadow.users), spec.k)
        model = self.recommender(dataset, "target", algorithm)
        return self._cached(("population_lists", dataset, algorithm, spec.k), "lists", lambda: served_lists(
            model, self.histories(dataset, "shadow"), shadow.users, spec.k))  # fmt: skip

    def run_all(self, specs: list[AttackSpec]) -> list[AttackOutcome]:
        """Run every spec, computing each member list once at the longest ``k`` asked for."""
        self.k_max = max([self.k_max, *(s.k for s in specs)])
        return [self.run(spec) for spec in specs]
