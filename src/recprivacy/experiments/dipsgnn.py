"""The ``dipsgnn`` study (paper 002: Table 2, the sweeps of Figs. 3-6, the ablation of Fig. 7)
and the DIPSGNN section of the audit.

Protocol (digest 002, section 4 and decisions 14-16, 21, 29):

1. load the dataset, keep ratings >= 4 (``dataset.preprocessing.implicit_threshold``), 10-core
   (``kcore``), then each user's ``max_len`` most recent interactions (``keep_recent``);
2. per user, the first 80% (``int(0.8 n)``) is training, the rest test (``temporal_split``);
   test items never seen in training are dropped;
3. training samples are all prefixes of each training sequence; SR-GNN-family models hold out a
   random 10% of them to select their epoch; the other baselines train on a random 90% of the
   training interactions and stop early on the other 10% (``random_split``);
4. test samples are the prefixes of each user's test segment (``test_context="test_segment"``,
   the reference code) or the whole history before each test item (``"full_history"``);
   Recall@K and MRR@K (x100) rank the target among *all* items, seen ones included (the paper's
   protocol); the same lists with each user's training items masked (recprivacy's convention)
   are reported beside them;
5. every method runs once per seed; Table 2 shows means (and standard deviations), the paper's
   numbers beside ours, and DIPSGNN's relative improvement over EdgeRand with a paired t-test
   across seeds (``scipy.stats.ttest_rel``, ``*`` for p < 0.01).

Non-sequential baselines (BPR-MF, LightGCN, DPMF) score per user, so all test samples of a user
share one ranking; SASRec scores every test prefix. DPMF_exp reads the star ratings of the
training interactions (4 or 5 after the >= 4 filter: the paper's DPMF baselines used the raw
ratings, outside this protocol). HRNN and Tmall are not available in recprivacy.

The audit section: when the audit's target is a sequential recommender, DIPSGNN is trained on
the same split and its utility and privacy statements are shown beside the target's.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp
import torch
from pydantic import BaseModel, ConfigDict, Field, PositiveInt, field_validator
from scipy import stats

from recprivacy.config import Config, StudyOptions, validate_options
from recprivacy.data.interactions import Interactions
from recprivacy.data.preprocess import keep_recent, preprocess
from recprivacy.data.registry import load_dataset
from recprivacy.data.split import random_split, temporal_split
from recprivacy.defenses.dipsgnn import DIPSGNN
from recprivacy.defenses.dpmf import DPMF
from recprivacy.defenses.dpsgd import DPSGD
from recprivacy.defenses.edgerand import EdgeRand
from recprivacy.defenses.private_srgnn import PrivateSRGNN
from recprivacy.errors import ConfigError
from recprivacy.experiments.audit import AuditContext, Risk, SectionWriter, register_audit_section, utility_change
from recprivacy.experiments.reference import reference
from recprivacy.experiments.results import Results
from recprivacy.experiments.runner import new_results, register_study
from recprivacy.experiments.train import metrics_rows, test_metrics
from recprivacy.metrics.ranking import mask_items, ranking_metrics
from recprivacy.metrics.summary import MeanSD, mean_sd
from recprivacy.models.base import Recommender
from recprivacy.models.bpr import BPRMF
from recprivacy.models.lightgcn import LightGCN
from recprivacy.models.sasrec import SASRec
from recprivacy.models.srgnn import SRGNN, SequenceSamples, batch_inputs
from recprivacy.privacy.accounting import PrivacyStatement
from recprivacy.progress import progress
from recprivacy.report.figures import line_plot

#: the SR-GNN family: scored per prefix graph, epochs selected on held-out prefixes
GRAPH_MODELS = (SRGNN, PrivateSRGNN)
PAPER_METRICS = ("recall@20", "mrr@20", "recall@10", "mrr@10")
PAPER_COLUMN_OF = {"ml-1m": "ML-1M", "s3rec-yelp": "Yelp"}
ML1M_CATEGORIES = {"gender": ["F", "M"], "age": [1, 18, 25, 35, 45, 50, 56], "occupation": list(range(21))}

#: method -> (Table 2 type, label)
METHODS: dict[str, tuple[str, str]] = {
    "BPRMF": ("Nonp", "BPR-MF"),
    "SASRec": ("Nonp", "SASRec"),
    "LightGCN": ("Nonp", "LightGCN"),
    "SRGNN": ("Nonp", "SR-GNN (no user)"),
    "APGNN": ("Nonp", "APGNN (SR-GNN + user features)"),
    "DPMF_imp": ("Priv", "DPMF_imp"),
    "DPMF_exp": ("Priv", "DPMF_exp"),
    "DPSGD": ("Priv", "DP-SGD (SR-GNN)"),
    "EdgeRand": ("Priv", "EdgeRand"),
    "DIPSGNN": ("Ours", "DIPSGNN (noise std sigma)"),
    "DIPSGNN_legacy": ("Ours", "DIPSGNN, authors' code (std sigma^2, no test noise)"),
    "Nonp": ("Ablation", "Nonp (no noise, features)"),
    "Nonp-U": ("Ablation", "Nonp-U (no noise, user id)"),
    "Priv-U": ("Ablation", "Priv-U (noise, user id)"),
}
TABLE2_METHODS = ["BPRMF", "SASRec", "LightGCN", "SRGNN", "APGNN", "DPMF_imp", "DPMF_exp", "DPSGD", "EdgeRand",
                  "DIPSGNN", "DIPSGNN_legacy"]


# ---------------------------------------------------------------------------- options


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FeatureSpec(_Strict):
    """User feature columns (and their declared domains) read by the SR-GNN-family models."""

    numeric: list[str] = Field(default_factory=list)
    categorical: list[str] = Field(default_factory=list)
    categories: dict[str, list[Any]] = Field(default_factory=dict)
    bounds: dict[str, tuple[float, float]] = Field(default_factory=dict)


class SweepSpec(_Strict):
    """One sweep of Figs. 3-6: a parameter, its values and the methods compared."""

    parameter: Literal["eps2", "eps1", "n_steps", "C"]
    values: list[float] = Field(min_length=1)
    methods: list[str] = Field(default_factory=lambda: ["DIPSGNN", "EdgeRand"])


def _ml1m_features() -> FeatureSpec:
    return FeatureSpec(categorical=["gender", "age", "occupation"], categories=ML1M_CATEGORIES)


class DIPSGNNOptions(StudyOptions):
    """``study_options`` of the ``dipsgnn`` study (module docstring)."""

    methods: list[str] = Field(default_factory=lambda: list(TABLE2_METHODS))
    seeds: list[int] = Field(default_factory=lambda: [0, 1, 2, 3, 4], min_length=1)
    max_len: PositiveInt = 100
    test_ratio: float = Field(0.2, gt=0, lt=1)
    test_context: Literal["test_segment", "full_history"] = "test_segment"
    eps1: float = Field(20.0, gt=0)
    eps2: float = Field(5.0, gt=0)
    delta: float = Field(2.5e-7, gt=0, lt=1)
    C: float = Field(0.2, gt=0)
    features: FeatureSpec | None = Field(default_factory=_ml1m_features)
    method_params: dict[str, dict[str, Any]] = Field(default_factory=dict)
    sweeps: list[SweepSpec] = Field(default_factory=list)
    paper_column: Literal["ML-1M", "Yelp", "Tmall"] | None = None

    @field_validator("methods")
    @classmethod
    def _known_methods(cls, methods: list[str]) -> list[str]:
        unknown = [m for m in methods if m not in METHODS]
        if unknown or not methods:
            raise ValueError(f"unknown method(s) {unknown}; expected some of {list(METHODS)}")
        return methods


# ---------------------------------------------------------------------------- data


@dataclass(frozen=True)
class SequenceData:
    """The study's split: training interactions, test interactions and the test samples."""

    full: Interactions
    train: Interactions
    test: Interactions
    test_samples: SequenceSamples


