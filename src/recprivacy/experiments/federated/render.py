"""The report of a ``federated`` run in the layouts of paper 004's Tables II-VI and the
Figure 4, 5 and 7 analyses, the paper's numbers beside ours (:mod:`.paper`):

* Table II / V -- DNN (AIA) weighted F1 per method, attribute and ζ;
* Table III -- Hit@20 of APM against FixRec-min / FixRec-max;
* Tables IV / V -- F1 by attacker (DT, SVC, KNN, AIA) and ζ;
* Table VI -- Hit@20 and F1 for FedLightGCN / FedNCF (``model`` option) with none / ldp / apm;
* Figure 4 -- F1 per component of Pure FedRec's updates (``components``);
* Figure 5 -- Hit@20 during training per method; Figure 7 -- the ``dims`` sweep;

then each method's privacy statement (the ``privacy`` table). The zero-column rule (beyond the
paper) is reported beside, not instead of, the paper's attackers.
"""

from __future__ import annotations

from recprivacy.experiments.federated.cells import AttackKey
from recprivacy.experiments.federated.options import ENGINE_LABELS, METHOD_LABELS, FederatedOptions
from recprivacy.experiments.federated.paper import paper_by_attacker, paper_f1, paper_hit20
from recprivacy.experiments.results import Results
from recprivacy.metrics.summary import format_mean_sd
from recprivacy.privacy.accounting import PrivacyStatement
from recprivacy.report.figures import line_plot

INPUT_NOTES = {
    "zscore": "The attackers read ΔΘ z-scored over their known users (our choice; the paper gives no scaling).",
    "raw": "The attackers read the raw ΔΘ (the `attack_inputs: raw` ablation, not the default z-scoring).",
}


def _fmt(cell: dict | None) -> str:
    return "-" if cell is None else format_mean_sd(cell["weighted_f1_mean"], cell["weighted_f1_std"])


def _fmt_zero(cell: dict | None) -> str:
    return "-" if cell is None else f"{_fmt(cell)} ({cell['zero_update_share']:.1%} zero updates)"


