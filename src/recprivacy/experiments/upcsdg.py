"""The ``upcsdg`` study (paper 003) and the audit's "synthetic release" section.

Per seed (``study_options.seeds``, default the config seed): prepare the dataset and its
train / validation / test split (``train.prepare_data``), fit the configured feature model
(BPR-MF, d = 64) on train and freeze its factors, then

* **Table 2**: Random, BPR-MF, NeuMF and LightGCN on the original training data and on the
  synthetic data of the paper's two settings, "−" (k = 0.8, γ = 0.1) and "+" (k = 0.2,
  γ = 0.9), tested on the original test split (PR, Recall, NDCG at 20, full ranking);
* **grid** (Figures 2 and 4): every (k, γ) of ``grid_k`` x ``grid_gamma`` with BPR-MF, the
  similarity of replacements to their originals, and the replaced-item recovery attack
  (``attacks.recovery``: blind and informed attackers with the frozen item embeddings, a blind
  attacker with item embeddings learned from the release, and the popularity guess);
* **ablations** (Table 3): UPC-SDG_s / _r / _f against UPC-SDG at ``ablation_gamma`` (0.9);
* **membership**: the user-level membership attack of paper 001 (``attacks.membership``,
  Assumption I) against ``membership_algorithm`` trained on the real data of the target's members
  and on a UPC-SDG release of it for every grid cell (the attack model is trained once on real
  shadow data and reused).

Each synthetic dataset is generated once per (variant, k, γ, seed) and shared by the parts.
Downstream models train on the synthetic data with early stopping on the *original*
validation split (the paper's protocol); test ranking masks each user's synthetic training
items and validation items (digest decision 18). Random is the exact expectation of a uniformly
random ranking of the same candidates (``audit.random_ranking_expectation``). Tables show means
over seeds, the paper's numbers beside ours (``paper_dataset``, default Office, the closest to
Amazon Musical Instruments); every measurement per seed is kept in the ``measurements`` table.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import Field, PositiveInt, field_validator

from recprivacy.attacks.membership import AttackSpec, LabOptions, MembershipLab, popular_lists, popularity_ranking, user_features
from recprivacy.attacks.membership.lists import personalised_lists
from recprivacy.attacks.recovery import PopularityGuess, ReplacementRecoveryAttack, recovery_metrics
from recprivacy.config import Config, StudyOptions, load_config, validate_options
from recprivacy.data.interactions import Interactions
from recprivacy.data.registry import find_data_dir
from recprivacy.defenses.upcsdg import (
    RELEASE_FOLDERS,
    UPCSDG,
    FrozenEmbeddings,
    PrivacyPreferences,
    SyntheticRelease,
    load_preferences,
    pretrain_bpr,
    require_preferences_file,
    write_release,
)
from recprivacy.defenses.upcsdg.preferences import check_unit_interval
from recprivacy.errors import ConfigError
from recprivacy.experiments.audit import AuditContext, SectionWriter, random_ranking_expectation, register_audit_section
from recprivacy.experiments.reference import reference
from recprivacy.metrics.intervals import Estimate, paired_difference_interval, weighted_mean
from recprivacy.experiments.results import Results
from recprivacy.experiments.runner import new_results, register_study
from recprivacy.experiments.train import PreparedData, fit_model, prepare_data
from recprivacy.io import check_output_folder
from recprivacy.metrics.attack import binary_attack_report
from recprivacy.metrics.ranking import evaluate
from recprivacy.metrics.summary import mean_sd
from recprivacy.models import make_model
from recprivacy.models.base import Recommender
from recprivacy.report.figures import line_plot

CUTOFF = 20
METRICS = ("precision", "recall", "ndcg")
SETTINGS = {"-": (0.8, 0.1), "+": (0.2, 0.9)}
LABELS = {"random": "Random", "bpr": "BPRMF", "neumf": "NeuMF", "lightgcn": "LightGCN"}
VARIANTS = {"UPC-SDG_s": {"selection": "random"}, "UPC-SDG_r": {"replacement": "random"},
            "UPC-SDG_f": {"replacement": "fixed"}, "UPC-SDG": {}}
ATTACKS = {"blind": "blind, frozen item embeddings", "informed": "informed, frozen item embeddings",
           "release": "blind, embeddings learned from the release", "popularity": "popularity guess (baseline)"}


def paper_cells(table: str, row: str) -> dict[str, float]:
    """Paper 003's ``METRICS`` at 20 in one row (papers/003/reference.yaml; empty when absent):
    Table 2 rows are ``"<dataset>/<setting>/<model>"``, Table 3 rows ``"<variant>/k=<k>"``."""
    return reference("003").row(table, row)


def _unit_list(values: list[float], name: str) -> list[float]:
    return [check_unit_interval(v, f"{name}[{n}]") for n, v in enumerate(values)]


class UPCSDGOptions(StudyOptions):
    """``study_options`` of the ``upcsdg`` study (see the module docstring)."""

    seeds: list[int] | None = None
    parts: list[Literal["table2", "grid", "ablations", "membership"]] = Field(
        default_factory=lambda: ["table2", "grid", "ablations", "membership"])
    generator: dict[str, Any] = Field(default_factory=dict)
    models: list[str] = Field(default_factory=lambda: ["bpr", "neumf", "lightgcn"])
    downstream: dict[str, dict[str, Any]] = Field(default_factory=dict)
    grid_k: list[float] = Field(default_factory=lambda: [0.2, 0.4, 0.6, 0.8])
    grid_gamma: list[float] = Field(default_factory=lambda: [0.1, 0.3, 0.5, 0.7, 0.9])
    ablation_k: list[float] = Field(default_factory=lambda: [0.2, 0.4, 0.6, 0.8])
    ablation_gamma: float = 0.9
    attack_k: PositiveInt = 10
    attack_weight: float = Field(0.5, ge=0.0, le=1.0)
    paper_dataset: Literal["office", "clothing", "gowalla"] = "office"
    membership_algorithm: str = "bpr"
    membership_min_interactions: PositiveInt = 20
    membership_list_k: PositiveInt = 100

    @field_validator("grid_k", "grid_gamma", "ablation_k")
    @classmethod
    def _in_unit_interval(cls, values: list[float]) -> list[float]:
        return _unit_list(values, "value")

    @field_validator("ablation_gamma")
    @classmethod
    def _gamma(cls, value: float) -> float:
        return check_unit_interval(value, "ablation_gamma")

    @field_validator("generator")
    @classmethod
    def _generator(cls, params: dict[str, Any]) -> dict[str, Any]:
        generator_params(params)
        return params

    @field_validator("models")
    @classmethod
    def _models(cls, names: list[str]) -> list[str]:
        for name in names:
            make_model(name)
        return names

    @field_validator("membership_algorithm")
    @classmethod
    def _algorithm(cls, name: str) -> str:
        make_model(name)
        return name


def generator_params(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` after checking that ``UPCSDG`` accepts them (``seed`` and ``noise`` are set per run)."""
    if "seed" in params:
        raise ConfigError("generator.seed: set the study seed(s) instead; the generator takes each run's seed")
    if "noise" in params:
        raise ConfigError("generator.noise: set the config's top-level noise instead; every defence takes it from there")
    try:
        UPCSDG(**params)
    except TypeError as err:
        raise ConfigError(f"generator: {err}".replace("UPCSDG.__init__() ", "")) from None
    return params


