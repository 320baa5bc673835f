"""The matrix's units of work on the study kit: which cells there are, and how each is measured.

Groups (``kit.Cell.group``; the executor runs each group's cells in one process after one
``prepare``, and an executor on Ray runs the groups side by side):

* ``central``: the ``rows`` cell (the central defence rows, ``central.build_worlds``: each row's
  defence, privacy statement and utility cost), then one cell per central column
  (``central.COLUMNS``), each holding that column's cell of every central row;
* ``uploads``: one cell per federated system, ``none`` (Pure FedRec's uploads cell) and each
  upload defence (its row, ``uploads.Federation``);
* ``sequential`` (the sequential-model defences' canary audits, ``matrix.sequential``) and
  ``mechanisms`` (the upload mechanisms' per-release audits, ``matrix.mechanisms``), one cell each.

Only the columns ``MatrixOptions.columns`` selects are planned (the rows always; the upload
mechanisms' audits with ``uploads``, the sequential defences' with ``canaries``).

A cell's record keeps what the report needs as JSON (``records.to_json``) in its ``details``, its
attackers' values as measurements, and the seconds of each stage it ran (unit ``s``). Every random choice is seeded from the config, never from what ran before, so a
cell gives the same numbers whichever cells ran before it in its process: a run resumed after
an interruption (``recprivacy run --resume``) reports exactly what an uninterrupted one does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from recprivacy.config import Config
from recprivacy.experiments.audit import member_users
from recprivacy.experiments.kit import Cell, CellResult, Measurement
from recprivacy.experiments.matrix.cells import Canaries, MatrixCell
from recprivacy.experiments.matrix.central import COLUMNS, Central
from recprivacy.experiments.matrix.mechanisms import mechanism_rows
from recprivacy.experiments.matrix.options import MatrixOptions
from recprivacy.experiments.matrix.records import to_json
from recprivacy.experiments.matrix.sequential import sequential_rows
from recprivacy.experiments.matrix.uploads import Federation
from recprivacy.experiments.matrix.world import Row
from recprivacy.experiments.results import Results
from recprivacy.experiments.runner import new_results
from recprivacy.experiments.train import PreparedData

SYSTEM = STUDY = "matrix"
CENTRAL, UPLOADS = "central", "uploads"


def plan_cells(options: MatrixOptions) -> list[Cell]:
    """Every cell of a run, in the order they run (module docstring)."""
    central = [Cell({"part": "rows"}, CENTRAL),
               *(Cell({"part": "column", "attack": key}, CENTRAL) for key in COLUMNS if options.measures(key))]  # fmt: skip
    uploads = [Cell({"part": "uploads", "method": method}, UPLOADS) for method in ["none", *options.uploads.defences]]
    sequential, mechanisms = Cell({"part": "sequential"}, "sequential"), Cell({"part": "mechanisms"}, "mechanisms")
    if not options.measures("uploads"):
        uploads, mechanisms = [], None
    return [c for c in (*central, *uploads, sequential if options.measures("canaries") else None, mechanisms) if c is not None]


@dataclass
class Alone:
    """The state of a group that shares nothing: where its stage timings go."""

    results: Results


@dataclass
class MatrixGrid:
    """The kit ``Grid`` of the ``matrix`` study: the config, its options, the data with the
    non-members held out and the canaries (both drawn by the driver: the report needs them)."""

    config: Config
    options: MatrixOptions
    data: PreparedData
    canaries: Canaries

    def prepare(self, group: str) -> Central | Federation | Alone:
        """The group's shared state; nothing is trained until a cell needs it."""
        results = new_results(self.config)  # this process's stage timings and seeds
        if group == CENTRAL:
            return Central(self.config, self.options, self.data, self.canaries, results)
        if group == UPLOADS:
            return Federation.of(self.config, self.options, self.data, results)
        return Alone(results)

    def measure(self, cell: Cell, prepared: Central | Federation | Alone) -> CellResult:
        """The cell's JSON details, its measurements and the seconds of each stage it ran."""
        results = prepared.results
        before = dict(results.timings)
        details = self._details(dict(cell.setting), prepared)
        spent = {name: seconds - before.get(name, 0.0) for name, seconds in results.timings.items() if seconds != before.get(name)}
        found = [*self._measurements(cell.setting, details),
                 *(Measurement(SYSTEM, STUDY, cell.setting, name, seconds, self.config.seed, "s") for name, seconds in spent.items())]  # fmt: skip
        if results.seeds:
            details["seeds"] = dict(results.seeds)
        return CellResult(found, details=to_json(details))

    def _details(self, s: dict[str, Any], prepared: Any) -> dict[str, Any]:
        """What the report needs of the cell with setting ``s``, as the matrix's objects."""
        if s["part"] == "rows":
            return {"rows": [w.row() for w in prepared.worlds], "target": type(prepared.target).__name__}
        if s["part"] == "column":
            cells, utilities = prepared.column(s["attack"])
            return {"cells": cells, "utilities": utilities}
        if s["part"] == "uploads":
            return {"pure": prepared.pure_cell()} if s["method"] == "none" else {"row": prepared.defence_row(s["method"])}
        if s["part"] == "sequential":
            with prepared.results.timed("matrix:sequential defences' canaries"):
                claims, utility = sequential_rows(self.data, member_users(self.data), self.options.sequential, self.config.seed,
                                                  self.config.noise)  # fmt: skip
            return {"claims": claims, "utility": utility}
        with prepared.results.timed("matrix:upload audits"):
            return {"rows": mechanism_rows(self.options.mechanism_samples, self.config.seed)}

    def _measurements(self, setting: Any, details: dict[str, Any]) -> list[Measurement]:
        """Each attacker's value (with its interval) of every cell in ``details``, by defence, attack and attacker."""
        cells: list[tuple[str, str, MatrixCell]] = []
        if "cells" in details:
            cells = [(defence, setting["attack"], cell) for defence, cell in details["cells"].items()]
        elif "pure" in details:
            cells = [("none", "uploads", details["pure"])]
        elif "row" in details:
            row: Row = details["row"]
            cells = [(row.spec.key, "uploads", row.cells["uploads"])]
        return [Measurement(SYSTEM, STUDY, {"defence": defence, "attack": attack, "attacker": name}, "value", j.value.value,
                            self.config.seed, interval=(j.value.low, j.value.high))
                for defence, attack, cell in cells
                for name, j in (("frozen", cell.frozen), ("adaptive", cell.adaptive), *cell.beside.items()) if j is not None]  # fmt: skip
