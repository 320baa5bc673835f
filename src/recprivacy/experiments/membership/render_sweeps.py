"""The sweeps of paper 001 (k, l, weighting, MIMI: Figures 8-9), shadow size (Section 3.4),
feature methods (Figure 10) and Popularity Randomization (Figures 12-13)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from recprivacy.experiments.membership.lab import AttackSpec
from recprivacy.experiments.membership import paper
from recprivacy.experiments.membership.plan import Plan, base_spec
from recprivacy.experiments.membership.renderer import BAL, Renderer
from recprivacy.report.figures import line_plot


def _sweep(r: Renderer, experiment: str, plan: Plan, field_name: str, values: list[int], axis: str) -> None:
    settings = [s for s in plan.specs if getattr(s, field_name) == values[0]]
    tables, series = [], {}
    for metric, label in (("auc", "ROC AUC"), ("balanced_accuracy", BAL)):
        rows = []
        for s in settings:
            row = [s.code]
            for v in values:
                spec = replace(s, **{field_name: v})
                if metric == "auc":
                    r.store(experiment, spec)
                row.append(r.metric(spec, metric))
            rows.append(row)
            if metric == "auc":
                series[s.code] = (values, row[1:])
        tables.append(r.table(f"{experiment}-{metric}", ["setting", *[f"{axis}={v}" for v in values]], rows,
                              f"{label} against {axis}; {r.seeds_note()}"))  # fmt: skip
    fig = r.figure(experiment, line_plot(series, axis, "ROC AUC", markers=True), f"ROC AUC of the Assumption I attacks against {axis}.")
    text = {"sweep_k": "The paper reports that AUC rises with k up to about 50 and is stable beyond.",
            "sweep_l": "The paper reports that AUC rises with l up to about 50, with no clear gain beyond."}[experiment]  # fmt: skip
    r.section(experiment, text, tables, [fig])


def render_sweep_k(r: Renderer, plan: Plan) -> None:
    _sweep(r, "sweep_k", plan, "k", sorted(set(r.o.ks)), "k")


def render_sweep_l(r: Renderer, plan: Plan) -> None:
    _sweep(r, "sweep_l", plan, "n_factors", sorted(set(r.o.ls)), "l")


def render_weighting(r: Renderer, plan: Plan) -> None:
    rows = []
    for s in [s for s in plan.specs if s.weighting == "rank"]:
        uniform = replace(s, weighting="uniform")
        r.store("weighting", s)
        r.store("weighting", uniform)
        rows.append([s.code, r.metric(uniform, "auc"), r.metric(s, "auc"),
                     r.metric(uniform, "balanced_accuracy"), r.metric(s, "balanced_accuracy")])  # fmt: skip
    t = r.table("weighting", ["setting", "uniform ROC AUC", "rank-linear ROC AUC", "uniform bal. acc.", "rank-linear bal. acc."],
                rows, f"Recommendation weights 1/k against (k - i + 1)/sum(n); {r.seeds_note()}")  # fmt: skip
    r.section("weighting", "The paper finds rank-linear weights 'obviously' better (Figure 8c).", [t])


def render_mimi(r: Renderer, plan: Plan) -> None:
    tables, figures = [], []
    ks, ls, marks = sorted(set(r.o.ks)), sorted(set(r.o.ls)), sorted(set(r.o.mimi_values))
    for d in r.datasets:
        base = base_spec(r.o, d, r.o.mimi_algorithm)

        def auc(k: int, n: int, metric: str = "auc", base: AttackSpec = base) -> float:
            spec = replace(base, k=k, n_factors=n)
            r.store("mimi", spec)
            return r.metric(spec, metric)

        by_l = {f"k={k}": (ls, [auc(k, n) for n in ls]) for k in marks}
        by_k = {f"l={n}": (ks, [auc(k, n) for k in ks]) for n in marks}
        tables.append(r.table(f"mimi-{d}-by-l", ["", *[f"l={n}" for n in ls]], [[key, *v[1]] for key, v in by_l.items()],
                              f"{base.code}: ROC AUC against l for fixed k; {r.seeds_note()}"))  # fmt: skip
        tables.append(r.table(f"mimi-{d}-by-k", ["", *[f"k={k}" for k in ks]], [[key, *v[1]] for key, v in by_k.items()],
                              f"{base.code}: ROC AUC against k for fixed l"))  # fmt: skip
        ends = [[f"k={k}, l={n}", auc(k, n), auc(k, n, "balanced_accuracy"), value]
                for (k, n), value in paper.mimi_points().items() if k in ks + marks and n in ls + marks]  # fmt: skip
        tables.append(r.table(f"mimi-{d}-paper", ["setting", "ROC AUC", BAL, "paper 'AUC' (ml-1m MIMI)"], ends,
                              "The end points the paper states for MIMI"))  # fmt: skip
        figures.append(r.figure(f"mimi-{d}-by-l", line_plot(by_l, "l", "ROC AUC", markers=True), f"{base.code}: ROC AUC against l."))
        figures.append(r.figure(f"mimi-{d}-by-k", line_plot(by_k, "k", "ROC AUC", markers=True), f"{base.code}: ROC AUC against k."))
    r.section("mimi", "The paper reports, for MIMI on ml-1m, AUC 0.998 -> 0.764 when k falls from 100 to 20 and 0.998 -> "
              "0.817 when l falls from 100 to 20.", tables, figures)  # fmt: skip


def render_shadow_size(r: Renderer, plan: Plan) -> None:
    rows = []
    for spec in plan.specs:
        r.store("shadow_size", spec)
        d, a = spec.target
        is_llll = paper.paper_dataset(d) == "lf-2k" and paper.algorithm_key(a) == "L"
        auc, sd = r.c.stat(spec, "auc")
        rows.append([spec.code, spec.shadow_fraction, auc, sd, r.metric(spec, "balanced_accuracy"),
                     paper.shadow_size_value(spec.shadow_fraction) if is_llll else None])  # fmt: skip
    t = r.table("shadow-size", ["setting", "shadow fraction", "ROC AUC", "± sd", BAL, "paper 'AUC' (LLLL)"], rows,
                f"Shadow users sub-sampled per class; {r.seeds_note()}")  # fmt: skip
    r.section("shadow_size", "The shadow dataset keeps a fraction of its members and of its non-members; its recommender "
              "is retrained on the kept members. The paper (LLLL) reports 0.777, 0.746, 0.714, 0.633 for 100-70%.", [t])  # fmt: skip


def render_features(r: Renderer, plan: Plan) -> None:
    methods = list(dict.fromkeys(s.feature for s in plan.specs))
    tables = []
    settings = [s for s in plan.specs if s.feature == methods[0]]
    for metric, label in (("auc", "ROC AUC"), ("balanced_accuracy", BAL)):
        rows = []
        for s in settings:
            row = [s.code]
            for m in methods:
                spec = replace(s, feature=m)
                if metric == "auc":
                    r.store("features", spec)
                row.append(r.metric(spec, metric))
            rows.append(row)
        tables.append(r.table(f"features-{metric}", ["setting", *methods], rows, f"{label} by feature method; {r.seeds_note()}"))
    r.section("features", "Origin is the paper's feature; Concat10/20/100 concatenate item vectors, Hadamard multiplies "
              "them, Similarity averages dot products. The paper finds Origin best everywhere (on AIAI 5% above Concat10 "
              "and 63% above Similarity).", tables)  # fmt: skip


def render_defense(r: Renderer, plan: Plan) -> None:
    scopes = r.o.defense.scopes
    settings = [s for s in plan.specs if s.defense == "none"]
    columns = ["setting", "ROC AUC before"] + [f"ROC AUC after ({s})" for s in scopes] + ["bal. acc. before"]
    columns += [f"bal. acc. after ({s})" for s in scopes] + ["paper before", "paper after", "TPR@1%FPR before"]
    columns += [f"TPR@1%FPR after ({s})" for s in scopes]
    rows, hr_rows, figures = [], [], []
    for s in settings:
        after = [replace(s, defense=scope) for scope in scopes]
        for spec in [s, *after]:
            r.store("defense", spec)
        d, a = s.target
        rows.append([s.code, r.metric(s, "auc"), *[r.metric(x, "auc") for x in after], r.metric(s, "balanced_accuracy"),
                     *[r.metric(x, "balanced_accuracy") for x in after], paper.assumption_value(d, a, a), paper.defense_after(d, a),
                     r.metric(s, "tpr@1%fpr"), *[r.metric(x, "tpr@1%fpr") for x in after]])  # fmt: skip
        before_hr = {p: r.c.hit((d, "target", a, False), p) for p in ("members", "nonmembers", "all")}
        after_hr = {p: r.c.hit((d, "target", a, True), p) for p in ("members", "nonmembers", "all")}
        for p in before_hr:
            r.results.metrics[f"defense/{s.code}/hr_{p}_before"] = before_hr[p]
            r.results.metrics[f"defense/{s.code}/hr_{p}_after"] = after_hr[p]
        hr_rows.append([s.code, *[x for p in before_hr for x in (before_hr[p], after_hr[p])],
                        _relative(before_hr["all"], after_hr["all"])])  # fmt: skip
        figures.append(r.roc_figure(f"roc-defense-{s.code}", [s, *after], f"{s.code}: ROC before and after the defence (first seed)."))
    for s in [s for s in settings if s in r.c.embeddings]:
        after = replace(s, defense=scopes[0])
        before_caption = f"{s.code}: target users' features without the defence (red = members, blue = non-members)."
        figures.append(r.embedding_figure(f"embedding-{s.code}-before", s, before_caption))
        after_caption = f"{s.code}: target users' features with Popularity Randomization."
        figures.append(r.embedding_figure(f"embedding-{s.code}-after", after, after_caption))
    k, alpha = r.o.k, r.o.defense.alpha
    t1 = r.table("defense", columns, rows, f"Figure 12: attack before and after Popularity Randomization (alpha = {alpha}, "
                 f"N_cand = {int(np.ceil(k / alpha - 1e-9))}); {r.seeds_note()}")  # fmt: skip
    parts = [f"{p} HR@{k} {w}" for p in ("members", "non-members", "all") for w in ("before", "after")]
    hr_columns = ["setting", *parts, "all: relative change"]
    t2 = r.table("defense-hit-rate", hr_columns, hr_rows, f"Figure 13: target HR@{k} before and after the defence")
    r.section("defense", (
        "'target': only the target randomizes its non-members' lists and the adversary's shadow does not (the setting the "
        "paper's numbers match); 'both': the shadow randomizes too, an adversary who knows the defence (the "
        "adaptive adversary). Members' lists are unchanged, so members' HR is unchanged by construction; the defence costs "
        "non-members' HR. A ROC AUC far below 0.5 means the attack's scores still separate the classes but inverted."),
        [t1, t2], figures)  # fmt: skip


def _relative(before: float, after: float) -> float:
    return (after - before) / before if before else float("nan")
