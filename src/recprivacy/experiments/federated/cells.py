"""The ``federated`` study's grid on the study kit: one group per (d, method), whose federation
is trained once on the configured engine (``methods.train_method``), and its cells.

* ``training`` (one per group): Hit@K / NDCG@K of the final global model on the leave-one-out
  split, the number of clients in the attack round (``attack_clients``), the median seconds of
  a training round (unit ``s``), and the Hit@K curve over the evaluated rounds (arrays ``rounds``
  and ``hits``);
* ``attack`` (attribute x ζ x attacker x component): the honest-but-curious server attacks the
  uploads of one extra round after training over ``attack_seeds`` random ζ-splits (mean ± sample
  sd, ``metrics.summary.mean_sd``), with its seconds (unit ``s``). A component the model does not
  upload measures nothing.

Beside the paper's attackers every (attribute, ζ) carries the blind baselines (majority,
uniform) and, for models with a feature user tower, the trivial zero-column rule on ``ΔE_U``
(attacker ``zero-column``, component ``user``; not one of the paper's attackers, reported beside
them): it reads which one-hot column
of ΔE_U is non-zero, and misses only clients whose whole ΔE_U is zero (``zero_update_share``).
``attack_inputs``: ``zscore`` (the default) or ``raw``, the ablation that feeds the
attackers the unscaled ΔΘ; ``fused_adam``: the DNN attacker uses PyTorch's fused Adam (faster,
not bitwise equal to the default; docs/decisions.md, "Attack cost"). Every split and attacker is seeded by its split
seed, so a cell measures the same whichever cells of its group ran before it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from recprivacy.attacks.attribute import COMPONENT_SETS, attack_report, component_matrix, zero_column_attack, zero_updates, zeta_split
from recprivacy.config import Config
from recprivacy.data.interactions import Interactions
from recprivacy.experiments.federated.methods import TrainedMethod, train_method
from recprivacy.experiments.federated.options import FederatedOptions
from recprivacy.experiments.kit import Cell, CellResult, Measurement, measurements
from recprivacy.federated.features import UserFeatures
from recprivacy.metrics.attack import multiclass_attack_report
from recprivacy.metrics.ranking import evaluate
from recprivacy.metrics.summary import mean_sd

SYSTEM = "federated"
ZERO_COLUMN = "zero-column"
AttackKey = tuple[int, str, str, float, str, str]
"""(d, method, attribute, ζ, attacker, component) of one attack cell."""


def group_name(dim: int, method: str) -> str:
    return f"d={dim}/{method}"


def plan_cells(options: FederatedOptions) -> list[Cell]:
    """The training cell and every attack cell of each (d, method), in the order they ran
    before the kit (module docstring)."""
    cells = []
    for dim in options.dims:
        for method in options.methods:
            group, where = group_name(dim, method), {"dim": dim, "method": method}
            cells.append(Cell({"kind": "training", **where}, group))
            for attribute in options.attributes:
                for zeta in options.zetas:
                    at = {"kind": "attack", **where, "attribute": attribute, "zeta": zeta}
                    cells += [Cell({**at, "attacker": kind, "component": component}, group)
                              for component in options.components for kind in options.attackers]  # fmt: skip
                    cells.append(Cell({**at, "attacker": ZERO_COLUMN, "component": "user"}, group))
    return cells


@dataclass
class Trained:
    """One group's trained federation and the attack round's inputs, built on first need."""

    method: TrainedMethod
    labels: Mapping[str, tuple[np.ndarray, tuple[str, ...]]]
    matrices: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def deltas(self) -> dict[str, Any]:
        return self.method.federation.attack.pseudo_gradients(self.method.sim.local.lr)

    def inputs(self, component: str) -> Any | None:
        """ΔΘ restricted to ``component`` (None when the model uploads none of it)."""
        comps = self.method.sim.model.components()
        if not any(comps[n] in COMPONENT_SETS[component] for n in self.deltas):
            return None
        if component not in self.matrices:
            self.matrices[component] = component_matrix(self.deltas, comps, component)
        return self.matrices[component]

    def labels_of(self, attribute: str) -> tuple[np.ndarray, tuple[str, ...]]:
        """The attacked clients' labels of ``attribute`` and the class names."""
        y_all, names = self.labels[attribute]
        return y_all[self.method.federation.attack.users], names