# ---------------------------------------------------------------------------- one seed


@dataclass
class SeedRun:
    """The data, frozen features and caches of one seed; ``rows`` collects measurements."""

    config: Config
    options: UPCSDGOptions
    data: PreparedData
    features: FrozenEmbeddings
    feature_model: Recommender
    seed: int
    rows: list[dict[str, Any]] = field(default_factory=list)
    releases: dict[tuple[str, float, float], SyntheticRelease] = field(default_factory=dict)
    models: dict[tuple[str, str, float, float], Recommender] = field(default_factory=dict)

    def release(self, k: float, gamma: float, variant: str = "UPC-SDG") -> SyntheticRelease:
        """The synthetic training data of one setting (generated once)."""
        key = (variant, k, gamma)
        if key not in self.releases:
            start = time.perf_counter()
            params = {**self.options.generator, **VARIANTS[variant]}
            release = fit_generator(self.data.train, self.features, k, gamma, params, self.seed, self.config.noise).generate()
            s = release.summary
            self.rows.append(self._row("release", variant, k, gamma, seconds=time.perf_counter() - start,
                                       epochs=s["method"]["epochs_trained"], mean_f_sim=s["mean_f_sim"],
                                       mean_cosine=s["mean_cosine"], dropped=s["dropped_interactions"],
                                       share_dropped=s["share_dropped"],
                                       share_heldout=heldout_share(release, self.data)))
            self.releases[key] = release
        return self.releases[key]

    def utility(self, name: str, variant: str = "original", k: float = math.nan, gamma: float = math.nan) -> Recommender | None:
        """Fit downstream model ``name`` on the original or a synthetic training set, record
        its test metrics, and return it (None for Random)."""
        train = self.data.train if variant == "original" else self.release(k, gamma, variant).data
        if name == "random":
            masked = train.to_csr() + self.data.valid.to_csr()
            blind = random_ranking_expectation(self.data.test.to_csr(), masked, CUTOFF)
            self.rows.append(self._row("utility", variant, k, gamma, model=name, **blind))
            return None
        key = (name, variant, k, gamma)
        if key not in self.models:
            model = self.models[key] = self._fit_downstream(name, train, variant)
            found = evaluate(model, self.data.test, ks=(CUTOFF,), exclude=self.data.valid)
            real = evaluate(HistoryMasked(model, self.data.train.to_csr()), self.data.test, ks=(CUTOFF,), exclude=self.data.valid)
            self.rows.append(self._row("utility", variant, k, gamma, model=name,
                                       **{m: float(found[f"{m}@{CUTOFF}"]) for m in METRICS},
                                       **{f"{m}_history": float(real[f"{m}@{CUTOFF}"]) for m in METRICS}))
        return self.models[key]

    def _fit_downstream(self, name: str, train: Any, variant: str) -> Recommender:
        params = self.options.downstream.get(name, {})
        same_as_features = name == self.config.model.name and params == self.config.model.params
        if variant == "original" and same_as_features:
            return self.feature_model
        return make_model(name, **{"seed": self.seed, **params}).fit(train, self.data.valid)

    def recovery(self, k: float, gamma: float) -> None:
        """Replaced-item recovery against one grid cell (every attacker of ``ATTACKS``)."""
        release = self.release(k, gamma)
        truth = release.pairs_matrix("original_item")
        learned = self.utility("bpr", "UPC-SDG", k, gamma)
        weight = self.options.attack_weight
        attackers = {
            "blind": ReplacementRecoveryAttack(self.features.items, weight=weight).fit(release.data),
            "informed": ReplacementRecoveryAttack(self.features.items, informed=True, weight=weight).fit(
                release.data, release.pairs_matrix("replacement_item")),
            "release": ReplacementRecoveryAttack(learned.item_factors_, weight=weight).fit(release.data),
            "popularity": PopularityGuess().fit(release.data),
        }
        ks = (self.options.attack_k,)
        for name, attacker in attackers.items():
            found = recovery_metrics(attacker, truth, ks=ks)
            self.rows.append(self._row("recovery", "UPC-SDG", k, gamma, attack=name,
                                       recall=float(found[f"recall@{ks[0]}"]), ndcg=float(found[f"ndcg@{ks[0]}"])))

    def membership(self) -> None:
        """User-level membership inference (paper 001, Assumption I) against a recommender
        trained on the real members' data, then on UPC-SDG releases of it for every grid cell."""
        o, full = self.options, self.data.full
        algorithm, params = o.membership_algorithm, o.downstream.get(o.membership_algorithm, {})
        lab = MembershipLab({full.name: full}, LabOptions(min_interactions=o.membership_min_interactions, holdout="none",
                                                          model_params={algorithm: params}), seed=self.seed)
        spec = AttackSpec((full.name, algorithm), (full.name, algorithm), k=o.membership_list_k, protocol="paper")
        self.rows.append(self._row("membership", "original", math.nan, math.nan, **_attack_summary(lab.run(spec).report)))
        group = lab.partition(full.name).target
        attack, vectors = lab.attack_model(spec), lab.vectors(full.name, spec.n_factors)
        features = pretrain_bpr(group.train, None, self.seed, **self.config.model.params)
        for k in o.grid_k:
            for gamma in o.grid_gamma:
                release = fit_generator(group.train, features, k, gamma, o.generator, self.seed, self.config.noise).generate()
                target = make_model(algorithm, **{"seed": self.seed, **params}).fit(release.data)
                lists = np.concatenate([personalised_lists(target, group.members, spec.k),
                                        popular_lists(popularity_ranking(release.data), len(group.nonmembers), spec.k)])
                x = user_features(spec.feature, group.data, group.users, lists, vectors, spec.weighting)
                report = binary_attack_report(group.labels, attack.score(x), threshold=attack.threshold_)
                self.rows.append(self._row("membership", "UPC-SDG", k, gamma, **_attack_summary(report)))

    def _row(self, kind: str, variant: str, k: float, gamma: float, **values: Any) -> dict[str, Any]:
        return {"kind": kind, "seed": self.seed, "variant": variant, "k": k, "gamma": gamma, **values}