def with_star_ratings(data: Interactions, raw: Interactions) -> Interactions:
    """``data`` with the original ratings of its (user, item) pairs looked up in ``raw``."""
    if raw.ratings is None:
        return data
    frame = raw.to_frame().drop_duplicates(["user_id", "item_id"], keep="last").set_index(["user_id", "item_id"])
    keys = list(zip(data.user_ids[data.users], data.item_ids[data.items]))
    return data.with_changes(ratings=frame["rating"].reindex(keys).to_numpy(dtype=np.float64))


def held_out_samples(train: Interactions, test: Interactions, context: str) -> SequenceSamples:
    """Prefix samples whose targets are the test items (module docstring, step 4)."""
    train_seqs, test_seqs = train.sequences(), test.sequences()
    n_train = np.array([len(s) for s in train_seqs], dtype=np.int64)
    joined = [np.concatenate([a, b]) for a, b in zip(train_seqs, test_seqs)]
    if context == "test_segment":
        return SequenceSamples.prefixes(joined, first_target=n_train + 1, context_start=n_train)
    return SequenceSamples.prefixes(joined, first_target=np.maximum(n_train, 1))


def prepare_sequences(config: Config, options: DIPSGNNOptions, results: Results) -> SequenceData:
    """Steps 1-2 of the protocol and the test samples; records the dataset fingerprint."""
    ds = config.dataset
    with results.timed("load_data"):
        raw = load_dataset(ds.name, ds.data_dir, **ds.options)
    with results.timed("preprocess"):
        p = ds.preprocessing
        data = preprocess(raw, implicit_threshold=p.implicit_threshold, kcore=p.kcore, min_user=p.min_user, dedup=p.dedup)
        data = keep_recent(data, options.max_len)
        if p.implicit_threshold is not None:
            data = with_star_ratings(data, raw)
    with results.timed("split"):
        train, test = temporal_split(data, ratios=(1 - options.test_ratio, options.test_ratio))
        test = test.select(train.item_counts()[test.items] > 0, "drop_unseen_test_items")
    results.dataset = data.fingerprint()
    return SequenceData(data, train, test, held_out_samples(train, test, options.test_context))