def render(results: Results, dataset: str, options: FederatedOptions, ks: list[int], hits: dict, rows: dict[AttackKey, dict],
           curves: dict) -> None:  # fmt: skip
    """Tables II-VI and Figures 4, 5, 7 layouts with the paper's numbers beside ours."""
    k = ks[-1]
    dim0, zeta0 = options.dims[0], options.zetas[0]
    for (dim, method), m in hits.items():
        for name, value in m.items():
            results.metrics[f"{method}/d={dim}/{name}"] = value
    for (dim, method, attribute, zeta, kind, component), cell in rows.items():
        for name, value in cell.items():
            results.metrics[f"{method}/d={dim}/{attribute}/zeta={zeta}/{kind}/{component}/{name}"] = value
    model = options.model
    f1_rows = []
    for method in options.methods:
        for attribute in options.attributes:
            for zeta in options.zetas:
                cell = rows.get((dim0, method, attribute, zeta, "dnn", "all"))
                zero = rows.get((dim0, method, attribute, zeta, "zero-column", "user"))
                paper = paper_f1(dataset, model, method, attribute, zeta)
                f1_rows.append([METHOD_LABELS[method], attribute, zeta, _fmt(cell), paper,
                                None if cell is None else cell["blind_weighted_f1"], _fmt_zero(zero),
                                hits[(dim0, method)].get(f"hit@{k}")])
    tables = [results.add_table(
        "table2_aia_f1", ["method", "attribute", "zeta", "AIA weighted F1 (ours, mean ± std)", "paper", "blind guess",
                          "zero-column rule (beyond paper)", f"Hit@{k} (ours)"], f1_rows,
        f"Tables II / V / VI layout: DNN attack on the full ΔΘ of one attack round, {options.attack_seeds} ζ-splits; "
        f"model {model}, d = {dim0}")]  # fmt: skip
    hit_rows = [[METHOD_LABELS[m], hits[(dim0, m)].get(f"hit@{k}"), hits[(dim0, m)].get(f"ndcg@{k}"),
                 paper_hit20(dataset, model, m) if k == 20 else None] for m in options.methods]
    tables.append(results.add_table("table3_hit", ["method", f"Hit@{k} (ours)", f"NDCG@{k} (ours)", "paper Hit@20"], hit_rows,
                                    "Table III / VI layout: leave-latest-one-out, full ranking of the final global model"))
    by_attacker = [a for a in options.attackers if a != "dnn"]
    if by_attacker:
        att_rows = [[METHOD_LABELS[m], a, z] + [_fmt(rows.get((dim0, m, a, z, kind, "all"))) for kind in options.attackers]
                    + [paper_by_attacker(dataset, model, m, a, z).get(kind) for kind in options.attackers]
                    for m in options.methods for a in options.attributes for z in options.zetas]
        tables.append(results.add_table("table4_attackers", ["method", "attribute", "zeta"] + [f"{x} (ours)" for x in options.attackers]
                                        + [f"{x} (paper)" for x in options.attackers], att_rows,
                                        "Tables IV / V layout: weighted F1 by attacker and ζ, full ΔΘ"))
    if len(options.components) > 1:
        comp_rows = [[METHOD_LABELS[m], a, c, _fmt(rows.get((dim0, m, a, zeta, "dnn", c)))]
                     for m in options.methods for a in options.attributes for zeta in options.zetas[:1] for c in options.components]
        tables.append(results.add_table("fig4_components", ["method", "attribute", "component", "AIA weighted F1"], comp_rows,
                                        f"Figure 4 analysis: DNN attack per component of ΔΘ, ζ = {zeta0} (paper: user leaks most, MLP1 > MLP2)"))
    figures = [results.add_figure("fig5_hit_curve", line_plot({l: c for l, c in curves.items()}, "round", f"Hit@{k}", markers=True),
                                  f"Figure 5 analogue: Hit@{k} of the global model during training")]
    if len(options.dims) > 1:
        dims_rows = [[d, METHOD_LABELS[m], hits[(d, m)].get(f"hit@{k}")] + [_fmt(rows.get((d, m, a, zeta0, "dnn", "all"))) for a in options.attributes]
                     for d in options.dims for m in options.methods]
        tables.append(results.add_table("fig7_dims", ["d", "method", f"Hit@{k}"] + [f"F1 {a}" for a in options.attributes], dims_rows,
                                        "Figure 7 analysis: embedding size sweep (paper: Hit@20 flattens from d = 64; F1 grows with d)"))
    results.add_section("Federated attribute inference and APM (paper 004)", _text(dataset, options), tables, figures)


def _text(dataset: str, options: FederatedOptions) -> str:
    return (
        f"Federated {options.model} on `{dataset}` with the {ENGINE_LABELS[options.engine]}: {options.rounds} rounds, "
        f"{options.clients_per_round} of the users per round, {options.local_epochs} local epochs of SGD "
        f"(lr {options.lr}, batch {options.batch_size}, {options.n_negatives} negatives per positive), init N(0, {options.init_std}²). "
        "The attacker is the honest-but-curious server on one extra round's uploads; F1 is weighted F1 (the paper does not say which average). "
        f"{INPUT_NOTES[options.attack_inputs]} "
        "The zero-column rule reads which one-hot column of ΔE_U is non-zero (a rule the paper does not use): it is the strongest known attack "
        "and is reported beside, not instead of, the paper's; it misses only clients whose whole ΔE_U is zero (no gradient "
        "reached the user table; their share is in brackets)."
    )


def privacy_section(results: Results, statements: dict[str, PrivacyStatement]) -> None:
    """What each method claims (its ``privacy_statement``), one row per method; nothing when
    no method makes a claim (Pure FedRec alone)."""
    if not statements:
        return
    privacy_rows = [[METHOD_LABELS[m], s.epsilon, s.unit, s.scope, s.accountant, " | ".join(s.notes), s.noise]
                    for m, s in statements.items()]
    table = results.add_table("privacy", ["method", "epsilon (local)", "protects", "scope", "accountant", "notes", "noise"],
                              privacy_rows,
                              "What each method claims (its privacy_statement), composed honestly")
    results.add_section("Privacy statements (paper 004 methods)", "", [table])
