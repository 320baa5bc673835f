"""Tables, figures and text of the ``exposure`` study: Tables 3-6 (one per candidate set, with
the blind baselines at k and k*M and, for MIND / Zhihu, the paper's numbers beside ours), the
slate sweep (Figs. 6-7), the protection table and privacy-utility curves (Figs. 8-13), and the
checks against the paper's claims.

The paper's numbers are data (``papers/000/reference.yaml``), put beside ours by the kit's
comparator (``experiments.kit.compare``): row ``<dataset>/<encoder>`` of the table of the decoder.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from recprivacy.attacks.exposure import DECODERS, ENCODERS
from recprivacy.data.exposure_pairs import ExposurePairs
from recprivacy.defenses.exposure_perturbation import next_item_recall
from recprivacy.experiments.exposure.cells import CANDIDATES, mean_std
from recprivacy.experiments.exposure.checks import sweep_checks
from recprivacy.experiments.exposure.options import ExposureOptions
from recprivacy.experiments.exposure.pairs import ExposureData
from recprivacy.experiments.exposure.protection import FLOOR, judge_rows
from recprivacy.experiments.kit.compare import Place, compare
from recprivacy.experiments.results import Results
from recprivacy.report.figures import line_plot

SPLIT_TEXT = {"users": "users split 8:1:1 at random (no user in two splits)",
              "contiguous": "pairs split 8:1:1 in contiguous blocks of user order (the authors' code; a user at a block "
                            "boundary is in two splits)"}  # fmt: skip
CANDIDATE_LABEL = {"all": "whole catalogue", "user_log": "user's logged items (authors' code)"}
METRIC_COLUMNS = [f"{m}@{k}" for k in (5, 10, 20) for m in ("recall", "ndcg", "mrr")]
#: paper 000's table per decoder (papers/000/reference.yaml: row "<dataset>/<encoder>", column metric)
PAPER_TABLE_OF = {"point": "Table 3", "lstm": "Table 4", "gru": "Table 5", "transformer": "Table 6"}
PROTECTION_COLUMNS = ["selection", "replacement", "L", "attacker", "recall@10", "ndcg@10", "mrr@10", "recall@10 (user log)",
                      "acc*", "next-item recall@N", "n_pairs", "n_dropped", "change vs L = 0"]  # fmt: skip


def data_table(results: Results, data: ExposureData, parts: dict[str, ExposurePairs]) -> str:
    """Pairs and users per split, with the pair builder's counts."""
    rows = [[name, len(p), int(len(np.unique(p.users)))] for name, p in parts.items()]
    stats = ", ".join(f"{k} {v}" for k, v in data.pairs.stats.items())
    return results.add_table("exposure-data", ["split", "pairs", "users"], rows,
                             f"{data.pairs.name}: M={data.pairs.history_len}; builder counts: {stats}")  # fmt: skip


def data_text(data: ExposureData, options: ExposureOptions, parts: dict[str, ExposurePairs]) -> str:
    """The section's opening: what a pair is, how the metrics are computed, where slates come from."""
    text = (f"Pairs of the user's {options.history_len} most recent clicks and the next exposed slate of "
            f"{options.slate_size} items, from **{data.source}** exposure; {SPLIT_TEXT[options.split]}. "
            "Metrics follow the paper: for each true item its best rank over the decoding steps' lists, Recall = share "
            "of distinct true items found, NDCG and MRR without IDCG normalisation, averaged over pairs. Candidates: "
            "the whole catalogue (the textbook protocol) and the user's logged items (what the authors' code ranked, "
            "so the one comparable with the paper's tables).")  # fmt: skip
    if data.source == "simulated":
        hit = next_item_recall(parts["test"]).mean()
        text += (f" The target `{type(data.target).__name__}` shows slates whose Recall@{options.slate_size} on the "
                 f"test users' real next items is {hit:.4f}.")  # fmt: skip
    if data.source == "mind":
        text += " The MIND data here are a 5,000-impression sample of MIND-small, far smaller than the paper's."
    return text