# ---------------------------------------------------------------------------- methods


def _graph_params(options: DIPSGNNOptions, backbone: dict[str, Any]) -> dict[str, Any]:
    """SR-GNN-family arguments shared by every graph method: backbone + user features."""
    f = options.features
    if f is None:
        return {**backbone, "user_mode": "id"}
    return {**backbone, "user_mode": "features", "user_numeric": f.numeric, "user_categorical": f.categorical,
            "user_categories": f.categories or None, "user_bounds": f.bounds or None}


def build_method(name: str, options: DIPSGNNOptions, backbone: dict[str, Any], seed: int) -> Recommender:
    """The recommender of a Table 2 row (or ablation), seeded, with ``method_params`` applied."""
    g = {**_graph_params(options, backbone), "seed": seed}
    noise = g.pop("noise")
    priv = {"eps1": options.eps1, "eps2": options.eps2, "delta": options.delta, "noise": noise}
    extra = options.method_params.get(name, {})
    builders: dict[str, Callable[[], Recommender]] = {
        "BPRMF": lambda: BPRMF(**{"seed": seed, **extra}),
        "SASRec": lambda: SASRec(**{"max_len": options.max_len, "seed": seed, **extra}),
        "LightGCN": lambda: LightGCN(**{"seed": seed, **extra}),
        "SRGNN": lambda: SRGNN(**{**g, "user_mode": "none", "adjacency": "degree", **extra}),
        "APGNN": lambda: SRGNN(**{**g, "adjacency": "count", **extra}),
        "DPMF_imp": lambda: DPMF(**{"feedback": "implicit", "epsilon": options.eps2, "seed": seed, "noise": noise, **extra}),
        "DPMF_exp": lambda: DPMF(**{"feedback": "explicit", "epsilon": options.eps2, "seed": seed, "noise": noise, **extra}),
        "DPSGD": lambda: DPSGD.from_params(**{**g, **priv, **extra}),
        "EdgeRand": lambda: EdgeRand.from_params(**{**g, **priv, **extra}),
        "DIPSGNN": lambda: DIPSGNN.from_params(**{**g, **priv, "C": options.C, **extra}),
        "DIPSGNN_legacy": lambda: DIPSGNN.from_params(**{**g, **priv, "C": options.C, "noise_std_mode": "sigma_squared_legacy",
                                                         "noise_at_inference": False, **extra}),
        "Nonp": lambda: DIPSGNN.from_params(**{**g, **priv, "C": options.C, "eps1": math.inf, "eps2": math.inf, **extra}),
        "Nonp-U": lambda: DIPSGNN.from_params(**{**g, **priv, "C": options.C, "eps2": math.inf, "user_mode": "id", **extra}),
        "Priv-U": lambda: DIPSGNN.from_params(**{**g, **priv, "C": options.C, "user_mode": "id", **extra}),
    }
    return builders[name]()


