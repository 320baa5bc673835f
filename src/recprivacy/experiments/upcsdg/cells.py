"""The ``upcsdg`` study's grid on the study kit: one cell per measurement row, grouped by seed.

Every cell's setting holds ``kind``, ``seed``, ``variant`` (``original`` or a UPC-SDG variant),
``k`` and ``gamma`` (null for the original data) and, for some kinds, ``model`` or ``attack``:

* ``membership``: the paper-001 attack against the target trained on real or released data;
* ``utility``: one downstream model's test metrics (``lab.SeedLab.utility_values``);
* ``release``: one synthetic dataset's generation seconds, similarity and drops;
* ``recovery``: one attacker's Recall and NDCG of the replaced originals of a grid cell.

``plan_cells`` lists them in the order the study measured them before the kit (membership
first, so a dataset too small for its partition fails before the long parts; a release just
before the first measurement on it); each is listed once. The cells of a seed form one group,
whose ``SeedLab`` generates each release and fits each model once. A cell that triggers the
feature model's fit also stores its seconds (metric ``seconds:fit``, unit ``s``). ``rows`` turns
the results back into the per-seed measurement rows the report is rendered from.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from recprivacy.config import Config
from recprivacy.experiments.kit import Cell, CellResult, Measurement, measurements
from recprivacy.experiments.results import Results
from recprivacy.experiments.runner import new_results
from recprivacy.experiments.train import PreparedData
from recprivacy.experiments.upcsdg.lab import SeedLab
from recprivacy.experiments.upcsdg.options import ATTACKS, SETTINGS, VARIANTS, UPCSDGOptions

SYSTEM = "upcsdg"
#: the prefix of a stage's seconds among a cell's measurements
STAGE = "seconds:"


def plan_cells(options: UPCSDGOptions, seeds: Sequence[int]) -> list[Cell]:
    """Every cell of the configured parts, seed by seed (module docstring)."""
    return [cell for seed in seeds for cell in _seed_cells(options, seed)]


def _seed_cells(options: UPCSDGOptions, seed: int) -> list[Cell]:
    cells: dict[str, Cell] = {}

    def add(kind: str, variant: str = "original", k: float | None = None, gamma: float | None = None, **extra: str) -> None:
        cell = Cell({"kind": kind, "seed": seed, "variant": variant, "k": k, "gamma": gamma, **extra}, str(seed))
        cells.setdefault(cell.key, cell)

    def utility(name: str, variant: str = "original", k: float | None = None, gamma: float | None = None) -> None:
        if variant != "original":
            add("release", variant, k, gamma)
        add("utility", variant, k, gamma, model=name)

    if "membership" in options.parts:
        add("membership")
        for k in options.grid_k:
            for gamma in options.grid_gamma:
                add("membership", "UPC-SDG", k, gamma)
    models = ["random", *options.models]
    for name in models:
        utility(name)
    if "table2" in options.parts:
        for k, gamma in SETTINGS.values():
            for name in models:
                utility(name, "UPC-SDG", k, gamma)
    if "grid" in options.parts:
        for k in options.grid_k:
            for gamma in options.grid_gamma:
                utility("bpr", "UPC-SDG", k, gamma)
                for attack in ATTACKS:
                    add("recovery", "UPC-SDG", k, gamma, attack=attack)
    if "ablations" in options.parts:
        for k in options.ablation_k:
            for variant in VARIANTS:
                utility("bpr", variant, k, options.ablation_gamma)
    return list(cells.values())


@dataclass
class UPCSDGGrid:
    """The kit ``Grid`` of the ``upcsdg`` study: the config, options and each seed's split."""

    study: str
    config: Config
    options: UPCSDGOptions
    data: Mapping[int, PreparedData]

    def prepare(self, group: str) -> SeedLab:
        seeded = self.config.model_copy(update={"seed": int(group)})
        return SeedLab(seeded, self.options, self.data[int(group)], new_results(seeded))

    def measure(self, cell: Cell, lab: SeedLab) -> CellResult:
        s, before = dict(cell.setting), dict(lab.log.timings)
        where = s["variant"], _number(s["k"]), _number(s["gamma"])
        if s["kind"] == "membership":
            values = lab.membership_values(*where)
        elif s["kind"] == "utility":
            values = lab.utility_values(s["model"], *where)
        elif s["kind"] == "release":
            values = lab.release_values(*where)
        else:
            values = lab.recovery_values(*where[1:], s["attack"])
        found = measurements(SYSTEM, self.study, s, s["seed"], values, {"seconds": "s"})
        found += [Measurement(SYSTEM, self.study, s, STAGE + name, t - before.get(name, 0.0), s["seed"], "s")
                  for name, t in lab.log.timings.items() if t != before.get(name)]  # fmt: skip
        return CellResult(found)


def _number(value: float | None) -> float:
    """A setting's ``k`` or ``gamma`` as the lab keys it (NaN for the original data)."""
    return math.nan if value is None else float(value)


def rows(cells: Sequence[Cell], found: Mapping[str, CellResult], results: Results) -> list[dict[str, Any]]:
    """One measurement row per cell: ``kind``, ``seed``, ``variant``, ``k``, ``gamma`` (NaN for the
    original data), ``model`` or ``attack`` where the cell has one, then its values. Stage seconds
    are added to ``results.timings`` (``fit`` sums the feature fits of every seed)."""
    out = []
    for cell in cells:
        s = dict(cell.setting)
        row = {"kind": s["kind"], "seed": s["seed"], "variant": s["variant"], "k": _number(s["k"]), "gamma": _number(s["gamma"]),
               **{key: s[key] for key in ("model", "attack") if key in s}}  # fmt: skip
        for m in found[cell.key].measurements:
            if m.metric.startswith(STAGE):
                name = m.metric.removeprefix(STAGE)
                results.timings[name] = results.timings.get(name, 0.0) + m.value
            else:
                row[m.metric] = m.value
        out.append(row)
    return out
