"""The ``upcsdg`` study's figures: Figure 2 (utility against γ), Figure 4 (similarity of the
replacements against γ), and two privacy-utility curves, one per attack (recovery and
membership), each point one γ of a k."""

from __future__ import annotations

import math
from typing import Any

from recprivacy.experiments.results import Results
from recprivacy.experiments.upcsdg.measurements import Measurements
from recprivacy.experiments.upcsdg.options import CUTOFF, UPCSDGOptions
from recprivacy.report.figures import line_plot


def grid_figures(results: Results, m: Measurements, options: UPCSDGOptions) -> list[str]:
    """Figure 2 (utility vs γ), Figure 4 (similarity vs γ) and the privacy-utility curve."""
    gammas = options.grid_gamma

    def series(column: str, kind: str, **where: Any) -> dict[str, tuple[list[float], list[float]]]:
        return {f"k = {k}": (gammas, [m.mean(column, kind, "UPC-SDG", k, g, **where) or math.nan for g in gammas])
                for k in options.grid_k}

    at = options.attack_k
    curve = {f"k = {k}": ([m.mean("recall", "recovery", "UPC-SDG", k, g, attack="blind") or math.nan for g in gammas],
                          [m.mean("recall", "utility", "UPC-SDG", k, g, model="bpr") or math.nan for g in gammas])
             for k in options.grid_k}
    return [
        results.add_figure("fig2_utility", line_plot(series("recall", "utility", model="bpr"), "γ", f"BPR-MF Recall@{CUTOFF}",
                                                     markers=True), "Figure 2: BPR-MF on synthetic data over k and γ."),
        results.add_figure("fig4_similarity", line_plot(series("mean_f_sim", "release"), "γ", "mean f_sim (replacement, original)",
                                                        markers=True), "Figure 4: mean similarity of replacements to their originals."),
        results.add_figure("privacy_utility", line_plot(curve, f"recovery Recall@{at} (blind attacker)", f"BPR-MF Recall@{CUTOFF}",
                                                        markers=True), "Privacy-utility: each point is one γ; lower-left is more private."),
    ]


def membership_figure(results: Results, m: Measurements, options: UPCSDGOptions) -> str:
    """Privacy-utility with the membership attack: ROC AUC against BPR-MF Recall@20."""
    gammas = options.grid_gamma
    curve = {f"k = {k}": ([m.mean("auc", "membership", "UPC-SDG", k, g) or math.nan for g in gammas],
                          [m.mean("recall", "utility", "UPC-SDG", k, g, model="bpr") or math.nan for g in gammas])
             for k in options.grid_k}
    original = m.mean("auc", "membership", "original"), m.mean("recall", "utility", "original", model="bpr")
    if None not in original:
        curve["original data"] = ([original[0]], [original[1]])
    png = line_plot(curve, "membership ROC AUC", f"BPR-MF Recall@{CUTOFF}", markers=True)
    return results.add_figure("privacy_utility_membership", png, "Privacy-utility with membership inference: each point is one γ.")