@dataclass
class MethodRun:
    """One fitted method at one seed: metrics (x100), timing and privacy statements."""

    method: str
    seed: int
    metrics: dict[str, float]
    masked: dict[str, float]
    fit_seconds: float
    epochs: int
    statements: dict[str, PrivacyStatement] = field(default_factory=dict)
    valid_curve: list[float] = field(default_factory=list)

    @property
    def seconds_per_epoch(self) -> float:
        return self.fit_seconds / max(self.epochs, 1)


def _left_aligned(samples: SequenceSamples, idx: np.ndarray, width: int, pad: int) -> torch.Tensor:
    """Inputs of ``samples[idx]`` left-padded to ``[len(idx), L]`` (SASRec's layout)."""
    x, lengths = batch_inputs(samples, idx, width, pad)
    out = torch.full_like(x, pad)
    keep = torch.arange(x.shape[1])[None, :] < lengths[:, None]
    shift = (x.shape[1] - lengths)[:, None].expand_as(x)
    rows = torch.arange(len(x))[:, None].expand_as(x)
    out[rows[keep], (torch.arange(x.shape[1])[None, :] + shift)[keep]] = x[keep]
    return out


def sample_scores(model: Recommender, samples: SequenceSamples, max_len: int, chunk: int = 500) -> Iterator[tuple[np.ndarray, torch.Tensor]]:
    """``(indices, scores)`` for successive chunks of ``samples``: SR-GNN models score the
    graph of each prefix, SASRec each prefix, the others each sample's user."""
    starts = range(0, len(samples), chunk)
    chunks = [np.arange(lo, min(lo + chunk, len(samples))) for lo in starts]
    if isinstance(model, GRAPH_MODELS):
        yield from zip(chunks, model.score_samples(samples, chunk))
    elif isinstance(model, SASRec):
        for idx in chunks:
            yield idx, model.score_sequences(_left_aligned(samples, idx, max_len, model.n_items_))
    else:
        for idx in chunks:
            yield idx, model.score(samples.users[idx])


def evaluate_samples(model: Recommender, samples: SequenceSamples, seen: sp.csr_matrix, n_items: int,
                     max_len: int, ks: Sequence[int] = (10, 20)) -> tuple[dict[str, float], dict[str, float]]:
    """Metrics x100 of the full ranking (paper protocol) and with training items masked."""
    k = min(max(ks), n_items)
    if isinstance(model, GRAPH_MODELS) and not model.net_.scores_are_random():
        # means over samples do not depend on their order; grouped by length, batches pad less
        samples = samples.by_length(max_len)
    plain, masked = [], []
    for idx, scores in sample_scores(model, samples, max_len):
        plain.append(torch.topk(scores, k, dim=1).indices)
        masked.append(torch.topk(mask_items(scores, seen, samples.users[idx]), k, dim=1).indices)
    truth = samples.truth(n_items)

    def scaled(topk: list[torch.Tensor]) -> dict[str, float]:
        out = ranking_metrics(torch.cat(topk).numpy(), truth, ks)
        return {m: 100 * float(out[m]) for m in out if m.split("@")[0] in ("recall", "mrr", "ndcg")}

    return scaled(plain), scaled(masked)