def _attack_summary(report: dict[str, Any]) -> dict[str, float]:
    """ROC AUC, TPR at 1% FPR and advantage of a membership attack report."""
    return {"auc": float(report["auc"]), "tpr_at_1pct_fpr": float(report["tpr@1%fpr"]), "advantage": float(report["advantage"])}


class HistoryMasked:
    """A fitted model seen through another training matrix: ranking then masks the user's
    *original* history instead of the synthetic items the model was trained on (the view of a
    service that knows what its users really did)."""

    def __init__(self, model: Recommender, history: Any) -> None:
        self.model = model
        self.train_csr_ = history

    def score(self, users: Any) -> Any:
        return self.model.score(users)


def heldout_share(release: SyntheticRelease, data: PreparedData) -> float:
    """Share of replacements that are real interactions the generator never saw (the user's
    validation or test items): generated "fake" items that are in fact true."""
    added = release.pairs_matrix("replacement_item")
    heldout = (data.valid.to_csr() + data.test.to_csr()) != 0
    return float(added.multiply(heldout).sum() / max(added.nnz, 1))


def run_seed(config: Config, options: UPCSDGOptions, seed: int, results: Results) -> list[dict[str, Any]]:
    """Every measurement of one seed (see the module docstring)."""
    seeded = config.model_copy(update={"seed": seed})
    data = prepare_data(seeded, results)
    feature_model = fit_model(seeded, data, results)
    run = SeedRun(seeded, options, data, FrozenEmbeddings.from_model(feature_model), feature_model, seed)
    if "membership" in options.parts:  # first: a dataset too small for its partition fails before the long parts
        run.membership()
    for name in ["random", *options.models]:
        run.utility(name)
    if "table2" in options.parts:
        for k, gamma in SETTINGS.values():
            for name in ["random", *options.models]:
                run.utility(name, "UPC-SDG", k, gamma)
    if "grid" in options.parts:
        for k in options.grid_k:
            for gamma in options.grid_gamma:
                run.recovery(k, gamma)
    if "ablations" in options.parts:
        for k in options.ablation_k:
            for variant in VARIANTS:
                run.utility("bpr", variant, k, options.ablation_gamma)
    return run.rows


