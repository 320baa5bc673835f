"""The report of an ``upcsdg`` run from its per-seed measurement rows: headline metrics (the
benchmark reads them), then one section per part (Table 2 with retention, the k x γ grid,
Table 3, the membership attack) and the long table of every measurement. Every number shown
is a mean over the run's seeds."""

from __future__ import annotations

import pandas as pd

from recprivacy.experiments.results import Results
from recprivacy.experiments.upcsdg.figures import grid_figures, membership_figure
from recprivacy.experiments.upcsdg.measurements import Measurements, setting
from recprivacy.experiments.upcsdg.options import ATTACKS, CUTOFF, METRICS, VARIANTS, UPCSDGOptions
from recprivacy.experiments.upcsdg.tables import grid_table, measurement_table, membership_table, retention_table, table2, table3


def render(results: Results, options: UPCSDGOptions, frame: pd.DataFrame, seeds: list[int]) -> Results:
    """Headline metrics, tables, figures and sections of the per-seed measurement rows ``frame``."""
    config = results.config
    results.seeds.update({f"run_{n}": seed for n, seed in enumerate(seeds)})
    m = Measurements(frame)
    add_metrics(results, m, options)
    dataset = results.dataset.get("name", config["dataset"]["name"])
    n = f"{len(seeds)} seed{'s' if len(seeds) > 1 else ''}"
    if "table2" in options.parts:
        results.add_section("Table 2: recommenders on original and synthetic data", _table2_text(n),
                            [table2(results, m, options, dataset), retention_table(results, m, options)])
    if "grid" in options.parts:
        results.add_section("k x γ grid, similarity and the recovery attack", _grid_text(options, n),
                            [grid_table(results, m, options)], grid_figures(results, m, options))
    if "ablations" in options.parts:
        results.add_section("Table 3: ablations", _table3_text(n), [table3(results, m, options)])
    if "membership" in options.parts:
        _put(results, "membership/original/auc", m.mean("auc", "membership", "original"))
        results.add_section("Membership inference against a recommender trained on synthetic data", _membership_text(options, n),
                            [membership_table(results, m, options)], [membership_figure(results, m, options)])
    results.add_section("Measurements", f"Every measurement of the {n}, one row each.", [measurement_table(results, m.frame)])
    return results


def _put(results: Results, key: str, value: float | None) -> None:
    """``results.metrics[key] = value`` unless nothing was measured (None)."""
    if value is not None:
        results.metrics[key] = value


def add_metrics(results: Results, m: Measurements, options: UPCSDGOptions) -> None:
    """Headline means into ``results.metrics`` (the benchmark reads them)."""
    for name in ["random", *options.models]:
        for label in ("original", "-", "+"):
            for x in METRICS:
                _put(results, f"{label}/{name}/{x}@{CUTOFF}", m.mean(x, "utility", *setting(label), model=name))
    for k in set(options.grid_k) | set(options.ablation_k):
        for gamma in set(options.grid_gamma) | {options.ablation_gamma}:
            cell = f"k={k}/gamma={gamma}"
            for column in ("recall", "recall_history"):
                for variant in VARIANTS:
                    _put(results, f"{variant}/{cell}/bpr/{column}@{CUTOFF}", m.mean(column, "utility", variant, k, gamma, model="bpr"))
            for column in ("mean_f_sim", "share_dropped", "seconds", "share_heldout"):
                _put(results, f"UPC-SDG/{cell}/{column}", m.mean(column, "release", "UPC-SDG", k, gamma))
            _put(results, f"UPC-SDG/{cell}/membership/auc", m.mean("auc", "membership", "UPC-SDG", k, gamma))
            for attack in ATTACKS:
                _put(results, f"UPC-SDG/{cell}/recovery/{attack}/recall@{options.attack_k}",
                     m.mean("recall", "recovery", "UPC-SDG", k, gamma, attack=attack))


def _table2_text(n: str) -> str:
    return (f"Means over {n}. Downstream models train on the synthetic data with early stopping on the original "
            "validation split and are tested on the original test split; each user's synthetic training items and "
            "validation items are masked (the paper's protocol). Random is the exact expectation of a uniformly random "
            "ranking. The paper's rows are for its own dataset, so compare retention (next table), not absolute values. "
            "*History masked*: the same models ranked with the user's original training items masked instead of the "
            "synthetic ones. The two differ because generated replacements are often real held-out interactions "
            "(grid table, 'replacements held out'), which the paper's protocol masks and so can never count as hits.")


def _grid_text(options: UPCSDGOptions, n: str) -> str:
    return (f"Means over {n}. The paper reports no attack; the recovery attack is this project's privacy test: "
            f"Recall@{options.attack_k} of each user's replaced originals among the items the user does not have in "
            "the release. Attackers: " + "; ".join(f"*{k}* = {v}" for k, v in ATTACKS.items()) + ". "
            "An attack column close to the popularity guess means the release hides which items were replaced.")


def _membership_text(options: UPCSDGOptions, n: str) -> str:
    return (f"Means over {n}. The membership attack of paper 001 (shadow recommender of the same algorithm on other "
            "users of the dataset, MLP on Origin features) is trained once on real shadow data and scored on the target's "
            f"members and non-members. The target is {options.membership_algorithm} trained on the members' real "
            "interactions (row *original*) or on a UPC-SDG release of them (one row per k, γ; features: BPR-MF on the "
            "members' data); non-members receive the target's popular list. The attacker scores users by their real "
            "interactions: a release protects membership only if the target's lists stop resembling members' real "
            "histories. ROC AUC 0.5 is a blind guess.")


def _table3_text(n: str) -> str:
    return (f"Means over {n}. UPC-SDG_s: random selection with the trained generator; UPC-SDG_r: learned selection, "
            "uniform random replacements the user never had; UPC-SDG_f: learned selection, the replacement whose "
            "f_sim to the original is closest to 0.9. The paper's Table 3 is for Office.")