def run_method(name: str, seed: int, data: SequenceData, options: DIPSGNNOptions, backbone: dict[str, Any]) -> MethodRun:
    """Fit one method at one seed and evaluate it on the test samples."""
    model = build_method(name, options, backbone, seed)
    start = time.perf_counter()
    if isinstance(model, GRAPH_MODELS):
        model.fit(data.train)
    else:
        fit_part, valid = random_split(data.train, ratios=(0.9, 0.1), seed=seed)
        model.fit(fit_part, valid)
    seconds = time.perf_counter() - start
    history = getattr(model, "history_", None)
    epochs = len(history.losses) if history is not None else 1
    metrics, masked = evaluate_samples(model, data.test_samples, data.train.to_csr(), data.full.n_items, options.max_len)
    statement = getattr(model, "privacy_statement", None)
    statements = {} if statement is None else statement()
    if isinstance(statements, PrivacyStatement):
        statements = {"interactions": statements}
    curve = [] if history is None else [float(v) for _, v in history.valid]
    return MethodRun(name, seed, metrics, masked, seconds, epochs, dict(statements), curve)


# ---------------------------------------------------------------------------- tables


def _mean_std(runs: list[MethodRun], metric: str, masked: bool = False) -> MeanSD:
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


def paper_table2(column: str | None) -> dict[str, tuple[float, ...]]:
    """Paper 002, Table 2 (eps1 = 20, eps2 = 5) for one dataset ``column`` (ML-1M, Yelp or Tmall):
    ``method -> PAPER_METRICS values`` in % (papers/002/reference.yaml); empty for no column."""
    table = reference("002").table("Table 2")
    keys = [f"{column}/{m}" for m in PAPER_METRICS]
    return {method: tuple(cells[k] for k in keys) for method, cells in table.items() if keys[0] in cells}


def _paper_row(column: str | None, method: str) -> list[Any]:
    values = paper_table2(column).get(method)
    return list(values) if values else [None] * 4


def add_table2(results: Results, runs: dict[str, list[MethodRun]], column: str | None, seeds: int) -> list[str]:
    """Table 2 layout (means ± std, paper beside ours), the Improve row, the masked variant."""
    head = ["type", "method"] + [f"{m} (ours)" for m in PAPER_METRICS] + [f"{m} (paper {column or 'n/a'})" for m in PAPER_METRICS]
    rows = []
    for name, method_runs in runs.items():
        cells = [_mean_std(method_runs, m).format(2) for m in PAPER_METRICS]
        rows.append(list(METHODS[name]) + cells + _paper_row(column, name))
    if "DIPSGNN" in runs and "EdgeRand" in runs:
        ours = [improvement(runs["DIPSGNN"], runs["EdgeRand"], m) for m in PAPER_METRICS]
        paper = paper_table2(column)
        paper_imp = [100 * (d - e) / e for d, e in zip(paper["DIPSGNN"], paper["EdgeRand"])] if paper else [None] * 4
        rows.append(["", "Improve (DIPSGNN vs EdgeRand)"]
                    + [f"{rel:+.2f}%{'*' if p < 0.01 else ''} (p={p:.2g})" for rel, p in ours]
                    + [None if v is None else f"{v:+.2f}%" for v in paper_imp])
    caption = (f"Recall/MRR x100 over all items, seen items not masked (paper protocol); mean ± std over {seeds} seed(s); "
               "* = paired t-test over seeds p < 0.01")
    masked_rows = [[METHODS[n][1]] + [_mean_std(r, m, masked=True).mean for m in PAPER_METRICS] for n, r in runs.items()]
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
    ours = [_mean_std(runs[m], "recall@20").mean for m in common]
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
    base = _mean_std(runs["SRGNN"], "recall@20").mean
    parts = [f"{METHODS[m][1]}: {_mean_std(runs[m], 'recall@20').mean:.2f} vs {base:.2f} "
             f"({100 * (_mean_std(runs[m], 'recall@20').mean - base) / base:+.1f}%)"
             for m in ("DIPSGNN", "DIPSGNN_legacy") if m in runs]
    return ("Recall@20 gap to non-private SR-GNN (paper on ML-1M: 21.13 vs 21.01): " + "; ".join(parts) + ".") if parts else ""


# ---------------------------------------------------------------------------- the study


def backbone_params(config: Config) -> dict[str, Any]:
    """SR-GNN parameters of every graph method: ``model.params`` with the config's ``noise``
    (the seed comes from ``seeds``)."""
    if config.model.name != "srgnn":
        raise ConfigError(f"model.name: the dipsgnn study trains the SR-GNN backbone; expected 'srgnn', got {config.model.name!r}")
    return {**{k: v for k, v in config.model.params.items() if k != "seed"}, "noise": config.noise}


