"""The sweeps of paper 002's Figs. 3-6: Recall@20 of the compared methods against one parameter
(eps2, eps1, the propagation steps T = ``n_steps`` of the backbone, or the row norm C), each point
run over the study's seeds. Runs at the study's own setting are reused, not repeated.
"""

from __future__ import annotations

from typing import Any

from recprivacy.experiments.dipsgnn.collect import MethodRun, run_methods
from recprivacy.experiments.dipsgnn.options import METHODS, DIPSGNNOptions, SweepSpec
from recprivacy.experiments.dipsgnn.render import method_mean_sd
from recprivacy.experiments.dipsgnn.sequences import SequenceData
from recprivacy.experiments.results import Results
from recprivacy.report.figures import line_plot


def sweep_default(parameter: str, options: DIPSGNNOptions, backbone: dict[str, Any]) -> float:
    """The study's own value of a swept parameter (T = ``n_steps`` lives in the backbone)."""
    return backbone.get("n_steps", 1) if parameter == "n_steps" else getattr(options, parameter)


def sweep_point(parameter: str, value: float, options: DIPSGNNOptions,
                backbone: dict[str, Any]) -> tuple[DIPSGNNOptions, dict[str, Any]]:
    """Options and backbone with ``parameter`` set to ``value`` (one point of Figs. 3-6)."""
    if parameter == "n_steps":
        return options, {**backbone, "n_steps": int(value)}
    return options.model_copy(update={parameter: value}), backbone


def run_sweep(sweep: SweepSpec, data: SequenceData, options: DIPSGNNOptions, backbone: dict[str, Any],
              results: Results, done: dict[str, list[MethodRun]]) -> tuple[str, str]:
    """Recall@20 of the sweep's methods at each value (table and figure); ``done`` holds the
    runs at the study's own settings, reused at the sweep point equal to them."""
    curves: dict[str, list[float]] = {m: [] for m in sweep.methods}
    default = sweep_default(sweep.parameter, options, backbone)
    for value in sweep.values:
        point_options, point_backbone = sweep_point(sweep.parameter, value, options, backbone)
        todo = [m for m in sweep.methods if not (value == default and m in done)]
        runs = {**{m: done[m] for m in sweep.methods if m not in todo},
                **run_methods(todo, data, point_options, point_backbone, f"sweep {sweep.parameter}={value:g}")}
        for m in sweep.methods:
            mean = method_mean_sd(runs[m], "recall@20").mean
            curves[m].append(mean)
            results.metrics[f"sweep/{sweep.parameter}={value:g}/{m}/recall@20"] = mean
    key = f"sweep-{sweep.parameter}"
    rows = [[v] + [curves[m][i] for m in sweep.methods] for i, v in enumerate(sweep.values)]
    table = results.add_table(key, [sweep.parameter] + [f"{m} Recall@20" for m in sweep.methods], rows,
                              f"Recall@20 (x100, mean over {len(options.seeds)} seed(s)) against {sweep.parameter}")
    png = line_plot({METHODS[m][1]: (sweep.values, curves[m]) for m in sweep.methods}, sweep.parameter, "Recall@20 (%)",
                    markers=True)
    return table, results.add_figure(key, png, f"Recall@20 against {sweep.parameter} (paper Figs. 3-6)")
