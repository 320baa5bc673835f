"""The ``membership`` study's renderer: one object that writes tables, figures and metrics.

``Renderer`` holds the results being built, the options, the datasets and what the seeds
collected; the experiments' renderers (:mod:`.render_grids`, :mod:`.render_sweeps`) call its
helpers. Every attack table shows our ROC AUC (threshold-free, from the attack's member
probability) with its standard deviation over seeds, our balanced accuracy at the 0.5
threshold (the quantity the paper calls "AUC") and the paper's number beside it.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import numpy as np

from recprivacy.experiments.membership.lab import AttackSpec
from recprivacy.experiments.membership.collect import Collected
from recprivacy.experiments.membership.options import MembershipOptions
from recprivacy.experiments.membership.plan import EXPERIMENTS, base_spec
from recprivacy.experiments.results import Results
from recprivacy.metrics.attack import roc_auc
from recprivacy.metrics.intervals import roc_band
from recprivacy.report.figures import line_plot, scatter_plot

BAL = "bal. acc. (paper's 'AUC')"
LONG_COLUMNS = ["setting", "variant", "ROC AUC", "± sd", BAL, "TPR@0.1%FPR", "TPR@1%FPR", "advantage",
                "precision", "recall", "seeds", "MLP restarts (mean)"]  # fmt: skip


class Renderer:
    """Writes one experiment at a time into ``results`` (sections, tables, figures, metrics)."""

    def __init__(self, results: Results, options: MembershipOptions, datasets: list[str], c: Collected) -> None:
        self.results = results
        self.o = options
        self.datasets = datasets
        self.c = c

    # ------------------------------------------------------------------ helpers
    def variant(self, spec: AttackSpec) -> str:
        """What distinguishes ``spec`` from its dataset's default Assumption-I setting."""
        base = base_spec(self.o, *spec.target)
        fields = ("k", "n_factors", "weighting", "feature", "attack", "defense", "shadow_fraction", "protocol")
        parts = [f"{name}={getattr(spec, name)}" for name in fields if getattr(spec, name) != getattr(base, name)]
        return ", ".join(parts).replace("n_factors", "l")

    def metric(self, spec: AttackSpec, name: str) -> float:
        return self.c.stat(spec, name)[0]

    def store(self, experiment: str, spec: AttackSpec) -> None:
        """Means over seeds of the headline metrics under ``<experiment>/<code>[/<variant>]/``."""
        key = "/".join(filter(None, [experiment, spec.code, self.variant(spec).replace(", ", ";")]))
        for name in ("auc", "balanced_accuracy", "tpr@0.1%fpr", "tpr@1%fpr", "advantage"):
            self.results.metrics[f"{key}/{name}"] = self.metric(spec, name)
        self.results.metrics[f"{key}/auc_sd"] = self.c.stat(spec, "auc")[1]

    def long_row(self, spec: AttackSpec) -> list[Any]:
        auc, sd = self.c.stat(spec, "auc")
        names = ("balanced_accuracy", "tpr@0.1%fpr", "tpr@1%fpr", "advantage", "precision", "recall")
        values = [self.metric(spec, m) for m in names]
        restarts = self.metric(spec, "attack_restarts")
        return [spec.code, self.variant(spec) or "default", auc, sd, *values, len(self.c.reports[spec]), restarts]

    def section(self, name: str, text: str, tables: list[str], figures: list[str] = ()) -> None:
        self.results.add_section(EXPERIMENTS[name], text, tables, list(figures))

    def table(self, name: str, columns: list[str], rows: list[list[Any]], caption: str) -> str:
        return self.results.add_table(f"membership-{name}", columns, rows, caption)

    def figure(self, name: str, png: bytes, caption: str) -> str:
        return self.results.add_figure(f"membership-{name}", png, caption)

    def seeds_note(self) -> str:
        n = len(self.c.seeds)
        return f"Mean over {n} seed{'s' if n > 1 else ''} ({', '.join(map(str, self.c.seeds))})"

    # ------------------------------------------------------------------ figures
    def roc_figure(self, name: str, specs: list[AttackSpec], caption: str) -> str:
        """ROC curves of ``specs`` (first seed) on log-log axes with their bands and the blind-guess diagonal."""
        curves = {f"{spec.code} {self.variant(spec)}".strip(): self.c.roc[spec] for spec in specs}
        return self.figure(name, roc_png(curves), f"{caption} {ROC_BAND} Zero rates are drawn at half the smallest non-zero FPR.")

    def embedding_figure(self, name: str, spec: AttackSpec, caption: str) -> str:
        points, labels = self.c.embeddings[spec]
        groups = {"members": (points[labels == 1, 0], points[labels == 1, 1]),
                  "non-members": (points[labels == 0, 0], points[labels == 0, 1])}  # fmt: skip
        method = "t-SNE" if self.o.embedding == "tsne" else "PCA"
        png = scatter_plot(groups, f"{method} 1", f"{method} 2", f"{spec.code} {self.variant(spec)}".strip(),
                           colors={"members": "red", "non-members": "blue"})  # fmt: skip
        return self.figure(name, png, caption)


def roc_png(curves: dict[str, tuple[np.ndarray, np.ndarray]], baselines: Collection[str] = ()) -> bytes:
    """ROC curves ``label -> (labels, scores)`` on log-log axes, the ``baselines`` dashed, the
    blind-guess diagonal, and a pointwise 95% stratified-bootstrap band over the targets
    (``intervals.roc_band``) around the strongest attack and the strongest baseline (by ROC AUC);
    rates of zero are drawn at half the smallest resolvable FPR so they stay on the axes."""
    floor = min(1.0 / max(int((labels == 0).sum()), 1) for labels, _ in curves.values()) / 2
    grid = np.logspace(np.log10(floor), 0, 120)
    series: dict[str, tuple] = {}
    bands: dict[str, tuple] = {}
    banded = _strongest(curves, baselines)
    for label, (labels, scores) in curves.items():
        tpr, low, high = roc_band(labels, scores, grid)
        series[label] = (grid, np.maximum(tpr, floor))
        if label in banded:
            bands[label] = (np.maximum(low, floor), np.maximum(high, floor))
    series["blind guess"] = (grid, grid)
    return line_plot(series, "false positive rate (share of non-members flagged)", "true positive rate (share of members found)",
                     logx=True, logy=True, bands=bands, size=(5.5, 4.2),
                     styles={"blind guess": BLIND, **{b: {"linestyle": "--"} for b in baselines}})  # fmt: skip


def _strongest(curves: dict[str, tuple[np.ndarray, np.ndarray]], baselines: Collection[str]) -> set[str]:
    """The attack and the baseline with the highest ROC AUC."""
    auc = {label: roc_auc(labels, scores) for label, (labels, scores) in curves.items()}
    groups = [[k for k in auc if k not in baselines], [k for k in auc if k in baselines]]
    return {max(group, key=auc.__getitem__) for group in groups if group}


BLIND = {"color": "black", "linestyle": ":", "linewidth": 1}
ROC_BAND = ("Shaded: pointwise 95% bands of the strongest attack and the strongest baseline (by ROC AUC), stratified "
            "bootstrap over the users of the first seed (200 resamples).")  # fmt: skip