def run_methods(methods: Sequence[str], data: SequenceData, options: DIPSGNNOptions,
                backbone: dict[str, Any], desc: str) -> dict[str, list[MethodRun]]:
    """Every method at every seed."""
    jobs = [(m, s) for m in methods for s in options.seeds]
    runs: dict[str, list[MethodRun]] = {m: [] for m in methods}
    for method, seed in progress(jobs, desc=desc, total=len(jobs)):
        if method == "DPMF_exp" and data.train.ratings is None:
            continue
        runs[method].append(run_method(method, seed, data, options, backbone))
    return {m: r for m, r in runs.items() if r}


def sweep_default(parameter: str, options: DIPSGNNOptions, backbone: dict[str, Any]) -> float:
    """The study's own value of a swept parameter (T = ``n_steps`` lives in the backbone)."""
    return backbone.get("n_steps", 1) if parameter == "n_steps" else getattr(options, parameter)


def sweep_point(parameter: str, value: float, options: DIPSGNNOptions,
                backbone: dict[str, Any]) -> tuple[DIPSGNNOptions, dict[str, Any]]:
    """Options and backbone with ``parameter`` set to ``value`` (one point of Figs. 3-6)."""
    if parameter == "n_steps":
        return options, {**backbone, "n_steps": int(value)}
    return options.model_copy(update={parameter: value}), backbone


def run_sweep(sweep: SweepSpec, data: SequenceData, options: DIPSGNNOptions, backbone: dict[str, Any],
              results: Results, done: dict[str, list[MethodRun]]) -> tuple[str, str]:
    """Recall@20 of the sweep's methods at each value (table and figure); ``done`` holds the
    runs at the study's own settings, reused at the sweep point equal to them."""
    curves: dict[str, list[float]] = {m: [] for m in sweep.methods}
    default = sweep_default(sweep.parameter, options, backbone)
    for value in sweep.values:
        point_options, point_backbone = sweep_point(sweep.parameter, value, options, backbone)
        todo = [m for m in sweep.methods if not (value == default and m in done)]
        runs = {**{m: done[m] for m in sweep.methods if m not in todo},
                **run_methods(todo, data, point_options, point_backbone, f"sweep {sweep.parameter}={value:g}")}
        for m in sweep.methods:
            mean = _mean_std(runs[m], "recall@20").mean
            curves[m].append(mean)
            results.metrics[f"sweep/{sweep.parameter}={value:g}/{m}/recall@20"] = mean
    key = f"sweep-{sweep.parameter}"
    rows = [[v] + [curves[m][i] for m in sweep.methods] for i, v in enumerate(sweep.values)]
    table = results.add_table(key, [sweep.parameter] + [f"{m} Recall@20" for m in sweep.methods], rows,
                              f"Recall@20 (x100, mean over {len(options.seeds)} seed(s)) against {sweep.parameter}")
    png = line_plot({METHODS[m][1]: (sweep.values, curves[m]) for m in sweep.methods}, sweep.parameter, "Recall@20 (%)",
                    markers=True)
    return table, results.add_figure(key, png, f"Recall@20 against {sweep.parameter} (paper Figs. 3-6)")