def attack_tables(results: Results, options: ExposureOptions, runs: dict, baselines: dict, source: str) -> list[str]:
    """Tables 3-6 in one table per candidate mode (means over seeds), plus seed spreads,
    timings and the paper's numbers for MIND / Zhihu."""
    metrics = [c for c in METRIC_COLUMNS if int(c.split("@")[1]) in options.ks]
    models = sorted({(e, d) for e, d, _ in runs}, key=lambda k: (DECODERS.index(k[1]), ENCODERS.index(k[0])))
    names = []
    for mode in CANDIDATES:
        rows = [[d, e] + [mean_std(runs, (e, d), mode, m)[0] for m in metrics] for e, d in models]
        rows += [[f"baseline: {b}", "-"] + [baselines[mode][b][m] for m in metrics] for b in baselines[mode]]
        names.append(results.add_table(f"exposure-attack-{mode}", ["decoder", "encoder"] + metrics, rows,
                                       f"Attack on the test users, candidates = {CANDIDATE_LABEL[mode]}; mean over "
                                       f"seeds {options.seeds}; baselines at list length k and k*M (@kM)"))  # fmt: skip
    rows = [[d, e] + [v for mode in CANDIDATES for v in mean_std(runs, (e, d), mode, "recall@10")]
            + [float(np.mean([r[k] for (ee, dd, _), r in runs.items() if (ee, dd) == (e, d)]))
               for k in ("epochs", "best_epoch", "fit_seconds", "train_pairs_per_second", "eval_pairs_per_second")]
            for e, d in models]  # fmt: skip
    names.append(results.add_table("exposure-attack-runs", ["decoder", "encoder", "recall@10 (all)", "std", "recall@10 (user log)", "std",
                                                            "epochs", "best epoch", "fit s", "train pairs/s", "eval pairs/s"], rows,
                                   "Spread over seeds, training length (early stopping on validation Recall@10) and speed"))  # fmt: skip
    if source in ("mind", "zhihu"):
        names.append(_paper_table(results, source, models, runs))
    return names


def paper_place(source: str, encoder: str, decoder: str, metric: str) -> Place:
    """Where paper 000 prints ``metric`` of ``encoder`` + ``decoder`` on ``source`` (MIND, Zhihu):
    the table of the decoder, row ``<source>/<encoder>``."""
    return PAPER_TABLE_OF[decoder], f"{source}/{encoder}", metric


def _paper_table(results: Results, source: str, models: list, runs: dict) -> str:
    """Ours under the authors' candidate set beside the paper's Tables 3-6 (MIND / Zhihu)."""
    cells = [(e, d, m) for e, d in models for m in ("recall@10", "ndcg@10", "mrr@10")]
    rows = []
    for c in compare(cells, "000", lambda cell: paper_place(source, *cell)):
        e, d, m = c.ours
        ours = mean_std(runs, (e, d), "user_log", m)[0]
        rows.append([d, e, m, c.paper, ours, (ours - c.paper) / c.paper])
    return results.add_table(f"exposure-paper-{source}", ["decoder", "encoder", "metric", "paper", "ours (user log)", "relative gap"],
                             rows, "Ours under the authors' candidate set (user's logged items) beside Tables 3-6")  # fmt: skip


def attack_metrics(results: Results, runs: dict, baselines: dict) -> None:
    """``Results.metrics``: Recall/NDCG/MRR@10 of every model (mean over seeds) and the
    baselines' Recall@10, under both candidate sets."""
    for e, d in sorted({(e, d) for e, d, _ in runs}):
        for mode in CANDIDATES:
            for m in ("recall@10", "ndcg@10", "mrr@10"):
                results.metrics[f"exposure/{e}+{d}/{mode}/{m}"] = mean_std(runs, (e, d), mode, m)[0]
    for mode in CANDIDATES:
        for b, v in baselines[mode].items():
            results.metrics[f"exposure/baseline-{b}/{mode}/recall@10"] = v["recall@10"]