# ---------------------------------------------------------------------------- tables


@dataclass(frozen=True)
class Measurements:
    """The per-seed measurement rows of a run, with means over seeds."""

    frame: pd.DataFrame

    def select(self, kind: str, variant: str = "UPC-SDG", k: float = math.nan, gamma: float = math.nan,
               **where: Any) -> pd.DataFrame:
        rows = self.frame[(self.frame["kind"] == kind) & (self.frame["variant"] == variant)]
        for column, value in (("k", k), ("gamma", gamma)):
            rows = rows[rows[column].isna()] if math.isnan(value) else rows[np.isclose(rows[column], value)]
        for column, value in where.items():
            rows = rows[rows[column] == value] if column in rows else rows.iloc[0:0]
        return rows

    def mean(self, column: str, kind: str, variant: str = "UPC-SDG", k: float = math.nan, gamma: float = math.nan,
             **where: Any) -> float | None:
        values = self._values(column, kind, variant, k, gamma, **where)
        return float(np.mean(values)) if len(values) else None

    def std(self, column: str, kind: str, variant: str = "UPC-SDG", k: float = math.nan, gamma: float = math.nan,
            **where: Any) -> float | None:
        return mean_sd(self._values(column, kind, variant, k, gamma, **where)).sd_or_none

    def _values(self, column: str, kind: str, variant: str, k: float, gamma: float, **where: Any) -> np.ndarray:
        if column not in self.frame:
            return np.zeros(0)
        return self.select(kind, variant, k, gamma, **where)[column].dropna().to_numpy(dtype=np.float64)


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b == 0 else a / b


