"""Running the settings of the ``membership`` study over seeds and collecting what they give.

The merged plan becomes kit cells (:mod:`.cells`), one group per seed, run by the study's
``Bench`` (stored in the run folder's record store, so a resumed run measures only what is
missing). ``gather`` turns the cells' results back into what the renderer reads: reports per
seed (averaged when rendered), ROC scores, 2-D embeddings of the feature vectors and the
partition summary from the first seed, and the lab's stage timings summed over cells.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from recprivacy.experiments.membership.lab import AttackSpec, LabOptions
from recprivacy.data.interactions import Interactions
from recprivacy.experiments.kit import Bench, Cell, CellResult
from recprivacy.experiments.membership.cells import SECONDS, MembershipGrid, hit_rate_key, plan_cells, randomizer, setting_spec
from recprivacy.experiments.membership.options import MembershipOptions
from recprivacy.experiments.membership.plan import HitRateKey, Plan
from recprivacy.experiments.results import Results
from recprivacy.metrics.summary import mean_sd

__all__ = ["Collected", "collect", "gather", "lab_options", "merge_plans", "randomizer"]

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


def merge_plans(plans: list[Plan]) -> Plan:
    """One plan with every setting once, in first-seen order."""

    def unique(items: list) -> list:
        return list(dict.fromkeys(items))

    return Plan(unique([s for p in plans for s in p.specs]), unique([h for p in plans for h in p.hit_rates]),
                unique([s for p in plans for s in p.roc]), unique([s for p in plans for s in p.embed]))  # fmt: skip


def collect(
    datasets: dict[str, Interactions], options: MembershipOptions, plan: Plan, seeds: list[int], results: Results,
    bench: Bench, noise: str = "secure",
) -> Collected:  # fmt: skip
    """Run ``plan`` once per seed through ``bench``; the defence's lists draw from ``noise``."""
    k_max = max([0, *(s.k for s in plan.specs)])
    grid = MembershipGrid(results.name, datasets, lab_options(options), options.defense.alpha, noise, options.k,
                          options.embedding, k_max, seeds[0])  # fmt: skip
    cells = plan_cells(plan, seeds, list(datasets))
    found = bench.run(grid, cells)
    return gather(cells, [found[c.key] for c in cells], plan, seeds, results)


def gather(cells: Sequence[Cell], found: Sequence[CellResult], plan: Plan, seeds: list[int], results: Results) -> Collected:
    """What the renderer reads, from the cells' results (module docstring); stage seconds are
    added to ``results.timings`` as ``lab:<stage>``."""
    out = Collected(seeds=list(seeds))
    for cell, result in zip(cells, found):
        setting, values = dict(cell.setting), {m.metric: m.value for m in result.measurements if m.unit != SECONDS}
        for m in (m for m in result.measurements if m.unit == SECONDS):
            name = f"lab:{m.metric.removeprefix('seconds:')}"
            results.timings[name] = results.timings.get(name, 0.0) + m.value
        kind = setting["kind"]
        if kind == "attack":
            spec = setting_spec(setting)
            out.reports[spec].append(values)
            if setting["seed"] == seeds[0] and spec in plan.roc:
                out.roc[spec] = (result.arrays["labels"], result.arrays["scores"])
        elif kind == "hit_rate":
            out.hit_rates[hit_rate_key(setting)].append(values)
        elif kind == "embedding":
            out.embeddings[setting_spec(setting)] = (result.arrays["points"], result.arrays["labels"])
        else:
            out.groups[setting["dataset"]] = {k: bool(v) if k == "implicit" else int(v) for k, v in values.items()}
    return out
