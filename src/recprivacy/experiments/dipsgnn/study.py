"""The ``dipsgnn`` study: every method at every seed (Table 2 and the ablation) and every sweep
point, as study-kit cells (:mod:`.cells`), then the privacy and timing tables and the sweeps; and :class:`DIPSGNNStudy`, the same steps one
(method, seed) at a time for the benchmarks that resume long grids.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from recprivacy.config import Config, validate_options
from recprivacy.errors import ConfigError
from recprivacy.experiments.dipsgnn.cells import DIPSGNNGrid, gather, method_cell, method_run, study_cells
from recprivacy.experiments.dipsgnn.collect import MethodRun
from recprivacy.experiments.dipsgnn.evaluate import evaluate_samples
from recprivacy.experiments.dipsgnn.methods import backbone_params, build_method
from recprivacy.experiments.dipsgnn.options import DIPSGNNOptions
from recprivacy.experiments.dipsgnn.paper import PAPER_COLUMN_OF, PAPER_METRICS
from recprivacy.experiments.dipsgnn.render import (
    add_privacy_table,
    add_table2,
    add_timing_table,
    gap_text,
    method_mean_sd,
    ordering_text,
)
from recprivacy.experiments.dipsgnn.sequences import SequenceData, prepare_sequences
from recprivacy.experiments.dipsgnn.sweep import sweep_default, sweep_outputs, sweep_point
from recprivacy.experiments.kit import Bench
from recprivacy.experiments.results import Results
from recprivacy.experiments.runner import new_results
from recprivacy.models.base import Recommender


@dataclass(frozen=True)
class DIPSGNNStudy:
    """The study's public entry for scripts that run it one (method, seed) at a time (the
    benchmarks resume long grids that way): the prepared data, the options and the backbone,
    and the study's own steps on them, down to its kit cells (``grid``, ``cell``,
    ``method_run``). A sweep point is ``(parameter, value)`` (Figs. 3-6)."""

    config: Config
    options: DIPSGNNOptions
    backbone: dict[str, Any]
    data: SequenceData | None = None

    @classmethod
    def load(cls, config: Config, prepare: bool = True) -> "DIPSGNNStudy":
        """Validate the study options and, with ``prepare``, run steps 1-2 of the protocol
        (package docstring; without, the study can only summarise and name its defaults)."""
        options = validate_options(DIPSGNNOptions, config.study_options)
        data = prepare_sequences(config, options, new_results(config)) if prepare else None
        return cls(config, options, backbone_params(config), data)

    @property
    def prepared(self) -> SequenceData:
        if self.data is None:
            raise ConfigError("this DIPSGNN study was loaded without its data (prepare=False)")
        return self.data

    def at(self, point: tuple[str, float] | None) -> tuple[DIPSGNNOptions, dict[str, Any]]:
        """Options and backbone of a sweep point (the study's own without one)."""
        return (self.options, self.backbone) if point is None else sweep_point(*point, self.options, self.backbone)

    def model(self, method: str, seed: int, point: tuple[str, float] | None = None) -> Recommender:
        """The unfitted recommender of ``method`` (a Table 2 row or ablation)."""
        return build_method(method, *self.at(point), seed)

    def evaluate(self, model: Recommender) -> tuple[dict[str, float], dict[str, float]]:
        """Test metrics x100 of a fitted model: paper protocol and training items masked."""
        data = self.prepared
        return evaluate_samples(model, data.test_samples, data.train.to_csr(), data.full.n_items, self.options.max_len)

    @property
    def grid(self) -> DIPSGNNGrid:
        """The study's kit grid on the prepared data: run ``cell(...)`` cells on a ``kit.Bench``
        (any store and executor) and read each result back with ``method_run``."""
        return DIPSGNNGrid(self.config.name, self.prepared, self.options, self.backbone)

    cell = staticmethod(method_cell)
    method_run = staticmethod(method_run)

    def run(self, method: str, seed: int, point: tuple[str, float] | None = None) -> MethodRun:
        """Fit ``method`` at ``seed`` (at a sweep point) and evaluate it (step 3-4): the study's
        cell, measured in this process."""
        cell = method_cell(method, seed, point)
        return method_run(cell, self.grid.measure(cell, None))

    def default(self, parameter: str) -> float:
        """The study's own value of a swept parameter."""
        return sweep_default(parameter, self.options, self.backbone)


def run_dipsgnn(config: Config, options: DIPSGNNOptions, bench: Bench | None = None) -> Results:
    """The ``dipsgnn`` study (package docstring); its cells run on ``bench`` (default: in this
    process, records in memory; ``recprivacy run`` passes the run folder's store)."""
    backbone = backbone_params(config)
    results = new_results(config)
    data = prepare_sequences(config, options, results)
    column = options.paper_column or PAPER_COLUMN_OF.get(config.dataset.name)
    cells = study_cells(options, backbone, data.train.ratings is not None)
    with results.timed("methods"):
        found = (bench or Bench()).run(DIPSGNNGrid(results.name, data, options, backbone), cells)
    got = gather(cells, [found[c.key] for c in cells], options.methods)
    runs = got.runs
    for name, method_runs in runs.items():
        for metric in PAPER_METRICS:
            summary = method_mean_sd(method_runs, metric)
            results.metrics[f"{name}/{metric}"], results.metrics[f"{name}/{metric}/std"] = summary.mean, summary.sd
        for label, s in method_runs[0].statements.items():
            if s.formal:
                results.metrics[f"{name}/epsilon/{label}"] = float(np.mean([r.statements[label].epsilon for r in method_runs]))
        results.metrics[f"{name}/seconds_per_epoch"] = float(np.median([r.seconds_per_epoch for r in method_runs]))
    results.seeds.update({f"seed{i}": s for i, s in enumerate(options.seeds)})
    tables = add_table2(results, runs, column, len(options.seeds))
    n = data.test_samples
    text = [
        f"Dataset `{data.full.name}`: {data.full.n_users} users, {data.full.n_items} items, {len(data.full)} interactions "
        f"after preprocessing and keeping the last {options.max_len} per user; {len(data.train)} training and "
        f"{len(data.test)} test interactions, {len(n)} test samples ({options.test_context}).",
        gap_text(runs), ordering_text(runs, column),
        "User features: " + ("none (user-id embeddings; the paper's '-U' variants)" if options.features is None else
                             ", ".join(options.features.numeric + options.features.categorical)) + ".",
    ]
    results.add_section("DIPSGNN: comparative results (paper Table 2)", "\n\n".join(t for t in text if t), tables)
    results.add_section("Privacy statements", "Every statement as its model reports it; the whole-run figures count "
                        "every release of one transition over training prefixes, epochs and both adjacency directions.",
                        [add_privacy_table(results, runs)])
    results.add_section("Training time", "", [add_timing_table(results, runs)])
    for sweep in options.sweeps:
        table, figure = sweep_outputs(sweep, options, backbone, results, runs, got.points)
        results.add_section(f"Sweep over {sweep.parameter}", "", [table], [figure])
    return results
