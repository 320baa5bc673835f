"""The built-in ``utility`` section: the target's full-ranking accuracy against the exact
expectation of a uniformly random ranking of the same candidates (a reference row of the risk
summary, not an attack), and how concentrated its recommendations are on popular items compared
with the training data.

Decision (issue 33): the section ranks a seeded random sample of at most ``max_users`` test
users (``experiments.sampling``; 20,000 by default), so its cost is sample x catalogue rather
than users x catalogue (at ML-20M's shape ~97k test users x 26,744 items, three full rankings);
the report states the sample, and the risk rows' paired bootstrap intervals are over it.
Data with fewer test users rank all of them, in id order, so their numbers are unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
from pydantic import PositiveInt

from recprivacy.config import StudyOptions
from recprivacy.experiments.audit.plan import catalogue_fit
from recprivacy.experiments.audit.registry import AuditContext, register_audit_section
from recprivacy.experiments.audit.writer import SectionWriter
from recprivacy.experiments.sampling import sample_users
from recprivacy.experiments.train import PreparedData, metrics_rows
from recprivacy.metrics.intervals import Estimate, paired_difference_interval, weighted_mean
from recprivacy.metrics.ranking import evaluate, ranking_metrics
from recprivacy.metrics.verdict import judge_reference, users_sample
from recprivacy.models.base import Recommender
from recprivacy.report.figures import line_plot


#: the baseline of the utility rows
RANDOM_RANKING = "a random ranking (expectation)"


class UtilityOptions(StudyOptions):
    """``k``: length of the recommendation lists whose item popularity is analysed;
    ``max_users``: rank a seeded random sample of at most this many test users (None: all)."""

    k: PositiveInt = 10
    max_users: PositiveInt | None = 20_000


def random_ranking_expectation(test: sp.csr_matrix, masked: sp.csr_matrix, k: int, per_user: bool = False) -> dict[str, Any]:
    """Expected Recall@k and NDCG@k of a uniformly random ranking of each user's candidates.

    User u has ``C`` candidate (unmasked) items, ``T`` test items of which ``T_c`` are
    candidates. Every rank holds a relevant item with probability ``T_c / C``, so with
    ``k' = min(k, C)`` and ``D(n) = sum_{j<=n} 1 / log2(j + 1)``:

        E[Recall@k] = k' T_c / (C T)        E[NDCG@k] = (T_c / C) D(k') / D(min(T, k))
        E[Precision@k] = k' T_c / (C k)

    averaged over users with ``T >= 1`` (the same users ``metrics.ranking.evaluate`` averages);
    ``per_user``: the arrays over those users (in id order) instead of their means.
    """
    n_items = test.shape[1]
    test = (test != 0).astype(np.int64).tocsr()
    masked = (masked != 0).astype(np.int64).tocsr()
    t = np.diff(test.indptr)
    users = t > 0
    overlap = np.asarray(test.multiply(masked).sum(axis=1)).ravel()
    c = n_items - np.diff(masked.indptr)
    t, tc, c = t[users], (t - overlap)[users], c[users]
    kk = np.minimum(k, c)
    d = np.concatenate(([0.0], np.cumsum(1.0 / np.log2(np.arange(2, max(k, 1) + 2)))))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = {"recall": np.where(c > 0, kk * tc / (c * t), 0.0),
               "ndcg": np.where(c > 0, tc / c * d[kk] / d[np.minimum(t, k)], 0.0),
               "precision": np.where(c > 0, kk * tc / (c * k), 0.0)}  # fmt: skip
    return out if per_user else {name: float(v.mean()) for name, v in out.items()}


def popularity_curves(train_counts: np.ndarray, recommended: np.ndarray) -> dict[str, np.ndarray]:
    """Cumulative shares over the catalogue sorted from most to least popular in training.

    ``x[j]`` = fraction of the catalogue in the ``j + 1`` most popular items; ``train[j]`` and
    ``recs[j]`` = share of training interactions / recommendation slots those items receive.
    """
    n = len(train_counts)
    order = np.argsort(-train_counts, kind="stable")
    rec_counts = np.bincount(recommended.ravel(), minlength=n)
    return {
        "x": np.arange(1, n + 1) / n,
        "train": np.cumsum(train_counts[order]) / max(train_counts.sum(), 1),
        "recs": np.cumsum(rec_counts[order]) / max(rec_counts.sum(), 1),
        "coverage": np.array((rec_counts > 0).mean()),
    }


def utility_section(ctx: AuditContext, out: SectionWriter) -> None:
    """Target accuracy vs a random ranking, and popularity of what it recommends."""
    ks = ctx.config.eval.ks
    data = ctx.data
    everyone = np.unique(data.test.users)
    users = sample_users(everyone, ctx.options.max_users, ctx.config.seed)
    metrics = target_test_metrics(ctx, ks, users=users)
    test, masked = data.test.to_csr()[users], (data.train.to_csr() + data.valid.to_csr())[users]
    blind = {k: random_ranking_expectation(test, masked, k) for k in ks}
    for name, value in metrics.items():
        out.add_metric(name, value)
    columns, rows = metrics_rows(metrics, ks)
    rows += [[f"{m} (random ranking)"] + [blind[k][m] for k in ks] for m in ("recall", "ndcg")]
    out.add_table("metrics", columns, rows, f"Test metrics over {int(metrics['n_users'])} users; random ranking = expectation")
    _utility_risks(ctx, out, ks[0], users)
    how = (f"Full ranking over all {data.full.n_items} items with each user's training and validation items masked."
           if ctx.model is not None else
           f"Computed from the top-{max(ks)} lists the target serves each test user from their training history.")
    out.write(f"{how} The random-ranking rows give the exact expectation of a uniformly random order of the same "
              "candidates.")
    if len(users) < len(everyone):
        out.write(f"Ranked a seeded random sample of {len(users)} of the {len(everyone)} test users (`max_users`); "
                  "the intervals in the risk summary are a bootstrap over that sample.")  # fmt: skip
    _popularity_analysis(ctx, out, users)


def target_test_metrics(ctx: AuditContext, ks: Sequence[int], per_user: bool = False,
                        users: np.ndarray | None = None) -> dict[str, Any]:  # fmt: skip
    """Test metrics of the target: full ranking for a built-in model (training and validation
    items masked), else computed from the top-``max(ks)`` lists it serves the test users.

    Parameters
    ----------
    ctx:
        The audit context.
    ks:
        Cut-offs.
    per_user:
        Per-user arrays over the users with a test interaction (in id order) instead of means.
    users:
        Sorted internal ids of the test users to rank (default: every user with a test interaction).

    Returns
    -------
    dict
        ``<metric>@<k>`` and ``n_users``, as ``metrics.ranking.evaluate`` returns them.
    """
    if users is None:
        users = np.unique(ctx.data.test.users)
    if ctx.model is not None:
        metrics = evaluate(ctx.model, ctx.data.test, ks=ks, exclude=ctx.data.valid, users=users, per_user=per_user)
    else:
        lists = ctx.target.serve(users, max(ks), ctx.data.train, trained=True)
        metrics = ranking_metrics(lists, ctx.data.test.to_csr()[users], ks=ks, per_user=per_user)
    return metrics if per_user else {name: float(value) for name, value in metrics.items()}


def _utility_risks(ctx: AuditContext, out: SectionWriter, k: int, users: np.ndarray) -> None:
    """Recall@k and NDCG@k of the target beside a random ranking's expectation, per test user
    of ``users``, with a paired bootstrap interval of the difference: a reference row, not an
    attack, read "above" / "not above" a random ranking (``metrics.verdict.judge_reference``)."""
    data = ctx.data
    ours = target_test_metrics(ctx, (k,), per_user=True, users=users)
    masked = data.train.to_csr() + data.valid.to_csr()
    blind = random_ranking_expectation(data.test.to_csr()[users], masked[users], k, per_user=True)
    for m, label in (("recall", "Recall"), ("ndcg", "NDCG")):
        value = np.nan_to_num(np.asarray(ours[f"{m}@{k}"], dtype=np.float64))
        est, base, margin = paired_difference_interval(weighted_mean(value), weighted_mean(blind[m]), users)
        verdict = judge_reference(margin, RANDOM_RANKING)
        out.reference("target utility (reference, not an attack)", f"{label}@{k}", est, base, RANDOM_RANKING, margin,
                      verdict, sample=users_sample(len(users)))  # fmt: skip
        if verdict.label == "not above":
            out.write(f"**The target's {label}@{k} is not above {RANDOM_RANKING}**: check its training before trusting "
                      "the attack results.")  # fmt: skip


def utility_change(model: Recommender, reference: Recommender, data: PreparedData, k: int) -> tuple[Estimate, float, Estimate]:
    """Recall@k of ``model`` and of ``reference`` on the same test users (full ranking,
    training and validation masked), with a paired bootstrap over users: (model's estimate,
    reference's value, change = model - reference)."""
    ours, theirs = (evaluate(m, data.test, ks=(k,), exclude=data.valid, per_user=True) for m in (model, reference))
    return paired_difference_interval(weighted_mean(np.nan_to_num(ours[f"recall@{k}"])),
                                      weighted_mean(np.nan_to_num(theirs[f"recall@{k}"])), ours["users"])  # fmt: skip


def _popularity_analysis(ctx: AuditContext, out: SectionWriter, users: np.ndarray) -> None:
    k = ctx.options.k
    recs = ctx.target.serve(users, k, ctx.data.train, trained=True)
    curves = popularity_curves(ctx.data.train.item_counts(), recs)
    top = max(1, int(round(0.1 * len(curves["x"])))) - 1
    out.add_metric(f"coverage@{k}", float(curves["coverage"]))
    out.add_metric(f"top10pct_share_recs@{k}", curves["recs"][top])
    out.add_metric("top10pct_share_train", curves["train"][top])
    png = line_plot(
        {"training interactions": (curves["x"], curves["train"]), f"top-{k} recommendations": (curves["x"], curves["recs"])},
        "fraction of catalogue (most popular items first)",
        "cumulative share",
    )
    out.add_figure("popularity", png, f"Where training interactions and top-{k} recommendations fall on the popularity curve.")
    out.write(
        f"**Popularity of recommendations.** The 10% most popular items hold {curves['train'][top]:.1%} of the training "
        f"interactions and receive {curves['recs'][top]:.1%} of the top-{k} recommendation slots; "
        f"{float(curves['coverage']):.1%} of the catalogue is recommended to at least one of {len(users)} users. "
        "Lists close to the popularity curve say little about an individual user; lists that reach further into the "
        "long tail are more personal, which is the signal membership and attribute inference work from."
    )


register_audit_section("utility", utility_section, "Utility of the target recommender", UtilityOptions, order=0,
                       fit=catalogue_fit("utility", "k"), needs=("test",))  # fmt: skip
