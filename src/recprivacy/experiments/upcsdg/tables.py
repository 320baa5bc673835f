"""The ``upcsdg`` study's tables: Table 2 and Table 3 in the paper's layout (the paper's rows
beside ours, ``paper.paper_cells``), retention, the k x γ grid, the membership attack and the
long table of every measurement."""

from __future__ import annotations

import math

import pandas as pd

from recprivacy.experiments.results import Results
from recprivacy.experiments.upcsdg.measurements import Measurements, ratio, setting
from recprivacy.experiments.upcsdg.options import ATTACKS, CUTOFF, LABELS, METRICS, VARIANTS, UPCSDGOptions
from recprivacy.experiments.upcsdg.paper import paper_cells


def table2(results: Results, m: Measurements, options: UPCSDGOptions, dataset: str) -> str:
    """Table 2 in the paper's layout: ours, then the paper's ``paper_dataset`` rows."""
    models = ["random", *options.models]
    columns = ["Dataset"] + [f"{LABELS.get(n, n)} {x}" for n in models for x in ("PR", "Recall", "NDCG")]
    rows = []
    for name in ("original", "-", "+"):
        label = "" if name == "original" else name.replace("-", "−")
        variant, k, gamma = setting(name)
        rows.append([f"{dataset}{label} (ours)"] + [m.mean(x, "utility", variant, k, gamma, model=n)
                                                    for n in models for x in METRICS])
        rows.append([f"{options.paper_dataset.title()}{label} (paper)"] + [
            paper_cells("Table 2", f"{options.paper_dataset}/{name}/{n}").get(x) for n in models for x in METRICS])
    return results.add_table("table2", columns, rows, f"PR, Recall and NDCG at {CUTOFF} (full ranking); "
                             f"−: k = 0.8, γ = 0.1; +: k = 0.2, γ = 0.9; ours are means over seeds")


def retention_table(results: Results, m: Measurements, options: UPCSDGOptions) -> str:
    """Recall@20 on synthetic data as a share of the same model's Recall@20 on the original."""
    rows = []
    for name in options.models:
        original = m.mean("recall", "utility", "original", model=name)
        ours = [ratio(m.mean(column, "utility", *setting(s), model=name), original)
                for column in ("recall", "recall_history") for s in ("+", "-")]
        paper = {s: paper_cells("Table 2", f"{options.paper_dataset}/{s}/{name}") for s in ("original", "+", "-")}
        theirs = [ratio(paper[s]["recall"], paper["original"]["recall"]) if paper[s] else None for s in ("+", "-")]
        rows.append([LABELS.get(name, name), *ours, *theirs])
    columns = ["model", "+ ours", "− ours", "+ ours, history masked", "− ours, history masked",
               f"+ paper ({options.paper_dataset})", f"− paper ({options.paper_dataset})"]
    return results.add_table("retention", columns, rows, "Recall@20 retained: synthetic / original, per model")


def table3(results: Results, m: Measurements, options: UPCSDGOptions) -> str:
    """Table 3: the ablations at ``ablation_gamma`` with BPR-MF, ours and the paper's (Office)."""
    ks = options.ablation_k
    columns = ["Variant"] + [f"k={k} {x}" for k in ks for x in ("PR", "Recall", "NDCG")]
    rows = []
    for variant in VARIANTS:
        rows.append([f"{variant} (ours)"] + [m.mean(x, "utility", variant, k, options.ablation_gamma, model="bpr")
                                             for k in ks for x in METRICS])
        rows.append([f"{variant} (paper, Office)"] + [paper_cells("Table 3", f"{variant}/k={k}").get(x) for k in ks for x in METRICS])
    return results.add_table("table3", columns, rows, f"BPR-MF on synthetic data, γ = {options.ablation_gamma}; "
                             "_s random selection, _r random replacement, _f fixed similarity 0.9")


def grid_table(results: Results, m: Measurements, options: UPCSDGOptions) -> str:
    """One row per (k, γ): utility, similarity and recovery."""
    original = m.mean("recall", "utility", "original", model="bpr")
    at = options.attack_k
    columns = ["k", "gamma", f"BPR Recall@{CUTOFF}", "std", "retention", "retention, history masked", "mean f_sim",
               "mean cosine", "dropped: no candidate within gamma", "replacements held out", *[f"recovery R@{at} {name}" for name in ATTACKS],
               "seconds"]
    rows = []
    for k in options.grid_k:
        for gamma in options.grid_gamma:
            recall = m.mean("recall", "utility", "UPC-SDG", k, gamma, model="bpr")
            rows.append([k, gamma, recall, m.std("recall", "utility", "UPC-SDG", k, gamma, model="bpr"),
                         ratio(recall, original),
                         ratio(m.mean("recall_history", "utility", "UPC-SDG", k, gamma, model="bpr"), original),
                         *[m.mean(c, "release", "UPC-SDG", k, gamma)
                           for c in ("mean_f_sim", "mean_cosine", "share_dropped", "share_heldout")],
                         *[m.mean("recall", "recovery", "UPC-SDG", k, gamma, attack=a) for a in ATTACKS],
                         m.mean("seconds", "release", "UPC-SDG", k, gamma)])
    return results.add_table("grid", columns, rows, f"BPR-MF on synthetic data over k x γ (means over seeds); "
                             f"recovery: Recall@{at} of the replaced originals")


def membership_table(results: Results, m: Measurements, options: UPCSDGOptions) -> str:
    """Membership attack on the original data and on every grid cell, beside BPR-MF utility."""
    columns = ["k", "gamma", f"BPR Recall@{CUTOFF}", "membership ROC AUC", "TPR@1%FPR", "advantage"]
    cells = [("original", math.nan, math.nan)] + [("UPC-SDG", k, g) for k in options.grid_k for g in options.grid_gamma]
    rows = [["original" if variant == "original" else k, "" if variant == "original" else gamma,
             m.mean("recall", "utility", variant, k, gamma, model="bpr"),
             *[m.mean(c, "membership", variant, k, gamma) for c in ("auc", "tpr_at_1pct_fpr", "advantage")]]
            for variant, k, gamma in cells]
    return results.add_table("membership", columns, rows, f"Paper-001 attack (Assumption I, top-{options.membership_list_k} "
                             f"lists) against {options.membership_algorithm} trained on the members' real or synthetic data")


def measurement_table(results: Results, frame: pd.DataFrame) -> str:
    """Every per-seed row (long format) for re-analysis."""
    clean = frame.astype(object).where(frame.notna(), None)
    return results.add_table("measurements", list(frame.columns), clean.values.tolist(), "Every measurement, per seed")
