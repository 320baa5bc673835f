"""The membership study's grid on the study kit: one cell per thing measured, grouped by seed.

Cell kinds (``setting["kind"]``), all with their ``seed``:

* ``attack``: one :class:`AttackSpec` (its fields flattened into the setting); measurements
  are the numbers of its attack report; the first seed also keeps the target users' ``labels``
  and ``scores`` (for ROC curves);
* ``hit_rate``: HR@k of one recommender's members, non-members and all users;
* ``embedding`` (first seed): the 2-D embedding of one spec's target features (arrays only);
* ``partition`` (first seed): group sizes and item coverage of one dataset.

Every cell also stores the seconds each lab stage spent on it (unit ``s``, metric
``seconds:<stage>``): a stage cached by an earlier cell of the seed costs it nothing.

The cells of a seed form one group: ``prepare`` builds that seed's ``MembershipLab`` (every
stage cached, so the seed's recommenders are trained once whichever executor runs it), with the
longest list length of the whole plan, so a resumed run that measures only some cells computes
the same lists as an uninterrupted one.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from sklearn.decomposition import PCA
from sklearn.manifold import TSNE

from recprivacy.experiments.membership.lab import AttackSpec, LabOptions, MembershipLab
from recprivacy.data.interactions import Interactions
from recprivacy.defenses.popularity_randomization import PopularityRandomization
from recprivacy.experiments.kit import Cell, CellResult, Measurement, measurements
from recprivacy.experiments.membership.plan import HitRateKey, Plan

SYSTEM = "membership"
#: the unit of stage timings
SECONDS = "s"


def randomizer(alpha: float, noise: str):
    """The defence as the lab's ``randomize(ranking, n_users, k, seed)``, drawing from ``noise``
    (``"secure"`` or ``"simulation"``, the config's ``noise``)."""
    return lambda ranking, n_users, k, seed: PopularityRandomization(alpha, seed, noise).lists(ranking, n_users, k)


def spec_setting(spec: AttackSpec) -> dict[str, Any]:
    """The spec's fields as a flat setting (shadow and target pairs split in two)."""
    fields = asdict(spec)
    (sd, sa), (td, ta) = fields.pop("shadow"), fields.pop("target")
    return {"shadow_dataset": sd, "shadow_algorithm": sa, "target_dataset": td, "target_algorithm": ta, **fields}


def setting_spec(setting: dict[str, Any]) -> AttackSpec:
    """The inverse of :func:`spec_setting` (ignores ``kind`` and ``seed``)."""
    fields = {k: v for k, v in setting.items() if k not in ("kind", "seed")}
    shadow = (fields.pop("shadow_dataset"), fields.pop("shadow_algorithm"))
    target = (fields.pop("target_dataset"), fields.pop("target_algorithm"))
    return AttackSpec(shadow, target, **fields)


def plan_cells(plan: Plan, seeds: list[int], datasets: list[str]) -> list[Cell]:
    """Every cell of the merged plan, seed by seed, in the order the lab ran them before the kit."""
    cells = []
    for n, seed in enumerate(seeds):
        group = str(seed)
        cells += [Cell({"kind": "attack", "seed": seed, **spec_setting(s)}, group) for s in plan.specs]
        cells += [Cell({"kind": "hit_rate", "seed": seed, "dataset": d, "role": r, "algorithm": a, "defended": f}, group)
                  for d, r, a, f in plan.hit_rates]  # fmt: skip
        if n == 0:
            cells += [Cell({"kind": "embedding", "seed": seed, **spec_setting(s)}, group) for s in plan.embed]
            cells += [Cell({"kind": "partition", "seed": seed, "dataset": d}, group) for d in datasets]
    return cells


def hit_rate_key(setting: dict[str, Any]) -> HitRateKey:
    return setting["dataset"], setting["role"], setting["algorithm"], setting["defended"]


@dataclass
class MembershipGrid:
    """The kit ``Grid`` of the membership study (module docstring)."""

    study: str
    datasets: dict[str, Interactions]
    lab_options: LabOptions
    alpha: float
    noise: str
    k: int
    embedding: str
    k_max: int
    first_seed: int

    def prepare(self, group: str) -> MembershipLab:
        lab = MembershipLab(self.datasets, self.lab_options, seed=int(group), randomize=randomizer(self.alpha, self.noise))
        lab.k_max = self.k_max
        return lab

    def measure(self, cell: Cell, lab: MembershipLab) -> CellResult:
        setting, before = dict(cell.setting), dict(lab.timings)
        values, arrays = getattr(self, f"_{setting['kind']}")(setting, lab)
        seconds = {f"seconds:{stage}": t - before.get(stage, 0.0) for stage, t in lab.timings.items() if t != before.get(stage)}
        found = measurements(SYSTEM, self.study, setting, setting["seed"], values)
        found += [Measurement(SYSTEM, self.study, setting, name, t, setting["seed"], SECONDS) for name, t in seconds.items()]
        return CellResult(found, arrays)

    def _attack(self, setting: dict[str, Any], lab: MembershipLab) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        outcome = lab.run(setting_spec(setting))
        keep = setting["seed"] == self.first_seed
        return outcome.report, {"labels": outcome.labels, "scores": outcome.scores} if keep else {}

    def _hit_rate(self, setting: dict[str, Any], lab: MembershipLab) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        dataset, role, algorithm, defended = hit_rate_key(setting)
        return lab.hit_rates(dataset, role, algorithm, self.k, defended), {}

    def _embedding(self, setting: dict[str, Any], lab: MembershipLab) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        points, labels = embed(*lab.features(setting_spec(setting), "target"), self.embedding, setting["seed"])
        return {}, {"points": points, "labels": labels}

    def _partition(self, setting: dict[str, Any], lab: MembershipLab) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        return describe_partition(lab, setting["dataset"]), {}


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