@dataclass
class FederatedGrid:
    """The kit ``Grid`` of the ``federated`` study: config, options, the split and the users'
    features and attribute labels."""

    study: str
    config: Config
    options: FederatedOptions
    train: Interactions
    test: Interactions
    feats: UserFeatures
    labels: Mapping[str, tuple[np.ndarray, tuple[str, ...]]]

    def prepare(self, group: str) -> Trained:
        dim, method = group.removeprefix("d=").split("/", 1)
        return Trained(train_method(self.config, self.options, method, self.train, self.feats, int(dim)), self.labels)

    def measure(self, cell: Cell, trained: Trained) -> CellResult:
        s = dict(cell.setting)
        if s["kind"] == "training":
            return self._training(s, trained.method)
        start = time.perf_counter()
        values = self._attack(s, trained)
        if values is None:
            return CellResult([])
        found = measurements(SYSTEM, self.study, s, self.config.seed, values)
        return CellResult([*found, Measurement(SYSTEM, self.study, s, "seconds", time.perf_counter() - start, self.config.seed, "s")])

    def _training(self, s: dict[str, Any], trained: TrainedMethod) -> CellResult:
        fed, ks = trained.federation, self.config.eval.ks
        evaluations = [(t, evaluate(trained.recommender(t), self.test, ks=ks)) for t in sorted(fed.snapshots)]
        values = {**{k: float(v) for k, v in evaluations[-1][1].items()}, "attack_clients": float(len(fed.attack.users))}
        found = measurements(SYSTEM, self.study, s, self.config.seed, values)
        found.append(Measurement(SYSTEM, self.study, s, "round_seconds_median", float(np.median(fed.round_seconds)),
                                 self.config.seed, "s"))  # fmt: skip
        curve = {"rounds": np.array([t for t, _ in evaluations]), "hits": np.array([m[f"hit@{ks[-1]}"] for _, m in evaluations])}
        return CellResult(found, curve)

    def _attack(self, s: dict[str, Any], trained: Trained) -> dict[str, float] | None:
        o, zeta = self.options, s["zeta"]
        y, names = trained.labels_of(s["attribute"])
        if s["attacker"] == ZERO_COLUMN:
            if "E_U" not in trained.deltas or s["attribute"] not in self.feats.blocks:
                return None
            pred = zero_column_attack(trained.deltas["E_U"], self.feats.blocks[s["attribute"]])
            reps = [multiclass_attack_report(y[u], pred[u], np.arange(len(names)))
                    for u in (zeta_split(len(y), zeta, seed)[1] for seed in range(o.attack_seeds))]  # fmt: skip
            return {**summary(reps), "zero_update_share": float(zero_updates(trained.deltas["E_U"]).mean())}
        x = trained.inputs(s["component"])
        if x is None:
            return None
        return summary([attack_report(x, y, names, zeta, seed, s["attacker"], o.fused_adam, o.attack_inputs == "zscore")
                        for seed in range(o.attack_seeds)])  # fmt: skip


def summary(reports: list[dict]) -> dict[str, float]:
    """Mean and sample sd over the splits' reports of weighted F1, macro F1 and accuracy, and
    the mean weighted F1 of the blind and the majority-class guess."""
    out = {}
    for k in ("weighted_f1", "macro_f1", "accuracy"):
        stats = mean_sd(r[k] for r in reports)
        out[f"{k}_mean"], out[f"{k}_std"] = stats.mean, stats.sd
    out["blind_weighted_f1"] = float(np.mean([r["blind"]["weighted_f1"] for r in reports]))
    out["majority_weighted_f1"] = float(np.mean([r["baseline_majority"]["weighted_f1"] for r in reports]))
    return out
