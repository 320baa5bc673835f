"""The sweeps of paper 002's Figs. 3-6: Recall@20 of the compared methods against one parameter
(eps2, eps1, the propagation steps T = ``n_steps`` of the backbone, or the row norm C), each point
run over the study's seeds (the ``sweep`` cells of :mod:`.cells`). Runs at the study's own
setting are reused, not repeated.
"""

from __future__ import annotations

from typing import Any

from recprivacy.experiments.dipsgnn.collect import MethodRun
from recprivacy.experiments.dipsgnn.options import METHODS, DIPSGNNOptions, SweepSpec
from recprivacy.experiments.dipsgnn.render import method_mean_sd
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


def sweep_outputs(sweep: SweepSpec, options: DIPSGNNOptions, backbone: dict[str, Any], results: Results,
                  runs: dict[str, list[MethodRun]], points: dict[tuple[str, float], dict[str, list[MethodRun]]]) -> tuple[str, str]:
    """Recall@20 of the sweep's methods at each value (table and figure): ``runs`` are Table 2's,
    taken at the point equal to the study's own setting, ``points`` the runs of the other points
    (``cells.gather``)."""
    methods = [m for m in sweep.methods if m in runs or any(m in p for p in points.values())]
    curves: dict[str, list[float]] = {m: [] for m in methods}
    default = sweep_default(sweep.parameter, options, backbone)
    for value in sweep.values:
        ran = points.get((sweep.parameter, value), {})
        for m in methods:
            mean = method_mean_sd(runs[m] if value == default and m in runs else ran[m], "recall@20").mean
            curves[m].append(mean)
            results.metrics[f"sweep/{sweep.parameter}={value:g}/{m}/recall@20"] = mean
    key = f"sweep-{sweep.parameter}"
    rows = [[v] + [curves[m][i] for m in methods] for i, v in enumerate(sweep.values)]
    table = results.add_table(key, [sweep.parameter] + [f"{m} Recall@20" for m in methods], rows,
                              f"Recall@20 (x100, mean over {len(options.seeds)} seed(s)) against {sweep.parameter}")
    png = line_plot({METHODS[m][1]: (sweep.values, curves[m]) for m in methods}, sweep.parameter, "Recall@20 (%)",
                    markers=True)
    return table, results.add_figure(key, png, f"Recall@20 against {sweep.parameter} (paper Figs. 3-6)")
