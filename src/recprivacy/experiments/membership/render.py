"""Tables and figures of the ``membership`` study, in the layout of paper 001.

Every attack table shows our ROC AUC (threshold-free, from the attack's member probability)
with its standard deviation over seeds, our balanced accuracy at the 0.5 threshold (the
quantity the paper calls "AUC") and the paper's number beside it; the long table at the end
adds TPR at 0.1% and 1% FPR, the attacker advantage, precision and recall of every setting.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from recprivacy.attacks.membership import AttackSpec
from recprivacy.attacks.membership.grid import ALGORITHM_LETTERS, DATASET_LETTERS, letter
from recprivacy.experiments.membership import paper
from recprivacy.experiments.membership.collect import Collected
from recprivacy.experiments.membership.options import MembershipOptions
from recprivacy.experiments.membership.plan import EXPERIMENTS, Plan, base_spec
from recprivacy.experiments.results import Results
from recprivacy.metrics.attack import roc_curve
from recprivacy.report.figures import heatmap, line_plot, scatter_plot

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
        """ROC curves of ``specs`` (first seed) on log-log axes, with the blind-guess diagonal."""
        curves = {f"{spec.code} {self.variant(spec)}".strip(): self.c.roc[spec] for spec in specs}
        return self.figure(name, roc_png(curves), caption + " Zero rates are drawn at half the smallest non-zero FPR.")

    def embedding_figure(self, name: str, spec: AttackSpec, caption: str) -> str:
        points, labels = self.c.embeddings[spec]
        groups = {"members": (points[labels == 1, 0], points[labels == 1, 1]),
                  "non-members": (points[labels == 0, 0], points[labels == 0, 1])}  # fmt: skip
        method = "t-SNE" if self.o.embedding == "tsne" else "PCA"
        png = scatter_plot(groups, f"{method} 1", f"{method} 2", f"{spec.code} {self.variant(spec)}".strip(),
                           colors={"members": "red", "non-members": "blue"})  # fmt: skip
        return self.figure(name, png, caption)


def roc_png(curves: dict[str, tuple[np.ndarray, np.ndarray]]) -> bytes:
    """ROC curves ``label -> (labels, scores)`` on log-log axes with the blind-guess diagonal;
    zero rates are drawn at half the smallest non-zero FPR so they stay on the axes."""
    floor = min(1.0 / max(int((labels == 0).sum()), 1) for labels, _ in curves.values()) / 2
    series: dict[str, tuple] = {}
    for label, (labels, scores) in curves.items():
        fpr, tpr, _ = roc_curve(labels, scores)
        series[label] = (np.maximum(fpr, floor), np.maximum(tpr, floor))
    grid = np.logspace(np.log10(floor), 0, 50)
    series["blind guess"] = (grid, grid)
    return line_plot(series, "false positive rate", "true positive rate", logx=True, logy=True)


# ---------------------------------------------------------------------------- experiments


def _paper_label(dataset: str) -> str:
    p = paper.paper_dataset(dataset)
    return f"{p}" if p else "none"


def render_hit_rate(r: Renderer, plan: Plan) -> None:
    columns = ["dataset", "paper dataset", "recommender"]
    for a in r.o.algorithms:
        columns += [f"{a} HR@{r.o.k}", f"{a} paper"]
    columns.append(f"non-members (popular list) HR@{r.o.k}")
    rows = []
    for d in r.datasets:
        for role in ("shadow", "target"):
            row: list[Any] = [d, _paper_label(d), role]
            for a in r.o.algorithms:
                value = r.c.hit((d, role, a, False))
                r.results.metrics[f"hit_rate/{d}/{role}/{a}"] = value
                row += [value, paper.hit_rate(d, role, a)]
            row.append(r.c.hit((d, role, r.o.algorithms[0], False), "nonmembers"))
            rows.append(row)
    t = r.table("hit-rate", columns, rows, f"HR@{r.o.k} of members (leave-one-out, full ranking); {r.seeds_note()}")
    r.section("hit_rate", (
        f"Each shadow and target user holds out one interaction ({r.o.holdout}); members' recommenders train on the rest "
        f"and HR@{r.o.k} is the share of members whose held-out item is in their top-{r.o.k} (training items excluded, all "
        "items ranked). The last column is the same rate for non-members, who get the members' popular list. The paper "
        "does not state its protocol; its much higher ml-1m rates suggest an easier one (e.g. sampled candidates)."), [t])


def _attack_rows(r: Renderer, experiment: str, specs: list[AttackSpec]) -> list[list[Any]]:
    rows = []
    for spec in specs:
        r.store(experiment, spec)
        d, a = spec.target
        auc, sd = r.c.stat(spec, "auc")
        ours = [auc, sd, r.metric(spec, "balanced_accuracy")]
        low_fpr = [r.metric(spec, m) for m in ("tpr@0.1%fpr", "tpr@1%fpr", "advantage")]
        rows.append([spec.code, d, a, *ours, paper.assumption_value(d, a, a), _paper_label(d), *low_fpr])
    return rows


ATTACK_COLUMNS = ["setting", "dataset", "algorithm", "ROC AUC", "± sd", BAL, "paper 'AUC'", "paper dataset",
                  "TPR@0.1%FPR", "TPR@1%FPR", "advantage"]  # fmt: skip


def render_assumption1(r: Renderer, plan: Plan) -> None:
    paper_specs = [s for s in plan.specs if s.protocol == "paper"]
    rows = _attack_rows(r, "assumption1", paper_specs)
    for row, spec in zip(rows, paper_specs):
        served = replace(spec, protocol="served")
        r.store("assumption1", served)
        row.append(r.metric(served, "auc"))
    t = r.table("assumption1", [*ATTACK_COLUMNS, "ROC AUC, protocol served"], rows,
                f"Assumption I, protocol paper (non-members get the popular list) and, last column, protocol served "
                f"(non-members served by the recommender from their history); shadow and target share dataset and "
                f"algorithm; blind guess = 0.5 ROC AUC and balanced accuracy; {r.seeds_note()}")  # fmt: skip
    figures = []
    for d in r.datasets:
        specs = [s for s in plan.roc if s.target[0] == d]
        figures.append(r.roc_figure(f"roc-assumption1-{d}", specs, f"ROC curves of the Assumption I attacks on {d} (first seed)."))
    r.section("assumption1", (
        "The attack model is trained on the shadow recommender's members and non-members and tested on every target user "
        "(members : non-members = 1 : 1). ROC AUC ranks users by the attack's member probability; the paper's 'AUC' is the "
        "balanced accuracy of the 0.5 decision, so compare the paper's column with ours. Under the paper's protocol a "
        "trivial statistic (the list's overlap with popular items) separates the classes as well; the served column "
        "measures what the lists reveal when non-members are served like members."), [t], figures)


Cell = tuple[float, float | None, float | None]  # ours ROC AUC, ours balanced accuracy, paper


def _cells(r: Renderer, experiment: str, specs: list[AttackSpec], references: list[float | None]) -> list[Cell]:
    """(ROC AUC, balanced accuracy, paper) of each spec, storing its metrics."""
    for spec in specs:
        r.store(experiment, spec)
    return [(r.metric(s, "auc"), r.metric(s, "balanced_accuracy"), ref) for s, ref in zip(specs, references)]


def _grid_table(r: Renderer, name: str, d: str, rows: list[tuple[str, list[Cell]]]) -> str:
    """Rows of cells under columns per target algorithm: ours ROC AUC, ours bal. acc., paper."""
    columns = ["shadow \\ target"]
    for a in r.o.algorithms:
        columns += [f"{a} ROC AUC", f"{a} bal. acc.", f"{a} paper"]
    body = [[label, *[x for cell in cells for x in cell]] for label, cells in rows]
    return r.table(f"{name}-{d}", columns, body, f"{d} (paper: {_paper_label(d)}); {r.seeds_note()}")


def render_assumption2(r: Renderer, plan: Plan) -> None:
    tables, figures, notes = [], [], []
    algos = r.o.algorithms
    for d in r.datasets:
        specs = {a: [replace(base_spec(r.o, d, t), shadow=(d, a)) for t in algos] for a in algos}
        rows = [(a, _cells(r, "assumption2", specs[a], [paper.assumption_value(d, a, t) for t in algos])) for a in algos]
        tables.append(_grid_table(r, "assumption2", d, rows))
        grid = [[r.metric(s, "auc") for s in specs[a]] for a in algos]
        png = heatmap(grid, algos, algos, "target algorithm", "shadow algorithm", f"{d}: ROC AUC", "ROC AUC", 0.5, 1.0)
        figures.append(r.figure(f"heatmap-assumption2-{d}", png, f"Assumption II on {d}: ROC AUC of every shadow x target pair."))
        note = f"{d}: average balanced accuracy {np.nanmean([c[1] for _, cells in rows for c in cells]):.3f}"
        reference = paper.assumption_mean(d)
        if reference is not None:
            note += f" (paper, {paper.paper_dataset(d)}: {reference:.3f})"
        notes.append(note)
    text = "Rows are the shadow algorithm, columns the target algorithm; the diagonal is Assumption I. "
    r.section("assumption2", text + "; ".join(notes) + ".", tables, figures)


def _paper_setting(shadow: tuple[str, str], target: tuple[str, str]) -> tuple[str, ...] | None:
    """The Assumption III code the paper states a value for, if this cross-dataset pair maps to it."""
    key = tuple(x or "" for x in (paper.paper_dataset(shadow[0]), paper.algorithm_key(shadow[1]),
                                  paper.paper_dataset(target[0]), paper.algorithm_key(target[1])))  # fmt: skip
    return key if shadow[0] != target[0] and paper.cross_dataset_value(*key) is not None else None


def render_assumption3(r: Renderer, plan: Plan) -> None:
    pairs = [(d, a) for d in r.datasets for a in r.o.algorithms]
    codes = [letter(d, DATASET_LETTERS) + letter(a, ALGORITHM_LETTERS) for d, a in pairs]
    specs = {(s, t): replace(base_spec(r.o, *t), shadow=s) for s in pairs for t in pairs}
    for spec in specs.values():
        r.store("assumption3", spec)
    grid = [[r.metric(specs[s, t], "auc") for t in pairs] for s in pairs]
    caption = f"Assumption III: ROC AUC, rows = shadow (dataset, algorithm), columns = target; {r.seeds_note()}"
    matrix = r.table("assumption3", ["shadow \\ target", *codes], [[c, *row] for c, row in zip(codes, grid)], caption)
    checks = []
    for (s, t), spec in specs.items():
        key = _paper_setting(s, t)
        if key:
            label = f"{key[0]} {key[1]} -> {key[2]} {key[3]}"
            checks.append([spec.code, label, r.metric(spec, "auc"), r.metric(spec, "balanced_accuracy"), paper.cross_dataset_value(*key)])
    spot = r.table("assumption3-checks", ["setting", "paper setting (shadow -> target)", "ROC AUC", BAL, "paper 'AUC'"], checks,
                   "The Assumption III values the paper states in its text")  # fmt: skip
    png = heatmap(grid, codes, codes, "target", "shadow", "ROC AUC", "ROC AUC", 0.5, 1.0)
    fig = r.figure("heatmap-assumption3", png, "Assumption III: every shadow against every target; the block diagonal is Assumption II.")
    legend = ", ".join(f"{letter(d, DATASET_LETTERS)} = {d}" for d in r.datasets)
    r.section("assumption3", f"Codes: {legend}; I = Item-CF, L = LFM, N = NCF. Shadow and target features use their own "
              "datasets' item vectors (two unaligned spaces across datasets, as in the paper).", [matrix, spot], [fig])  # fmt: skip


def render_kmeans(r: Renderer, plan: Plan) -> None:
    tables, algos = [], r.o.algorithms
    for d in r.datasets:
        rows = []
        for a in algos:
            specs = [replace(base_spec(r.o, d, t), shadow=(d, a)) for t in algos]
            rows.append((f"MLP, shadow {a}", _cells(r, "kmeans", specs, [paper.assumption_value(d, a, t) for t in algos])))
        kmeans = [replace(base_spec(r.o, d, t), attack="kmeans") for t in algos]
        rows.append(("K-Means", _cells(r, "kmeans", kmeans, [paper.kmeans_value(d, t) for t in algos])))
        rows.append(("K-Means (oracle-aligned)", [(r.metric(s, "auc_aligned"), None, None) for s in kmeans]))
        tables.append(_grid_table(r, "kmeans", d, rows))
    r.section("kmeans", (
        "K-Means (K = 2) clusters the target users' features without any shadow model; the cluster whose centre has the "
        "smaller norm is called 'members'. The oracle-aligned row gives max(AUC, 1 - AUC), what K-Means reaches when told "
        "which cluster is which (an upper bound, not an attack)."), tables)


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
        "paper's numbers match); 'both': the shadow randomizes too, an adversary who knows the defence (the digest's "
        "default). Members' lists are unchanged, so members' HR is unchanged by construction; the defence costs "
        "non-members' HR. A ROC AUC far below 0.5 means the attack's scores still separate the classes but inverted."),
        [t1, t2], figures)  # fmt: skip


def _relative(before: float, after: float) -> float:
    return (after - before) / before if before else float("nan")


RENDERERS: dict[str, Callable[[Renderer, Plan], None]] = {
    "hit_rate": render_hit_rate, "assumption1": render_assumption1, "assumption2": render_assumption2,
    "assumption3": render_assumption3, "kmeans": render_kmeans, "sweep_k": render_sweep_k, "sweep_l": render_sweep_l,
    "weighting": render_weighting, "mimi": render_mimi, "shadow_size": render_shadow_size, "features": render_features,
    "defense": render_defense,
}  # fmt: skip


def render(results: Results, options: MembershipOptions, datasets: list[str], plans: dict[str, Plan], c: Collected) -> None:
    """Every experiment's section, then the data summary and the long table of all settings."""
    r = Renderer(results, options, datasets, c)
    for name, plan in plans.items():
        RENDERERS[name](r, plan)
    _render_data(r)
    specs = list(c.reports)
    long = r.table("all-settings", LONG_COLUMNS, [r.long_row(s) for s in specs], f"Every setting run; {r.seeds_note()}")
    results.add_section("All settings", "Every attack setting of this run with all its metrics.", [long])


def _render_data(r: Renderer) -> None:
    keys = ["shadow_members", "shadow_nonmembers", "target_members", "target_nonmembers", "vector_users",
            "vector_interactions", "items", "items_in_vector_part", "catalogue", "rows_on_uncovered_items",
            "users_below_min_after_restrict", "implicit"]  # fmt: skip
    rows = [[d, *[r.c.groups[d].get(k) for k in keys]] for d in r.datasets]
    t = r.table("partition", ["dataset", *keys], rows, "Partition of each dataset (first seed)")
    implicit = [d for d in r.datasets if r.c.groups[d].get("implicit")]
    text = (f"Users with at least {r.o.min_interactions} interactions, split '{r.o.split_mode}' into shadow / target / "
            f"vector thirds; members are a random half of shadow and of target. Item coverage '{r.o.item_coverage}': "
            "interactions on items the vector part never saw are dropped (and users then below the minimum), so "
            "every recommended item has a learned vector.")  # fmt: skip
    if implicit:
        text += f" {', '.join(implicit)} carry no ratings: every interaction counts as rating 1 for the item vectors."
    r.results.add_section("Data partition", text, [t])
