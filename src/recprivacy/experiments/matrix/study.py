"""The ``matrix`` study: one dataset, one target recommender, every attack against every
defence that changes what the attack observes.

Steps (``MatrixOptions``):

1. Prepare the data, hold out a share of users (the non-members that popularity
   randomization serves), draw the canaries and plant the included ones in the training data
   (``cells.Canaries``), and train the target on it.
2. Build one *world* per defence: the undefended target; popularity randomization (paper 001:
   non-members get random popular lists); exposure perturbation (paper 000: random positions
   of every logged slate replaced by uniform items, ratio ``perturbation_ratio``); DPMF (an
   item-factor objective-perturbation model in place of the target, at each of
   ``dpmf_epsilons``); DP-SGD (``defenses.dp_engine.make_private``: BPR-MF trained by
   user-level DP-SGD in place of the target, at each of ``dpsgd_epsilons``, engine settings
   ``dpsgd``); UPC-SDG (paper 003: the target retrained on a synthetic release of the
   training data, one row per γ, ``release``). Each world has its privacy statement and its
   utility cost: Recall@10 on the members' test split against the undefended target for a
   replaced model; the slates' next-item recall for exposure perturbation; none for members
   under popularity randomization (their lists are unchanged). The upload defences of paper 004
   get rows of their own federated system, with the uploads column (``uploads``).
3. Run every applicable cell (``plan.not_applicable``), frozen and adaptive (``cells``;
   membership in ``membership``, exposure in ``exposure``, recovery of the release in
   ``release``, interaction-level membership in ``interactions``); judge
   each attacker against its blind guess (``metrics.verdict.judge_attack``) and each defence by
   the change it causes in the stronger attacker's success (``metrics.verdict.judge_defence``:
   *backfires* when the attack gains): the defended value minus the undefended one as the
   matrix prints them, with an unpaired interval (``cells.defence_change``).
4. For every world with a DP claim, the claimed epsilon beside the canary audit's measured
   lower bounds (ROC with Clopper-Pearson, and one run), flagged when a bound exceeds the claim;
   and per-release audits of the federated upload defences (``mechanisms``) with
   ``mechanism_samples`` uploads; and the sequential-model defences of paper 002 (DIPSGNN,
   DP-SGD, EdgeRand), each trained once on the data with its own canaries (``sequential``,
   reduced training).

The work runs on the study kit (``matrix.grid``): the central rows, each central column, each
federated system of the uploads column, the sequential defences and the upload mechanisms'
audits are cells stored in the run folder as they finish, so ``recprivacy run --resume RUN_DIR``
continues an interrupted run and ``--executor ray`` runs the groups side by side. The driver
prepares the data and draws the canaries (cheap, seeded), runs the cells, rebuilds the report's
rows from every cell's record (``records``) and renders. ``columns`` measures only some columns
(e.g. one new column on a large dataset without the rest): the rows are built all the same, and
the cells of the other columns read "not measured".
"""


from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from recprivacy.config import Config
from recprivacy.experiments.audit import member_users
from recprivacy.experiments.kit import Bench, Cell, CellResult
from recprivacy.experiments.matrix.cells import Canaries, MatrixCell
from recprivacy.experiments.matrix.central import COLUMNS
from recprivacy.experiments.matrix.grid import MatrixGrid, plan_cells
from recprivacy.experiments.matrix.options import MatrixOptions
from recprivacy.experiments.matrix.records import Outcome, from_json, pure_fedrec_cells, upload_row_cells
from recprivacy.experiments.matrix.render import render
from recprivacy.experiments.matrix.world import Row
from recprivacy.experiments.results import Results
from recprivacy.experiments.runner import new_results
from recprivacy.experiments.train import hold_out_users, prepare_data

#: a cell of a column the run did not select (``MatrixOptions.columns``)
NOT_SELECTED = "not measured: the run selected other columns (study_options.columns)"


def run_matrix(config: Config, options: MatrixOptions, bench: Bench | None = None) -> Results:
    """The ``matrix`` study (module docstring); its cells run on ``bench`` (default: in this
    process, records in memory; ``recprivacy run`` passes the run folder's store)."""
    results = new_results(config)
    data = hold_out_users(prepare_data(config, results), options.holdout_users, config.seed)
    canaries = Canaries.draw(data.full, member_users(data), options.canaries, config.seed)
    cells = plan_cells(options)
    found = (bench or Bench()).run(MatrixGrid(config, options, data, canaries), cells)
    outcome = assemble(cells, found, options, results)
    with results.timed("matrix:render"):
        render(results, outcome, options, canaries)
    return results


def assemble(cells: Sequence[Cell], found: Mapping[str, CellResult], options: MatrixOptions, results: Results) -> Outcome:
    """The report's rows and tables from every cell's record (``grid.MatrixGrid.measure``); the
    stage seconds of the cells add up in ``results.timings``, their seeds go to ``results.seeds``."""
    parts: dict[str, dict[str, Any]] = {}
    for cell in cells:
        record = found[cell.key]
        for m in (m for m in record.measurements if m.unit == "s"):
            results.timings[m.metric] = results.timings.get(m.metric, 0.0) + m.value
        details = from_json(record.details)
        results.seeds.update(details.pop("seeds", {}))
        parts["/".join(str(v) for v in cell.setting.values())] = details
    rows: list[Row] = parts["rows"]["rows"]
    for key in COLUMNS:
        column = parts.get(f"column/{key}", {"cells": {}, "utilities": {}})
        for row in rows:
            row.cells[key] = column["cells"].get(row.spec.key) or MatrixCell(reason=NOT_SELECTED)
            row.utility = column["utilities"].get(row.spec.key, row.utility)
    pure_fedrec_cells(parts["uploads/none"]["pure"] if "uploads/none" in parts else MatrixCell(reason=NOT_SELECTED), rows)
    uploads: list[Row] = [parts[f"uploads/{method}"]["row"] for method in options.uploads.defences if options.measures("uploads")]
    for row in uploads:
        upload_row_cells(row)
    sequential = parts.get("sequential", {"claims": [], "utility": []})
    return Outcome([*rows, *uploads], parts["rows"]["target"], (sequential["claims"], sequential["utility"]),
                   parts.get("mechanisms", {"rows": []})["rows"])