def sweep_outputs(results: Results, options: ExposureOptions, rows: list[list]) -> tuple[list[str], list[str]]:
    """The slate sweep's table, its checks (Figs. 6-7 trends) and Recall@10 against N."""
    series: dict[str, tuple[list, list]] = {}
    for n, decoder, recall, *_ in rows:
        series.setdefault(decoder, ([], []))
        series[decoder][0].append(n)
        series[decoder][1].append(recall)
    table = results.add_table("exposure-slate-sweep", ["N", "decoder", "recall@10 (all)", "recall@10 (user log)", "test pairs"],
                              rows, f"Slate size sweep, encoder {options.sweep_encoder}, seed {options.seeds[0]}")  # fmt: skip
    checks = results.add_table("exposure-checks-sweep", ["claim", "holds", "evidence"],
                               sweep_checks({d: dict(zip(*c)) for d, c in series.items()}), "Slate size sweep against the paper's trends")  # fmt: skip
    png = line_plot(series, "slate size N", "Recall@10 (all items)", markers=True)
    return [table, checks], [results.add_figure("exposure-slate-sweep", png, "Recall@10 against the slate size (Figs. 6-7)")]


def protection_outputs(results: Results, rows: list[dict], simulated: bool) -> tuple[list[str], list[str]]:
    """The protection table, Rec* and utility against L per selection, and privacy-utility
    curves (Rec* against utility) for the frozen and adaptive attackers."""
    rows = judge_rows(rows)
    table = results.add_table("exposure-protection", PROTECTION_COLUMNS, [[r[c] for c in PROTECTION_COLUMNS] for r in rows],
                              "Attack on perturbed test slates (Rec*, NDCG*, MRR* at 10 over all items), Acc* (Eq. 18) "
                              "and the slates' Recall@N on the users' real next items")  # fmt: skip
    utility = "next-item recall@N" if simulated else "acc*"
    figures = []
    rows = [r for r in rows if r["attacker"] != FLOOR]
    for selection in dict.fromkeys(r["selection"] for r in rows):
        for metric, label in (("recall@10", "Rec*@10"), (utility, utility)):
            series = _series(rows, lambda r: r["selection"] == selection, "L", metric)
            png = line_plot(series, "replacement ratio L", label, markers=True)
            slug = metric.replace("*", "").replace(" ", "-").replace("@", "")
            figures.append(results.add_figure(f"exposure-protection-{selection}-{slug}", png,
                                              f"{selection} selection: {label} against L, one line per replacement and attacker"))  # fmt: skip
    for attacker in dict.fromkeys(r["attacker"] for r in rows):
        series = _series(rows, lambda r: r["attacker"] == attacker, utility, "recall@10", by_selection=True)
        png = line_plot(series, utility, "Rec*@10", markers=True)
        figures.append(results.add_figure(f"exposure-privacy-utility-{attacker}", png,
                                          f"Privacy-utility curves, {attacker} attacker: each point one L, lower right is better"))  # fmt: skip
    return [table], figures


def _series(rows: list[dict], keep: Any, x: str, y: str, by_selection: bool = False) -> dict[str, tuple[list, list]]:
    """Line-plot series ``label -> (xs, ys)`` of the kept rows, one line per replacement and
    attacker (or per strategy with ``by_selection``)."""
    series: dict[str, tuple[list, list]] = {}
    for r in rows:
        if keep(r):
            label = f"{r['selection']}/{r['replacement']}" if by_selection else f"{r['replacement']} ({r['attacker']})"
            series.setdefault(label, ([], []))
            series[label][0].append(r[x])
            series[label][1].append(r[y])
    return series


def checks_table(results: Results, rows: list[list]) -> str:
    """Every check of the run in one table."""
    return results.add_table("exposure-checks", ["claim", "holds", "evidence"], rows,
                             "The paper's claims and the acceptance trends, checked on this run")  # fmt: skip