def _setting(name: str) -> tuple[str, float, float]:
    """(variant, k, γ) of a Table 2 row: ``original``, ``-`` or ``+``."""
    return ("original", math.nan, math.nan) if name == "original" else ("UPC-SDG", *SETTINGS[name])


def table2(results: Results, m: Measurements, options: UPCSDGOptions, dataset: str) -> str:
    """Table 2 in the paper's layout: ours, then the paper's ``paper_dataset`` rows."""
    models = ["random", *options.models]
    columns = ["Dataset"] + [f"{LABELS.get(n, n)} {x}" for n in models for x in ("PR", "Recall", "NDCG")]
    rows = []
    for name in ("original", "-", "+"):
        label = "" if name == "original" else name.replace("-", "−")
        variant, k, gamma = _setting(name)
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
        ours = [_ratio(m.mean(column, "utility", *_setting(s), model=name), original)
                for column in ("recall", "recall_history") for s in ("+", "-")]
        paper = {s: paper_cells("Table 2", f"{options.paper_dataset}/{s}/{name}") for s in ("original", "+", "-")}
        theirs = [_ratio(paper[s]["recall"], paper["original"]["recall"]) if paper[s] else None for s in ("+", "-")]
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
                         _ratio(recall, original),
                         _ratio(m.mean("recall_history", "utility", "UPC-SDG", k, gamma, model="bpr"), original),
                         *[m.mean(c, "release", "UPC-SDG", k, gamma)
                           for c in ("mean_f_sim", "mean_cosine", "share_dropped", "share_heldout")],
                         *[m.mean("recall", "recovery", "UPC-SDG", k, gamma, attack=a) for a in ATTACKS],
                         m.mean("seconds", "release", "UPC-SDG", k, gamma)])
    return results.add_table("grid", columns, rows, f"BPR-MF on synthetic data over k x γ (means over seeds); "
                             f"recovery: Recall@{at} of the replaced originals")


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


