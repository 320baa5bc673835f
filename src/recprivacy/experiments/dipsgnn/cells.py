"""The ``dipsgnn`` study's grid on the study kit: one cell per method fitted at one seed.

Cell kinds (``setting["kind"]``), each with its ``method`` and ``seed``:

* ``method``: a row of Table 2 (or the ablation) at the study's own setting;
* ``sweep``: a method at one point ``parameter = value`` of a sweep (Figs. 3-6). A point equal
  to the study's own setting reuses the ``method`` cells of the methods in Table 2; the others
  are run there.

A cell's measurements are the test metrics x100 (``recall@20``, ``masked/recall@20``, ...; unit
``%``), its ``fit_seconds`` and ``epochs``; its details hold the model's privacy statements
(``PrivacyStatement.to_dict`` by label) and its arrays the validation curve, when it has one.

The prepared sequences travel with the grid (built once by the study); the cells share nothing
else (every model is seeded by its cell), so each is its own group and Ray runs them side by side.
DPMF_exp has no cell when the data carry no ratings.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from recprivacy.experiments.dipsgnn.collect import MethodRun, run_method
from recprivacy.experiments.dipsgnn.options import DIPSGNNOptions
from recprivacy.experiments.dipsgnn.sequences import SequenceData
from recprivacy.experiments.dipsgnn.sweep import sweep_default, sweep_point
from recprivacy.experiments.kit import Cell, CellResult, Measurement, measurements
from recprivacy.privacy.accounting import PrivacyStatement

SYSTEM = "dipsgnn"
MASKED = "masked/"


def study_cells(options: DIPSGNNOptions, backbone: dict[str, Any], has_ratings: bool) -> list[Cell]:
    """Every method at every seed, then every sweep point not taken from them (module docstring)."""
    runnable = [m for m in options.methods if has_ratings or m != "DPMF_exp"]
    cells = [method_cell(m, s) for m in runnable for s in options.seeds]
    for sweep in options.sweeps:
        default = sweep_default(sweep.parameter, options, backbone)
        for value in sweep.values:
            todo = [m for m in sweep.methods if not (value == default and m in runnable) and (has_ratings or m != "DPMF_exp")]
            cells += [method_cell(m, s, (sweep.parameter, value)) for m in todo for s in options.seeds]
    return cells


def method_cell(method: str, seed: int, point: tuple[str, float] | None = None) -> Cell:
    """The cell of ``method`` at ``seed``, at the study's own setting or at a sweep ``point``
    ``(parameter, value)``; each cell is its own group."""
    if point is None:
        return Cell.alone({"kind": "method", "method": method, "seed": seed})
    return Cell.alone({"kind": "sweep", "parameter": point[0], "value": point[1], "method": method, "seed": seed})


@dataclass
class DIPSGNNGrid:
    """The kit ``Grid`` of the dipsgnn study (module docstring)."""

    study: str
    data: SequenceData
    options: DIPSGNNOptions
    backbone: dict[str, Any]

    def prepare(self, group: str) -> None:
        """Nothing: the cells share only the sequences the grid carries."""

    def measure(self, cell: Cell, prepared: None) -> CellResult:
        s = dict(cell.setting)
        options, backbone = self.options, self.backbone
        if s["kind"] == "sweep":
            options, backbone = sweep_point(s["parameter"], s["value"], options, backbone)
        run = run_method(s["method"], s["seed"], self.data, options, backbone)
        values = {**run.metrics, **{MASKED + k: v for k, v in run.masked.items()}}
        found = measurements(SYSTEM, self.study, s, s["seed"], values, {k: "%" for k in values})
        found += [Measurement(SYSTEM, self.study, s, "fit_seconds", run.fit_seconds, s["seed"], "s"),
                  Measurement(SYSTEM, self.study, s, "epochs", float(run.epochs), s["seed"])]  # fmt: skip
        arrays = {"valid_curve": np.asarray(run.valid_curve, dtype=np.float64)} if run.valid_curve else {}
        return CellResult(found, arrays, {"statements": {k: st.to_dict() for k, st in run.statements.items()}})


def method_run(cell: Cell, result: CellResult) -> MethodRun:
    """The ``MethodRun`` a cell's result stands for."""
    values = result.values()
    metrics = {k: v for k, v in values.items() if k not in ("fit_seconds", "epochs") and not k.startswith(MASKED)}
    masked = {k.removeprefix(MASKED): v for k, v in values.items() if k.startswith(MASKED)}
    statements = {k: statement(d) for k, d in result.details.get("statements", {}).items()}
    curve = [float(v) for v in result.arrays.get("valid_curve", [])]
    return MethodRun(cell.setting["method"], cell.setting["seed"], metrics, masked, values["fit_seconds"],
                     int(values["epochs"]), statements, curve)  # fmt: skip


def statement(d: dict[str, Any]) -> PrivacyStatement:
    """The inverse of ``PrivacyStatement.to_dict`` (``epsilon: null`` is no formal guarantee)."""
    eps = math.inf if d["epsilon"] is None else d["epsilon"]
    return PrivacyStatement(eps, d["delta"], d["accountant"], d["unit"], d["scope"], d["setting"], tuple(d["notes"]), d["noise"])


@dataclass
class Gathered:
    """The runs of Table 2 by method, and of each sweep point by (parameter, value) and method."""

    runs: dict[str, list[MethodRun]] = field(default_factory=dict)
    points: dict[tuple[str, float], dict[str, list[MethodRun]]] = field(default_factory=dict)


def gather(cells: Sequence[Cell], found: Sequence[CellResult], methods: Sequence[str]) -> Gathered:
    """The cells' runs, Table 2's in the order of ``methods`` (methods without a run left out)."""
    out = Gathered(runs={m: [] for m in methods})
    for cell, result in zip(cells, found):
        s, run = cell.setting, method_run(cell, result)
        if s["kind"] == "method":
            out.runs[s["method"]].append(run)
        else:
            out.points.setdefault((s["parameter"], s["value"]), {}).setdefault(s["method"], []).append(run)
    out.runs = {m: r for m, r in out.runs.items() if r}
    return out