@dataclass(frozen=True)
class DIPSGNNStudy:
    """The study's public entry for scripts that run it one (method, seed) at a time (the
    benchmarks resume long grids that way): the prepared data, the options and the backbone,
    and the study's own steps on them. A sweep point is ``(parameter, value)`` (Figs. 3-6)."""

    config: Config
    options: DIPSGNNOptions
    backbone: dict[str, Any]
    data: SequenceData | None = None

    @classmethod
    def load(cls, config: Config, prepare: bool = True) -> "DIPSGNNStudy":
        """Validate the study options and, with ``prepare``, run steps 1-2 of the protocol
        (module docstring; without, the study can only summarise and name its defaults)."""
        options = validate_options(DIPSGNNOptions, config.study_options)
        data = prepare_sequences(config, options, new_results(config)) if prepare else None
        return cls(config, options, backbone_params(config), data)

    @property
    def prepared(self) -> SequenceData:
        if self.data is None:
            raise ConfigError("this DIPSGNN study was loaded without its data (prepare=False)")
        return self.data

    def at(self, point: tuple[str, float] | None) -> tuple[DIPSGNNOptions, dict[str, Any]]:
        """Options and backbone of a sweep point (the study's own without one)."""
        return (self.options, self.backbone) if point is None else sweep_point(*point, self.options, self.backbone)

    def model(self, method: str, seed: int, point: tuple[str, float] | None = None) -> Recommender:
        """The unfitted recommender of ``method`` (a Table 2 row or ablation)."""
        return build_method(method, *self.at(point), seed)

    def evaluate(self, model: Recommender) -> tuple[dict[str, float], dict[str, float]]:
        """Test metrics x100 of a fitted model: paper protocol and training items masked."""
        data = self.prepared
        return evaluate_samples(model, data.test_samples, data.train.to_csr(), data.full.n_items, self.options.max_len)

    def run(self, method: str, seed: int, point: tuple[str, float] | None = None) -> MethodRun:
        """Fit ``method`` at ``seed`` (at a sweep point) and evaluate it (step 3-4)."""
        return run_method(method, seed, self.prepared, *self.at(point))

    def default(self, parameter: str) -> float:
        """The study's own value of a swept parameter."""
        return sweep_default(parameter, self.options, self.backbone)


def run_dipsgnn(config: Config, options: DIPSGNNOptions) -> Results:
    """The ``dipsgnn`` study (module docstring)."""
    backbone = backbone_params(config)
    results = new_results(config)
    data = prepare_sequences(config, options, results)
    column = options.paper_column or PAPER_COLUMN_OF.get(config.dataset.name)
    with results.timed("methods"):
        runs = run_methods(options.methods, data, options, backbone, "dipsgnn")
    for name, method_runs in runs.items():
        for metric in PAPER_METRICS:
            summary = _mean_std(method_runs, metric)
            results.metrics[f"{name}/{metric}"], results.metrics[f"{name}/{metric}/std"] = summary.mean, summary.sd
        for label, s in method_runs[0].statements.items():
            if s.formal:
                results.metrics[f"{name}/epsilon/{label}"] = float(np.mean([r.statements[label].epsilon for r in method_runs]))
        results.metrics[f"{name}/seconds_per_epoch"] = float(np.median([r.seconds_per_epoch for r in method_runs]))
    results.seeds.update({f"seed{i}": s for i, s in enumerate(options.seeds)})
    tables = add_table2(results, runs, column, len(options.seeds))
    n = data.test_samples
    text = [
        f"Dataset `{data.full.name}`: {data.full.n_users} users, {data.full.n_items} items, {len(data.full)} interactions "
        f"after preprocessing and keeping the last {options.max_len} per user; {len(data.train)} training and "
        f"{len(data.test)} test interactions, {len(n)} test samples ({options.test_context}).",
        gap_text(runs), ordering_text(runs, column),
        "User features: " + ("none (user-id embeddings; the paper's '-U' variants)" if options.features is None else
                             ", ".join(options.features.numeric + options.features.categorical)) + ".",
    ]
    results.add_section("DIPSGNN: comparative results (paper Table 2)", "\n\n".join(t for t in text if t), tables)
    results.add_section("Privacy statements", "Every statement as its model reports it; the whole-run figures count "
                        "every release of one transition over training prefixes, epochs and both adjacency directions.",
                        [add_privacy_table(results, runs)])
    results.add_section("Training time", "", [add_timing_table(results, runs)])
    for sweep in options.sweeps:
        table, figure = run_sweep(sweep, data, options, backbone, results, runs)
        results.add_section(f"Sweep over {sweep.parameter}", "", [table], [figure])
    return results


register_study("dipsgnn", run_dipsgnn, DIPSGNNOptions,
               "DIPSGNN (paper 002): private sequential recommendation against its baselines")


# ---------------------------------------------------------------------------- audit section


class DIPSGNNAuditOptions(StudyOptions):
    """DIPSGNN trained beside a sequential target: budgets, row norm and training length."""

    eps1: float = Field(20.0, gt=0)
    eps2: float = Field(5.0, gt=0)
    delta: float = Field(2.5e-7, gt=0, lt=1)
    C: float = Field(0.2, gt=0)
    n_epochs: PositiveInt = 5
    features: FeatureSpec | None = Field(default_factory=_ml1m_features)