def add_metrics(results: Results, m: Measurements, options: UPCSDGOptions) -> None:
    """Headline means into ``results.metrics`` (the benchmark reads them)."""
    for name in ["random", *options.models]:
        for setting in ("original", "-", "+"):
            for x in METRICS:
                value = m.mean(x, "utility", *_setting(setting), model=name)
                if value is not None:
                    results.metrics[f"{setting}/{name}/{x}@{CUTOFF}"] = value
    for k in set(options.grid_k) | set(options.ablation_k):
        for gamma in set(options.grid_gamma) | {options.ablation_gamma}:
            for variant in VARIANTS:
                value = m.mean("recall", "utility", variant, k, gamma, model="bpr")
                if value is not None:
                    results.metrics[f"{variant}/k={k}/gamma={gamma}/bpr/recall@{CUTOFF}"] = value
            for variant in VARIANTS:
                value = m.mean("recall_history", "utility", variant, k, gamma, model="bpr")
                if value is not None:
                    results.metrics[f"{variant}/k={k}/gamma={gamma}/bpr/recall_history@{CUTOFF}"] = value
            for column in ("mean_f_sim", "share_dropped", "seconds", "share_heldout"):
                value = m.mean(column, "release", "UPC-SDG", k, gamma)
                if value is not None:
                    results.metrics[f"UPC-SDG/k={k}/gamma={gamma}/{column}"] = value
            value = m.mean("auc", "membership", "UPC-SDG", k, gamma)
            if value is not None:
                results.metrics[f"UPC-SDG/k={k}/gamma={gamma}/membership/auc"] = value
            for attack in ATTACKS:
                value = m.mean("recall", "recovery", "UPC-SDG", k, gamma, attack=attack)
                if value is not None:
                    results.metrics[f"UPC-SDG/k={k}/gamma={gamma}/recovery/{attack}/recall@{options.attack_k}"] = value


def measurement_table(results: Results, frame: pd.DataFrame) -> str:
    """Every per-seed row (long format) for re-analysis."""
    clean = frame.astype(object).where(frame.notna(), None)
    return results.add_table("measurements", list(frame.columns), clean.values.tolist(), "Every measurement, per seed")


def run_upcsdg(config: Config, options: UPCSDGOptions) -> Results:
    """The ``upcsdg`` study (see module docstring)."""
    results = new_results(config)
    seeds = options.seeds or [config.seed]
    rows = [row for seed in seeds for row in run_seed(config, options, seed, results)]
    return render(results, options, pd.DataFrame(rows), seeds)


def merge_runs(runs: Sequence[Results]) -> Results:
    """One ``upcsdg`` result from runs of the same config that differ only in their seeds (for
    example one process per seed): their per-seed ``measurements`` rows together, rendered again.
    The report keeps the first run's dataset description; timings are summed."""
    if not runs or any(r.study != "upcsdg" for r in runs):
        raise ConfigError("merge_runs: expected one or more runs of the upcsdg study")
    def without_seeds(config: dict[str, Any]) -> dict[str, Any]:
        return {**config, "seed": None, "study_options": {**config.get("study_options", {}), "seeds": None}}
    first = runs[0]
    if any(without_seeds(r.config) != without_seeds(first.config) for r in runs[1:]):
        raise ConfigError("merge_runs: the runs' configs differ in more than their seeds")
    frames = [pd.DataFrame(r.tables["measurements"].rows, columns=r.tables["measurements"].columns) for r in runs]
    frame = pd.concat(frames, ignore_index=True)
    seeds = sorted(set(frame["seed"].astype(int)))
    if len(frame.drop_duplicates(["seed"]).index) != sum(f["seed"].nunique() for f in frames):
        raise ConfigError("merge_runs: two runs measured the same seed")
    config = load_config(base={**first.config, "study_options": {**first.config["study_options"], "seeds": seeds}})
    results = new_results(config)
    results.dataset = dict(first.dataset)
    for run in runs:
        for key, value in run.timings.items():
            results.timings[key] = results.timings.get(key, 0.0) + value
    numeric = {c: pd.to_numeric(frame[c]) for c in frame if c not in _TEXT_COLUMNS}
    return render(results, validate_options(UPCSDGOptions, config.study_options), frame.assign(**numeric), seeds)


_TEXT_COLUMNS = ("kind", "variant", "model", "attack")
"""Columns of the measurement rows that hold text; the others are numbers (None read back as NaN)."""


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
        value = m.mean("auc", "membership", "original")
        if value is not None:
            results.metrics["membership/original/auc"] = value
        results.add_section("Membership inference against a recommender trained on synthetic data", _membership_text(options, n),
                            [membership_table(results, m, options)], [membership_figure(results, m, options)])
    results.add_section("Measurements", f"Every measurement of the {n}, one row each.", [measurement_table(results, m.frame)])
    return results


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


