"""The ``uploads`` column of the attack x defence matrix and its rows: attribute inference from
federated uploads (paper 004) against the upload defences (APM, uniform LDP, Gaussian, FixRec,
F-DPMF and F-GERAI, the functional mechanism).

Setup (``UploadCellOptions``; reduced, and said so in the report): a seeded sample of at most
``max_users`` of the matrix's members with training interactions (``sampling.sample_users``),
renumbered with their train / validation / test splits (``Interactions.take_users``). Pure
FedRec (no defence) and each upload defence are trained by the federated study's own code
(``experiments.federated.train_method``, the in-process simulator): ``model`` of dimension
``dim``, ``rounds`` rounds with ``clients_per_round`` of the sample, the study's defaults for
everything else but ``federated`` (its training and defence options; by default 2 local epochs
of batch 32 at lr 0.05 instead of the study's 5 at 0.01: a round's cost is set by its heaviest
client's steps, and the larger step reaches a usable model in 10 rounds; docs/decisions.md),
seeded noise as ``config.noise`` says. Then one attack round in which every sampled client uploads (the federated
study's ``attack_clients: all``), so every run shows the attacker the same clients in the same order.

Attack: the honest-but-curious server's pseudo-gradients over all components (``ΔΘ_u``,
``attacks.attribute.component_matrix``); each of ``attackers`` is trained on a ζ share of the
clients whose attribute it knows and predicts the others, pooled over ``seeds`` splits
(``federated.classes.pooled_predictions``). *Frozen*: trained on Pure FedRec's uploads of the known
clients, applied to the defended uploads of the others; *adaptive*: trained and applied on the
defended uploads. The better attacker is judged on weighted F1 (the paper's metric) against the
better of the majority-class and uniform guess on the same clients (``cells.attribute_judged``).

Utility: Recall@10 of the final global model on the sample's test split (full ranking, training
and validation items masked) against Pure FedRec's, paired bootstrap over users
(``audit.utility_change``). Pure FedRec's own Recall@10 sits in the no-defence row's cell (the
row's utility is the central target's), beside a popularity list's on the same users.

F-DPMF trains federated MF, whose uploads (the item table) differ in shape from FedRec's: it has
no frozen attacker, and its change against Pure FedRec includes the change of model (said in
its cell).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

import numpy as np
from pydantic import Field, PositiveInt, field_validator

from recprivacy.attacks.attribute import component_matrix
from recprivacy.config import Config, StudyOptions
from recprivacy.experiments.audit import utility_change
from recprivacy.experiments.federated import FederatedOptions, TrainedMethod, train_method
from recprivacy.experiments.matrix.cells import Judged, MatrixCell, attribute_judged
from recprivacy.experiments.matrix.plan import DefenceSpec
from recprivacy.experiments.matrix.world import Row, World
from recprivacy.experiments.results import Results
from recprivacy.experiments.sampling import sample_users
from recprivacy.experiments.train import PreparedData
from recprivacy.federated.features import attribute_labels, user_features
from recprivacy.metrics.intervals import Estimate
from recprivacy.models.base import Recommender
from recprivacy.models.popularity import Popularity

#: row titles of the upload defences (``defenses.apm.make_defence`` / ``federated_dp.make_baseline`` names)
TITLES = {"apm": "APM (adaptive per-component LDP on uploads)", "ldp": "uniform LDP on uploads (FedNews)",
          "gaussian": "Gaussian noise on uploads (FedRec-GN)", "fixrec_max": "FixRec-max (uniform ε = ε_min on uploads)",
          "fixrec_min": "FixRec-min (uniform ε = ε_max on uploads)",
          "fdpmf": "F-DPMF (objective perturbation, federated MF)",
          "fgerai": "F-GERAI (functional mechanism and feature LDP)"}  # fmt: skip
#: the federated study's options the column passes through (``UploadCellOptions.federated``)
PASSED = ("lr", "local_epochs", "batch_size", "n_negatives", "init_std", "resistance", "delta", "eps_min", "eps_max",
          "epsilon", "sigma", "eps_dpmf")  # fmt: skip
NO_FROZEN = ("frozen not run: {title} trains a model whose uploads differ in shape from Pure FedRec's; "
             "its change against Pure FedRec includes the change of model")  # fmt: skip


class UploadCellOptions(StudyOptions):
    """The uploads column: the defences, the user sample, the (reduced) federated training, the attackers."""

    defences: list[Literal["apm", "ldp", "gaussian", "fixrec_max", "fixrec_min", "fdpmf", "fgerai"]] = Field(
        default_factory=lambda: ["apm", "ldp", "gaussian", "fixrec_max", "fixrec_min", "fdpmf", "fgerai"])
    max_users: PositiveInt | None = 300
    model: Literal["fedrec", "fedlightgcn", "fedncf"] = "fedrec"
    dim: PositiveInt = 32
    rounds: PositiveInt = 10
    clients_per_round: float = Field(0.5, gt=0)
    zeta: float = Field(0.2, gt=0, lt=1)
    seeds: PositiveInt = 3
    attackers: list[Literal["dnn", "tree", "svc", "knn"]] = Field(default_factory=lambda: ["knn", "tree"], min_length=1)
    federated: dict[str, Any] = Field(default_factory=lambda: {"local_epochs": 2, "batch_size": 32, "lr": 0.05})
    #: per-method changes to ``federated`` (F-DPMF and F-GERAI diverge in round 1 at lr 0.05)
    per_method: dict[str, dict[str, Any]] = Field(default_factory=lambda: {"fdpmf": {"lr": 0.01}, "fgerai": {"lr": 0.01}})

    @field_validator("federated")
    @classmethod
    def _passed_through(cls, value: dict[str, Any]) -> dict[str, Any]:
        """Only ``PASSED`` keys, each valid as the federated study's option."""
        if unknown := sorted(set(value) - set(PASSED)):
            raise ValueError(f"unknown keys {unknown}; expected some of {list(PASSED)}")
        FederatedOptions.model_validate(value)
        return value

    @field_validator("per_method")
    @classmethod
    def _per_method(cls, value: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """Keys are upload defences (or ``none``), values valid ``federated`` blocks."""
        if unknown := sorted(set(value) - set(TITLES) - {"none"}):
            raise ValueError(f"unknown methods {unknown}; expected some of {['none', *TITLES]}")
        return {method: cls._passed_through(block) for method, block in value.items()}

    def study_options(self, method: str = "none") -> FederatedOptions:
        """The federated study's options for ``method``'s run (attack round: every client)."""
        return FederatedOptions(**{**self.federated, **self.per_method.get(method, {})}, model=self.model, dims=[self.dim],
                                rounds=self.rounds, clients_per_round=self.clients_per_round, eval_every=self.rounds,
                                attack_clients="all", engine="simulator")  # fmt: skip


def federated_sample(data: PreparedData, max_users: int | None, seed: int) -> PreparedData:
    """At most ``max_users`` users with training interactions (seeded), renumbered in every split."""
    users = sample_users(np.flatnonzero(data.train.user_counts() > 0), max_users, seed)
    return PreparedData(*(part.take_users(users) for part in (data.full, data.train, data.valid, data.test)))


@dataclass
class Federation:
    """The uploads column's shared state, built on first need in the process that measures it
    (module docstring): the user sample, its features and labels, and Pure FedRec trained once;
    ``results`` takes the stage timings. ``options``: the ``MatrixOptions`` (its ``uploads`` and
    ``attribute``)."""

    config: Config
    options: Any
    sample: PreparedData
    results: Results

    @classmethod
    def of(cls, config: Config, options: Any, data: PreparedData, results: Results) -> Federation:
        """The column's seeded sample of ``data``'s members."""
        return cls(config, options, federated_sample(data, options.uploads.max_users, config.seed), results)

    @cached_property
    def features(self) -> Any:
        """The sampled users' features (``federated.features.user_features``)."""
        return user_features(self.sample.train)

    @cached_property
    def labels(self) -> tuple[np.ndarray, tuple[str, ...]]:
        """Every sampled user's attribute label and the class names."""
        return attribute_labels(self.sample.full, self.options.attribute)

    def train(self, method: str) -> TrainedMethod:
        """``method``'s federation on the sample (``experiments.federated.train_method``)."""
        o = self.options.uploads
        with self.results.timed(f"matrix:uploads {method}"):
            return train_method(self.config, o.study_options(method), method, self.sample.train, self.features, o.dim)

    @cached_property
    def pure(self) -> tuple[np.ndarray, np.ndarray, Recommender]:
        """Pure FedRec's attacked clients, their uploads and its final model."""
        trained = self.train("none")
        return *attacked_uploads(trained), trained.recommender()

    def judge(self, x_fit: np.ndarray, x: np.ndarray, users: np.ndarray) -> Judged:
        """The better attacker trained on ``x_fit`` and applied to ``x`` (module docstring)."""
        o, (y_all, names) = self.options.uploads, self.labels
        return attribute_judged(x_fit, x, y_all[users], len(names), o.zeta, o.seeds, o.attackers, "weighted_f1")

    def pure_cell(self) -> MatrixCell:
        """Pure FedRec's uploads cell (frozen = adaptive) with its Recall@10 beside a popularity list's."""
        users, x_pure, reference = self.pure
        plain = self.judge(x_pure, x_pure, users)
        value, _, _ = utility_change(reference, reference, self.sample, 10)
        popular, _, _ = utility_change(*[Popularity().fit(self.sample.train)] * 2, self.sample, 10)
        utility = (f"Recall@10 of Pure FedRec (a popularity list on the same users: {popular.value:.4f})", value,
                   Estimate(0.0, 0.0, 0.0, "reference", value.n))  # fmt: skip
        return MatrixCell(plain, plain, utility=utility)

    def defence_row(self, method: str) -> Row:
        """The row of the upload defence ``method`` (``defence_world``)."""
        users, x_pure, reference = self.pure
        return defence_world(method, self.train(method), (users, x_pure), reference, self.sample, self.judge).row()


def defence_world(method: str, trained: TrainedMethod, pure: tuple[np.ndarray, np.ndarray], reference: Recommender,
                  sample: PreparedData, judge: Callable[..., Judged]) -> World:  # fmt: skip
    """The row of one upload defence: its statement, its Recall@10 against Pure FedRec's
    (``reference``) and its uploads cell, frozen (``judge`` trained on Pure FedRec's uploads
    ``pure``) when the uploads have Pure FedRec's shape, and adaptive."""
    (users, x_pure), (defended_users, x) = pure, attacked_uploads(trained)
    if not np.array_equal(defended_users, users):
        raise RuntimeError(f"the attack rounds of Pure FedRec and {method} saw different clients")
    frozen = judge(x_pure, x, users) if x.shape == x_pure.shape else None
    model = trained.recommender()
    world = World(DefenceSpec(f"uploads_{method}", TITLES[method], "uploads"), model, trained.statement)
    value, _, change = utility_change(model, reference, sample, 10)
    world.utility = ("Recall@10 (federated, sampled users' test)", value, change)
    world.cells["uploads"] = MatrixCell(frozen, judge(x, x, users), "" if frozen else NO_FROZEN.format(title=TITLES[method].split(" (")[0]))
    return world


def attacked_uploads(trained: TrainedMethod) -> tuple[np.ndarray, np.ndarray]:
    """The attack round's clients and their pseudo-gradients over all components ``[B, P]``."""
    up = trained.federation.attack
    return up.users, component_matrix(up.pseudo_gradients(trained.sim.local.lr), trained.sim.model.components(), "all")


def uploads_text(o: UploadCellOptions, pure: MatrixCell) -> str:
    """The report's paragraph on the uploads column: setup, reductions, Pure FedRec's utility."""
    name, value, _ = pure.utility
    f = o.study_options()
    return (f"Attribute inference from federated uploads (paper 004) runs on its own federated system: {o.model} "
            f"(d = {o.dim}) trained by the federated study's simulator on a seeded sample of at most {o.max_users} "
            f"members, {o.rounds} rounds with {o.clients_per_round:g} of them per round, {f.local_epochs} local epochs "
            f"of batch {f.batch_size} at lr {f.lr:g} (reduced from the paper's 100 rounds of 5 local epochs of batch 32 "
            f"on every user{_per_method_text(o)}), then one attack round in which every sampled client uploads. The server's attackers "
            f"({', '.join(o.attackers)}) read each client's pseudo-gradient over all components, know the attribute "
            f"of {o.zeta:.0%} of the clients ({o.seeds} splits pooled) and are judged on weighted F1 against the "
            f"better of the majority-class and uniform guess; frozen attackers are trained on Pure FedRec's uploads. "
            f"The no-defence row's uploads cell is Pure FedRec ({name}: {value.value:.4f} [{value.low:.4f}, "
            f"{value.high:.4f}]); each upload defence's utility cost is its federated model's Recall@10 against Pure "
            f"FedRec's on the same users; a positive change means the defended federation trained a better model than "
            f"Pure FedRec at this reduced length (the upload defences clip every update, which Pure FedRec does not). "
            f"Only the uploads column applies to these rows.")


def _per_method_text(o: UploadCellOptions) -> str:
    changes = "; ".join(f"{TITLES.get(m, m).split(' (')[0]}: " + ", ".join(f"{k} {v}" for k, v in block.items())
                        for m, block in o.per_method.items())  # fmt: skip
    return f"; except {changes}" if changes else ""