def _audit_features(options: DIPSGNNAuditOptions, train: Interactions) -> dict[str, Any]:
    f = options.features
    table = train.user_features
    if f is None or table is None or any(c not in table.columns for c in f.numeric + f.categorical):
        return {"user_mode": "id"}
    return {"user_mode": "features", "user_numeric": f.numeric, "user_categorical": f.categorical,
            "user_categories": f.categories or None, "user_bounds": f.bounds or None}


def utility_cost_row(name: str, model: Any, ctx: AuditContext, k: int) -> Risk:
    """Reference risk row: Recall@k of the private ``model`` against the target's on the same
    test users (paired bootstrap over users); a utility cost, not an attack."""
    value, base, change = utility_change(model, ctx.model, ctx.data, k)
    text = (f"reference: {name} costs {-change.value:.4f} [{-change.high:+.4f}, {-change.low:+.4f}] of the target's Recall@{k}"
            if change.high < 0 else f"reference: no measurable utility cost ({change.value:+.4f} [{change.low:+.4f}, {change.high:+.4f}])")
    return Risk(f"{name} utility (reference, not an attack)", f"Recall@{k}", value.value, base, text,
                "the undefended target", (value.low, value.high), change)


def dipsgnn_section(ctx: AuditContext, out: SectionWriter) -> None:
    """Offer DIPSGNN as the private alternative of a sequential target (utility + statements)."""
    if not ctx.model.sequential:
        out.write(f"The target `{type(ctx.model).__name__}` does not use the order of interactions, so DIPSGNN "
                  "(a private sequential recommender) is not offered as its alternative.")
        return
    o = ctx.options
    model = DIPSGNN.from_params(eps1=o.eps1, eps2=o.eps2, delta=o.delta, C=o.C, n_epochs=o.n_epochs, seed=ctx.config.seed,
                                noise=ctx.config.noise, **_audit_features(o, ctx.data.train))
    model.fit(ctx.data.train, ctx.data.valid)
    ks = ctx.config.eval.ks
    target, private = test_metrics(ctx.model, ctx.data, ks), test_metrics(model, ctx.data, ks)
    columns, target_rows = metrics_rows(target, ks)
    _, private_rows = metrics_rows(private, ks)
    rows = [[name, *t[1:], *p[1:]] for name, t, p in zip((r[0] for r in target_rows), target_rows, private_rows)]
    out.add_table("utility", ["metric"] + [f"target {c}" for c in columns[1:]] + [f"DIPSGNN {c}" for c in columns[1:]], rows,
                  "Full-ranking test metrics of the target and of DIPSGNN on the same split")
    for name, value in private.items():
        out.add_metric(name, value)
    out.add_risk_row(utility_cost_row("DIPSGNN", model, ctx, ks[0]))
    statements = {"target": PrivacyStatement.no_guarantee("interactions and user features", "training and serving",
                                                          f"{type(ctx.model).__name__} is trained without privacy noise")}
    statements.update({f"DIPSGNN: {k}": v for k, v in model.privacy_statement().items()})
    out.add_table("privacy", ["model: guarantee", "epsilon", "delta", "setting", "scope", "notes", "noise"],
                  [[k, s.epsilon if s.formal else None, s.delta, s.setting, s.scope, "; ".join(s.notes), s.noise]
                   for k, s in statements.items()], "Privacy statements (epsilon n/a: no formal guarantee)")
    out.write(f"The target is sequential, so DIPSGNN (paper 002) is trained on the same training split as a private "
              f"alternative: user features under {o.eps1:g}-LDP and edges under ({o.eps2:g}, {o.delta:g})-DP per forward "
              f"pass (C = {o.C:g}, sigma = {model.sigma_:.4g}). The whole-run figure composes every release of one "
              "transition during training; it is the honest one to compare with the target's absence of a guarantee.")


register_audit_section("dipsgnn", dipsgnn_section, "A private alternative: DIPSGNN", DIPSGNNAuditOptions, order=60,
                       needs=("builtin",))