# ---------------------------------------------------------------------------- release and audit


def synthesize(config: Config, out: str | Path, privacy: str | Path | None, k: float, gamma: float) -> SyntheticRelease:
    """Release a synthetic version of the whole (preprocessed) dataset into ``out/public/``,
    with what undoes it in ``out/private/`` (``release.write_release``).

    Before any work: the settings, the output folder (not an input, not holding ``public/`` or
    ``private/``, not a file) and the preferences file are checked. Features: the configured
    model fitted on the configured training split (early stopping on its validation split).
    Generator: trained on, and applied to, every interaction. ``privacy`` names a CSV/JSON
    preferences file; ``k`` and ``gamma`` are the defaults for users it omits.
    """
    options = validate_options(UPCSDGOptions, config.study_options)
    k, gamma = check_unit_interval(k, "k"), check_unit_interval(gamma, "gamma")
    check_output_folder(out, inputs=dataset_inputs(config), writes=RELEASE_FOLDERS)
    if privacy is not None:
        require_preferences_file(privacy)
    results = new_results(config)
    data = prepare_data(config, results)
    prefs = (load_preferences(privacy, data.full, k, gamma) if privacy is not None
             else PrivacyPreferences.uniform(data.full.n_users, k, gamma))
    features = FrozenEmbeddings.from_model(fit_model(config, data, results))
    model = UPCSDG(**{**options.generator, "seed": config.seed, "noise": config.noise})
    release = model.fit(data.full, features, prefs).generate()
    write_release(release, out, f"{data.full.name}-upcsdg", config.to_dict())
    return release


def fit_generator(train: Interactions, features: FrozenEmbeddings, k: float, gamma: float, params: dict[str, Any],
                  seed: int, noise: str) -> UPCSDG:  # fmt: skip
    """UPC-SDG with ``params`` trained on ``train`` for every user at the same ``k`` and ``gamma``
    (``.generate()`` gives the release)."""
    model = UPCSDG(**{**params, "seed": seed, "noise": noise})
    return model.fit(train, features, PrivacyPreferences.uniform(train.n_users, k, gamma))


def judged_recovery(attack: Any, release: SyntheticRelease, k: int) -> tuple[Estimate, float, Estimate]:
    """Recall@k of a fitted recovery ``attack`` on the replaced originals of ``release``, the
    popularity guess's Recall@k on the same users, and the margin, paired over the users with a
    replaced item (``intervals.paired_difference_interval``)."""
    truth, key = release.pairs_matrix("original_item"), f"recall@{k}"
    found = recovery_metrics(attack, truth, ks=(k,), per_user=True)[key]
    guess = recovery_metrics(PopularityGuess().fit(release.data), truth, ks=(k,), per_user=True)[key]
    return paired_difference_interval(weighted_mean(found), weighted_mean(guess), np.arange(len(found)))


def dataset_inputs(config: Config) -> list[Path]:
    """The file or folder the configured dataset is read from (none for ``synthetic``): a path
    given as the dataset, or the folder a named dataset is found in."""
    name = config.dataset.name
    if name == "synthetic":
        return []
    if Path(name).exists():
        return [Path(name)]
    try:
        folder = find_data_dir(name, config.dataset.data_dir)
    except ConfigError:  # neither a dataset name nor an existing path: the loader reports it
        return []
    return [] if folder is None else [folder]


class SyntheticReleaseOptions(StudyOptions):
    """Audit options: the release's ``k`` and ``gamma``, generator parameters, attack cut-off."""

    k: float = 0.2
    gamma: float = 0.5
    generator: dict[str, Any] = Field(default_factory=dict)
    attack_k: PositiveInt = 10

    @field_validator("k", "gamma")
    @classmethod
    def _unit(cls, value: float) -> float:
        return check_unit_interval(value, "value")

    @field_validator("generator")
    @classmethod
    def _generator(cls, params: dict[str, Any]) -> dict[str, Any]:
        return generator_params(params)


