"""The study's tables and texts: Table 2 in the paper's layout (mean ± sd over seeds, the paper's
number beside ours, DIPSGNN's relative improvement over EdgeRand with a paired t-test across
seeds, ``scipy.stats.ttest_rel``, ``*`` for p < 0.01), the same runs with training items masked,
the labelled privacy statements, training time, and how our ordering of the methods compares
with the paper's (Kendall's tau).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from recprivacy.experiments.dipsgnn.collect import MethodRun
from recprivacy.experiments.dipsgnn.options import METHODS
from recprivacy.experiments.dipsgnn.paper import PAPER_METRICS, paper_row, paper_table2
from recprivacy.experiments.results import Results
from recprivacy.metrics.summary import MeanSD, mean_sd


def method_mean_sd(runs: list[MethodRun], metric: str, masked: bool = False) -> MeanSD:
    """Mean and sample sd over seeds (``metrics.summary``) of one metric of one method."""
    return mean_sd((r.masked if masked else r.metrics)[metric] for r in runs)


def improvement(ours: list[MethodRun], base: list[MethodRun], metric: str) -> tuple[float, float]:
    """Relative improvement (%) of the seed means and the paired t-test p-value over seeds."""
    by_seed = {r.seed: r.metrics[metric] for r in base}
    pairs = [(r.metrics[metric], by_seed[r.seed]) for r in ours if r.seed in by_seed]
    a, b = np.array(pairs).T if pairs else (np.zeros(0), np.zeros(0))
    rel = 100 * (a.mean() - b.mean()) / b.mean() if len(b) and b.mean() > 0 else math.nan
    p = float(stats.ttest_rel(a, b).pvalue) if len(a) > 1 and np.any(a != b) else math.nan
    return float(rel), p


def add_table2(results: Results, runs: dict[str, list[MethodRun]], column: str | None, seeds: int) -> list[str]:
    """Table 2 layout (means ± std, paper beside ours), the Improve row, the masked variant."""
    head = ["type", "method"] + [f"{m} (ours)" for m in PAPER_METRICS] + [f"{m} (paper {column or 'n/a'})" for m in PAPER_METRICS]
    rows = []
    for name, method_runs in runs.items():
        cells = [method_mean_sd(method_runs, m).format(2) for m in PAPER_METRICS]
        rows.append(list(METHODS[name]) + cells + paper_row(column, name))
    if "DIPSGNN" in runs and "EdgeRand" in runs:
        ours = [improvement(runs["DIPSGNN"], runs["EdgeRand"], m) for m in PAPER_METRICS]
        paper = paper_table2(column)
        paper_imp = [100 * (d - e) / e for d, e in zip(paper["DIPSGNN"], paper["EdgeRand"])] if paper else [None] * 4
        rows.append(["", "Improve (DIPSGNN vs EdgeRand)"]
                    + [f"{rel:+.2f}%{'*' if p < 0.01 else ''} (p={p:.2g})" for rel, p in ours]
                    + [None if v is None else f"{v:+.2f}%" for v in paper_imp])
    caption = (f"Recall/MRR x100 over all items, seen items not masked (paper protocol); mean ± std over {seeds} seed(s); "
               "* = paired t-test over seeds p < 0.01")
    masked_rows = [[METHODS[n][1]] + [method_mean_sd(r, m, masked=True).mean for m in PAPER_METRICS] for n, r in runs.items()]
    return [
        results.add_table("table2", head, rows, caption),
        results.add_table("table2_masked", ["method"] + list(PAPER_METRICS), masked_rows,
                          "Same runs with each user's training items masked (recprivacy's convention), means x100"),
    ]


def add_privacy_table(results: Results, runs: dict[str, list[MethodRun]]) -> str:
    """One row per method and labelled statement: epsilon (mean and range over seeds)."""
    rows = []
    for name, method_runs in runs.items():
        for label, first in method_runs[0].statements.items():
            eps = np.array([r.statements[label].epsilon for r in method_runs])
            value = None if not first.formal else float(eps.mean())
            spread = "" if not first.formal or eps.min() == eps.max() else f"{eps.min():.4g}-{eps.max():.4g}"
            rows.append([METHODS[name][1], label, value, spread, first.delta, first.setting, first.accountant,
                         first.scope, "; ".join(first.notes), first.noise])
    return results.add_table("privacy", ["method", "guarantee", "epsilon", "range over seeds", "delta", "setting",
                                         "accountant", "scope", "notes", "noise"], rows,
                             "Labelled privacy statements (epsilon = n/a: no formal guarantee)")


def add_timing_table(results: Results, runs: dict[str, list[MethodRun]]) -> str:
    """Median seconds per epoch, epochs run and fit seconds of each method over seeds."""
    rows = [[METHODS[n][1], float(np.median([r.seconds_per_epoch for r in rs])), float(np.median([r.epochs for r in rs])),
             float(np.median([r.fit_seconds for r in rs]))] for n, rs in runs.items()]
    return results.add_table("timing", ["method", "seconds per epoch (median)", "epochs run (median)", "fit seconds (median)"],
                             rows, "Training time on this machine")


def ordering_text(runs: dict[str, list[MethodRun]], column: str | None) -> str:
    """How our Recall@20 ordering of the methods compares with the paper's (Kendall's tau)."""
    paper = paper_table2(column)
    common = [m for m in runs if m in paper]
    if len(common) < 3:
        return "Too few methods with a paper number to compare orderings."
    ours = [method_mean_sd(runs[m], "recall@20").mean for m in common]
    theirs = [paper[m][0] for m in common]
    tau = stats.kendalltau(ours, theirs).statistic
    flips = [f"{a} vs {b}" for i, a in enumerate(common) for b in common[i + 1:]
             if (ours[i] - ours[common.index(b)]) * (theirs[i] - theirs[common.index(b)]) < 0]
    order = " > ".join(m for _, m in sorted(zip(ours, common), reverse=True))
    return (f"Our Recall@20 ordering: {order}. Kendall's tau with the paper's {column} ordering: {tau:.2f}"
            + (f"; pairs ordered differently: {', '.join(flips)}." if flips else "; no pair is ordered differently."))


def gap_text(runs: dict[str, list[MethodRun]]) -> str:
    """DIPSGNN's Recall@20 gap to non-private SR-GNN, for the correct noise and the code's."""
    if "SRGNN" not in runs:
        return ""
    base = method_mean_sd(runs["SRGNN"], "recall@20").mean
    parts = [f"{METHODS[m][1]}: {method_mean_sd(runs[m], 'recall@20').mean:.2f} vs {base:.2f} "
             f"({100 * (method_mean_sd(runs[m], 'recall@20').mean - base) / base:+.1f}%)"
             for m in ("DIPSGNN", "DIPSGNN_legacy") if m in runs]
    if not parts:
        return ""
    paper = paper_table2("ML-1M")
    return (f"Recall@20 gap to non-private SR-GNN (paper on ML-1M: {paper['DIPSGNN'][0]:.2f} vs {paper['SRGNN'][0]:.2f}): "
            + "; ".join(parts) + ".")
