"""The ``train`` study: prepare a dataset, fit one recommender, evaluate it on test.

Steps (each timed in ``Results.timings``):

1. load the dataset (``recprivacy.data.registry.load_dataset``) and preprocess it;
2. split it into train / validation / test (``random``: per-user random fractions with the
   config seed; ``temporal``: by time). A degenerate dataset (fewer than 2 users or 2 items
   with interactions, or a split that leaves no test interaction) is refused with a
   ``DataError``, and so is a cut-off in ``eval.ks`` above the catalogue size
   (``check_cutoffs``, a ``ConfigError``): both would report perfect, meaningless metrics; a
   ``leave_last`` most users are too short for is a ``ConfigError`` (``check_leave_last``),
   and the report says how many users it cut short otherwise (``describe_split``);
3. fit the model on train, with the validation split driving early stopping where the model
   supports it (``model.params.seed`` defaults to the config seed);
4. full-ranking evaluation on test over all items, each user's training *and validation*
   items masked (``metrics.ranking.evaluate(..., exclude=valid)``).

``prepare_data``, ``fit_model``, ``test_metrics`` and ``describe_target`` are reused by the
audit and by later studies, so every study prepares data and targets the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from recprivacy.config import Config, SplitConfig, StudyOptions
from recprivacy.data.exposure import ExposureLog
from recprivacy.data.interactions import Interactions
from recprivacy.data.preprocess import preprocess
from recprivacy.data.registry import load_dataset
from recprivacy.data.split import largest_leave_last, leave_last_shortfall, random_split, temporal_split, user_partition
from recprivacy.errors import ConfigError, DataError
from recprivacy.experiments.results import Results
from recprivacy.experiments.runner import new_results, register_study
from recprivacy.metrics.ranking import evaluate
from recprivacy.models import make_model
from recprivacy.models.base import Recommender
from recprivacy.models.training import available_cores, thread_budget
from recprivacy.progress import plan
from recprivacy.report.figures import line_plot

METRIC_NAMES = ("recall", "ndcg", "mrr", "hit", "precision")


@dataclass(frozen=True)
class PreparedData:
    """The preprocessed dataset and its three splits (same id spaces). ``heldout_users`` are
    users kept out of all three splits: people the model never saw (the non-members of
    membership inference); see :func:`hold_out_users`. ``exposures``: what the target logged it
    showed users and what they clicked, when the auditor has it (its own id spaces)."""

    full: Interactions
    train: Interactions
    valid: Interactions
    test: Interactions
    heldout_users: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    exposures: ExposureLog | None = None


def prepare_data(config: Config, results: Results) -> PreparedData:
    """Load, preprocess and split the configured dataset; records its fingerprint and seeds."""
    ds = config.dataset
    with results.timed("load_data", ds.name):
        data = load_dataset(ds.name, ds.data_dir, **ds.options)
    with results.timed("preprocess"):
        p = ds.preprocessing
        data = preprocess(data, implicit_threshold=p.implicit_threshold, kcore=p.kcore, min_user=p.min_user, dedup=p.dedup)
    check_not_degenerate(data)
    check_leave_last(data, ds.split)
    with results.timed("split", f"{data.n_users} users x {data.n_items} items, {len(data)} interactions"):
        train, valid, test = split_data(data, ds.split, config.seed)
    if len(test) == 0:
        raise DataError(f"the {ds.split.kind} split leaves no test interactions ({len(data)} interactions); "
                        "expected users with at least 2 interactions or another dataset.split", data.name)  # fmt: skip
    results.dataset = data.fingerprint()
    if "seed" in ds.options:
        results.seeds["data"] = int(ds.options["seed"])
    if ds.split.kind == "random":
        results.seeds["split"] = config.seed
    return PreparedData(data, train, valid, test)


def check_not_degenerate(data: Interactions) -> None:
    """``DataError`` unless at least 2 users and 2 items have interactions (after preprocessing)."""
    users, items = int((data.user_counts() > 0).sum()), int((data.item_counts() > 0).sum())
    if users < 2 or items < 2:
        raise DataError(f"{users} user(s) and {items} item(s) with interactions after preprocessing; "
                        "expected at least 2 of each to train and evaluate a recommender", data.name)  # fmt: skip


def check_leave_last(data: Interactions, split: SplitConfig) -> None:
    """``ConfigError`` naming ``dataset.split.leave_last`` when most users have too few
    interactions for it: they would keep one training row and hold out less than it says."""
    if split.leave_last is None:
        return
    k = split.leave_last
    short, users = leave_last_shortfall(data, k, n_parts=3)
    if 2 * short <= users:
        return
    best = largest_leave_last(data, n_parts=3)
    expected = f"leave_last <= {best} for this dataset" if best else "kind: random (most users have fewer than 3 interactions)"
    raise ConfigError(f"dataset.split.leave_last={k}: {short} of {users} users of {data.name} have fewer than {2 * k + 1} "
                      f"interactions ({k} test + {k} validation + 1 training), so they would keep 1 training row; "
                      f"expected {expected}")  # fmt: skip


def describe_split(data: Interactions, split: SplitConfig) -> str:
    """The split as it was made, for the report: with ``leave_last``, how many users were too
    short for it (they keep their first interaction for training and hold out the rest)."""
    if split.leave_last is None:
        return f"{split.kind} split {list(split.ratios)}"
    k = split.leave_last
    short, users = leave_last_shortfall(data, k, n_parts=3)
    text = f"temporal split: each user's last {k} interactions held out for test and the {k} before them for validation"
    if short:
        text += (f" ({short} of {users} users have fewer than {2 * k + 1} interactions: they keep only their first "
                 "for training and hold out the rest, test first)")  # fmt: skip
    return text


def check_cutoffs(ks: Sequence[int], data: PreparedData) -> None:
    """``ConfigError`` naming ``eval.ks`` when a cut-off exceeds the catalogue (full ranking
    over ``n_items`` items makes every metric at such a k trivially perfect)."""
    too_long = [k for k in ks if k > data.full.n_items]
    if too_long:
        raise ConfigError(f"eval.ks: {too_long} exceed the catalogue of {data.full.name} ({data.full.n_items} items); "
                          f"expected every k <= {data.full.n_items}")  # fmt: skip


def hold_out_users(data: PreparedData, fraction: float, seed: int) -> PreparedData:
    """``data`` with a seeded random ``fraction`` of its users removed from train, validation
    and test and listed in ``heldout_users`` (``data.split.user_partition``)."""
    part_seed = int(np.random.SeedSequence([seed, 1]).generate_state(1)[0])
    held = user_partition(data.full, {"heldout": fraction}, seed=part_seed)["heldout"]
    keep = np.setdiff1d(np.flatnonzero(data.full.user_counts() > 0), held)
    return replace(data, train=data.train.subset_users(keep), valid=data.valid.subset_users(keep),
                   test=data.test.subset_users(keep), heldout_users=held)  # fmt: skip


def split_data(data: Interactions, split: SplitConfig, seed: int) -> tuple[Interactions, Interactions, Interactions]:
    """Train / validation / test as configured."""
    if split.kind == "random":
        return random_split(data, ratios=split.ratios, seed=seed)
    if split.leave_last is not None:
        return temporal_split(data, leave_last=split.leave_last, n_parts=3)
    return temporal_split(data, ratios=split.ratios)


def fit_model(config: Config, data: PreparedData, results: Results) -> Recommender:
    """Build the configured model (seeded with the config seed unless its params set one)
    and fit it on train with validation for early stopping."""
    params = {"seed": config.seed, **config.model.params}
    model = make_model(config.model.name, **params)
    with results.timed("fit", f"{config.model.name} on {len(data.train)} training interactions"):
        model.fit(data.train, data.valid)
    results.seeds["model"] = int(params["seed"])
    return model


def test_metrics(model: Recommender, data: PreparedData, ks: Sequence[int]) -> dict[str, float]:
    """Full-ranking test metrics (train and validation items masked)."""
    return {k: float(v) for k, v in evaluate(model, data.test, ks=ks, exclude=data.valid).items()}


def metrics_rows(metrics: dict[str, float], ks: Sequence[int]) -> tuple[list[str], list[list]]:
    """Columns ``metric, @k...`` and one row per ranking metric."""
    columns = ["metric"] + [f"@{k}" for k in ks]
    rows = [[name] + [metrics[f"{name}@{k}"] for k in ks] for name in METRIC_NAMES]
    return columns, rows


def describe_target(config: Config, data: PreparedData, model: Recommender, results: Results) -> str:
    """Add a section on the data splits, the model and its training; returns its title."""
    splits = [("all (preprocessed)", data.full), ("train", data.train), ("validation", data.valid), ("test", data.test)]
    rows = [[name, int((part.user_counts() > 0).sum()), int((part.item_counts() > 0).sum()), len(part)] for name, part in splits]
    tables = [
        results.add_table("data_splits", ["split", "users", "items", "interactions"], rows,
                          f"{data.full.name}: {data.full.n_users} users x {data.full.n_items} items, density {data.full.density:.4%}"),
        results.add_table("model_params", ["parameter", "value"], _param_rows(model), f"{type(model).__name__} hyperparameters"),
    ]
    text, figures = _training_summary(model, results)
    how = describe_split(data.full, config.dataset.split)
    title = "Data and model"
    threads = f"Thread budget: {thread_budget()} of {available_cores()} cores."
    results.add_section(title, f"Dataset `{data.full.name}`, {how}. Model `{config.model.name}`. {text} {threads}", tables,
                        figures)  # fmt: skip
    return title


def _param_rows(model: Recommender) -> list[list]:
    return [[k, v if isinstance(v, (int, float, str, bool)) or v is None else str(v)] for k, v in model.get_params().items()]


def _training_summary(model: Recommender, results: Results) -> tuple[str, list[str]]:
    """Text and curves from ``model.history_`` when the model trains iteratively."""
    history = getattr(model, "history_", None)
    if history is None or not history.losses:
        return "The model has no iterative training (closed form or counting).", []
    epochs = range(1, len(history.losses) + 1)
    figures = [results.add_figure("training_loss",
                                  line_plot({"training loss": (epochs, history.losses)}, "epoch", "mean training loss"),
                                  "Training loss per epoch.")]
    text = f"Trained {len(history.losses)} epochs"
    if history.valid:
        x = [e + 1 for e, _ in history.valid]
        y = [s for _, s in history.valid]
        figures.append(results.add_figure("validation",
                                          line_plot({"validation": (x, y)}, "epoch", "validation Recall@20", markers=True),
                                          "Validation Recall@20, the early-stopping metric of the built-in models "
                                          "(higher is better)."))  # fmt: skip
        text += f"; best validation score {history.best_score:.4f} at epoch {history.best_epoch + 1}"
        text += ", stopped early" if history.stopped_early else ""
    return text + ".", figures


def run_train(config: Config, options: StudyOptions) -> Results:
    """The ``train`` study (see module docstring)."""
    results = new_results(config)
    plan(["fit", "evaluate"])
    data = prepare_data(config, results)
    check_cutoffs(config.eval.ks, data)
    model = fit_model(config, data, results)
    with results.timed("evaluate", "full ranking on the test split"):
        metrics = test_metrics(model, data, config.eval.ks)
    results.metrics.update(metrics)
    columns, rows = metrics_rows(metrics, config.eval.ks)
    table = results.add_table("metrics", columns, rows, f"Test metrics of {config.model.name} over {int(metrics['n_users'])} users")
    results.add_section(
        "Test metrics",
        f"Full ranking over all {data.full.n_items} items; each user's training and validation items are masked.",
        [table],
    )
    describe_target(config, data, model, results)
    return results


register_study("train", run_train, StudyOptions, "fit one recommender and evaluate it with full-ranking metrics")