def _features(ctx: AuditContext) -> tuple[FrozenEmbeddings, str]:
    """The target's own factors when it has them, else a BPR-MF fitted for the purpose."""
    if hasattr(ctx.model, "user_factors_"):
        return FrozenEmbeddings.from_model(ctx.model), f"the target's ({ctx.config.model.name}) factors"
    return pretrain_bpr(ctx.data.train, ctx.data.valid, seed=ctx.config.seed), "a BPR-MF fitted on the training split"


def synthetic_release_section(ctx: AuditContext, out: SectionWriter) -> None:
    """Offer a UPC-SDG release of the training data: its utility and what an attacker recovers."""
    o, data, seed = ctx.options, ctx.data, ctx.config.seed
    features, source = _features(ctx)
    release = fit_generator(data.train, features, o.k, o.gamma, o.generator, seed, ctx.config.noise).generate()
    params = {"seed": seed, **ctx.config.model.params}
    retrained = make_model(ctx.config.model.name, **params).fit(release.data, data.valid)
    before, after = (evaluate(m, data.test, ks=(CUTOFF,), exclude=data.valid) for m in (ctx.model, retrained))
    key = f"recall@{o.attack_k}"
    value, blind, margin = judged_recovery(ReplacementRecoveryAttack(features.items).fit(release.data), release, o.attack_k)
    attack, guess = {key: value.value}, {key: blind}
    s = release.summary
    rows = [[f"{x}@{CUTOFF}", before[f"{x}@{CUTOFF}"], after[f"{x}@{CUTOFF}"], _ratio(after[f"{x}@{CUTOFF}"], before[f"{x}@{CUTOFF}"])]
            for x in METRICS]
    out.add_table("utility", ["metric", "original training data", "synthetic release", "retained"], rows,
                  f"{ctx.config.model.name} trained on each, tested on the original test split")
    out.add_table("privacy", ["quantity", "value"], [
        ["share of each user's items replaced (mean)", s["realised_ratio_mean"]], ["mean f_sim to the original", s["mean_f_sim"]],
        ["interactions with no candidate within gamma (dropped)", s["dropped_interactions"]],
        [f"recovery Recall@{o.attack_k} (blind attacker)", attack[key]], [f"popularity guess Recall@{o.attack_k}", guess[key]],
    ], f"UPC-SDG release with k = {o.k}, γ = {o.gamma}")
    out.add_metric("retention", _ratio(after[f"recall@{CUTOFF}"], before[f"recall@{CUTOFF}"]) or math.nan)
    out.add_metric(f"recovery_{key}", attack[key])
    out.judge("synthetic release: item recovery", f"Recall@{o.attack_k}", value, blind,
              f"popularity guess, {o.attack_k} items", margin, f"k={o.k}, γ={o.gamma}")
    out.write(
        f"UPC-SDG (paper 003) replaced {s['replaced_interactions']} of {s['original_interactions']} training interactions "
        f"(k = {o.k}) by generated items within a similarity cap γ = {o.gamma} and dropped {s['dropped_interactions']} "
        f"that had no candidate within it, using {source} as frozen features. "
        f"{ctx.config.model.name} trained on the release keeps {_ratio(after[f'recall@{CUTOFF}'], before[f'recall@{CUTOFF}']) or 0:.0%} "
        f"of its Recall@{CUTOFF}. A blind attacker holding the release and the item embeddings names "
        f"{attack[key]:.1%} of the replaced originals in its top {o.attack_k} (popularity guess: {guess[key]:.1%}). "
        "UPC-SDG has no formal privacy guarantee. To release the data: "
        f"`recprivacy synthesize --dataset {ctx.config.dataset.name} --k {o.k} --gamma {o.gamma} --out DIR` "
        "(add `--privacy prefs.csv` for per-user settings)."
    )


register_audit_section("synthetic_release", synthetic_release_section, "Synthetic release (UPC-SDG)",
                       SyntheticReleaseOptions, order=70, needs=("builtin",))
register_study("upcsdg", run_upcsdg, UPCSDGOptions, "UPC-SDG synthetic data: Tables 2-3, k x γ grid, recovery attack")
