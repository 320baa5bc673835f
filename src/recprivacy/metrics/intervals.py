"""Confidence intervals for attack results, so a reader can tell a measurement from noise.

* ``Estimate``: a value with its interval, how the interval was made, and the sample size; an
  estimate the sample cannot resolve (TPR at an FPR below ``1 / n_negatives``) carries
  ``resolvable = False`` and prints as "not resolvable with n = ...", never as a number.
* ``auc_interval``: ROC AUC with a stratified percentile bootstrap (members and non-members
  resampled separately, so each replicate keeps the group sizes). Each replicate's AUC is the
  Mann-Whitney statistic ``(R_pos - n_pos (n_pos + 1) / 2) / (n_pos n_neg)`` with ``R_pos``
  the sum of the positives' mid-ranks, computed for all replicates in one ranking.
* ``auc_difference_interval``: the same bootstrap, paired: attack and baseline scored on the
  same resampled targets, so the interval of their difference is not inflated by scoring
  them on different samples.
* ``tpr_at_fpr_interval``: the threshold is the empirical one (largest TPR with FPR <= f, as
  ``attack.tpr_at_fpr``); the TPR it gives, ``k / n_pos``, gets an exact two-sided
  Clopper-Pearson interval. The interval ignores the threshold's own sampling error, stated in
  ``method``.
* ``paired_difference_interval``: any metric of an attack and of its baseline on the same
  targets (mean Recall@k, accuracy, weighted F1), with a paired *cluster* bootstrap over
  users (a user's several targets resampled together), giving the attack's interval and the
  interval of its margin over the baseline, the margin ``metrics.verdict.judge_attack`` reads.
* ``roc_band``: the ROC curve on a grid of false-positive rates with a pointwise band from the
  same stratified bootstrap, for figures.
* ``mean_interval``: mean over seeds with a Student-t interval from the *sample* standard
  deviation (``ddof = 1``), the one "± sd" convention of recprivacy.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from recprivacy.metrics.attack import _binary_inputs, tpr_at_fpr

LEVEL = 0.95
N_BOOTSTRAP = 1000


@dataclass(frozen=True)
class Estimate:
    """``value`` with its ``level`` interval ``[low, high]`` (``method`` says how), from ``n`` samples."""

    value: float
    low: float
    high: float
    method: str
    n: int
    level: float = LEVEL
    resolvable: bool = True

    def __str__(self) -> str:
        if not self.resolvable:
            return f"not resolvable with n = {self.n}"
        return f"{self.value:.3f} [{self.low:.3f}, {self.high:.3f}]"

    def shifted(self, by: float) -> Estimate:
        """The estimate minus ``by`` (a constant baseline): the margin over it."""
        return Estimate(self.value - by, self.low - by, self.high - by, self.method, self.n, self.level, self.resolvable)

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value if self.resolvable else None, "low": self.low, "high": self.high,
                "method": self.method, "n": self.n, "level": self.level, "resolvable": self.resolvable}  # fmt: skip


def _stratified_indices(y: np.ndarray, n_boot: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Bootstrap replicates of the positive and of the negative positions, ``(B, n_pos)`` and ``(B, n_neg)``."""
    rng = np.random.default_rng(seed)
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    return rng.choice(pos, size=(n_boot, len(pos))), rng.choice(neg, size=(n_boot, len(neg)))


def _auc_replicates(scores: np.ndarray, pos: np.ndarray, neg: np.ndarray, cells: int = 4_000_000) -> np.ndarray:
    """Mann-Whitney AUC of every replicate (row ``r`` of ``pos`` / ``neg`` indexes ``scores``):
    ``U / (n_pos n_neg)`` with ``U = sum over the replicate's positives of (#negatives below + 1/2 #tied)``,
    the mid-rank statistic of the module docstring without ranking each replicate. The distinct scores
    are sorted once; a replicate's draws, counted per distinct score (``P`` positives, ``N`` negatives),
    give ``2U = sum_g P_g (2 N_<g + N_g)`` with ``N_<g`` the negatives below score ``g``, in integers,
    so every replicate's AUC is exact (the same float as ranking it). Replicates are taken in chunks of
    at most ``cells`` counts."""
    n_pos, n_neg = pos.shape[1], neg.shape[1]
    group = np.unique(scores, return_inverse=True)[1].ravel()  # each position's rank among the distinct scores
    n_groups = int(group.max()) + 1
    out = np.empty(len(neg))
    step = max(1, cells // n_groups)
    for start in range(0, len(neg), step):
        positives = _group_counts(group[pos[start:start + step]], n_groups)
        negatives = _group_counts(group[neg[start:start + step]], n_groups)
        below = np.cumsum(negatives, axis=1) - negatives
        out[start:start + step] = np.einsum("ij,ij->i", positives, 2 * below + negatives) / 2.0
    return out / (n_pos * n_neg)


def _group_counts(groups: np.ndarray, n_groups: int) -> np.ndarray:
    """``counts[r, g]``: how often row ``r`` of ``groups`` holds ``g``."""
    rows = len(groups)
    flat = (np.arange(rows)[:, None] * n_groups + groups).ravel()
    return np.bincount(flat, minlength=rows * n_groups).reshape(rows, n_groups)


def _percentile(values: np.ndarray, level: float) -> tuple[float, float]:
    a = (1.0 - level) / 2.0
    low, high = np.quantile(values, [a, 1.0 - a])
    return float(low), float(high)


def auc_interval(y_true: Any, scores: Any, level: float = LEVEL, n_boot: int = N_BOOTSTRAP, seed: int = 0) -> Estimate:
    """ROC AUC of ``scores`` with a stratified percentile-bootstrap interval (module docstring)."""
    y, s = _binary_inputs(y_true, scores)
    pos, neg = _stratified_indices(y, n_boot, seed)
    whole = _auc_replicates(s, np.flatnonzero(y == 1)[None], np.flatnonzero(y == 0)[None])[0]
    low, high = _percentile(_auc_replicates(s, pos, neg), level)
    return Estimate(float(whole), low, high, f"stratified bootstrap ({n_boot})", len(y), level)


def auc_difference_interval(
    y_true: Any, scores: Any, baseline_scores: Any, level: float = LEVEL, n_boot: int = N_BOOTSTRAP, seed: int = 0
) -> Estimate:
    """AUC(scores) - AUC(baseline_scores) on the same targets, with a paired stratified bootstrap."""
    y, s = _binary_inputs(y_true, scores)
    _, b = _binary_inputs(y_true, baseline_scores)
    pos, neg = _stratified_indices(y, n_boot, seed)
    full_pos, full_neg = np.flatnonzero(y == 1)[None], np.flatnonzero(y == 0)[None]
    whole = _auc_replicates(s, full_pos, full_neg)[0] - _auc_replicates(b, full_pos, full_neg)[0]
    low, high = _percentile(_auc_replicates(s, pos, neg) - _auc_replicates(b, pos, neg), level)
    return Estimate(float(whole), low, high, f"paired stratified bootstrap ({n_boot})", len(y), level)


def clopper_pearson(k: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """Exact two-sided binomial interval for ``k`` successes in ``n`` trials."""
    a = (1.0 - level) / 2.0
    low = 0.0 if k == 0 else float(stats.beta.ppf(a, k, n - k + 1))
    high = 1.0 if k == n else float(stats.beta.ppf(1.0 - a, k + 1, n - k))
    return low, high


def tpr_at_fpr_interval(y_true: Any, scores: Any, fpr: float, level: float = LEVEL) -> Estimate:
    """TPR at ``fpr`` with a Clopper-Pearson interval; not resolvable when ``fpr < 1 / n_neg``."""
    y, s = _binary_inputs(y_true, scores)
    n_pos, n_neg = int(y.sum()), int(len(y) - y.sum())
    if fpr * n_neg < 1.0:
        return Estimate(float("nan"), 0.0, 1.0, "FPR step 1/n larger than the target", n_neg, level, resolvable=False)
    tpr = tpr_at_fpr(y, s, (fpr,))[float(fpr)]
    low, high = clopper_pearson(int(round(tpr * n_pos)), n_pos, level)
    return Estimate(tpr, low, high, "Clopper-Pearson on TPR (threshold taken as fixed)", n_pos, level)


def _tpr_replicates(pos: np.ndarray, neg: np.ndarray, fprs: np.ndarray) -> np.ndarray:
    """TPR at each FPR of ``fprs`` for every replicate (rows of the positives' and negatives'
    scores): the share of positives scoring above the ``floor(f n_neg) + 1``-th highest negative,
    so that at most ``f n_neg`` negatives do (ties counted against the attack); ``(B, len(fprs))``."""
    negatives = -np.sort(-neg, axis=1)
    j = np.floor(fprs * neg.shape[1] + 1e-9).astype(int)
    padded = np.concatenate([negatives, np.full((len(neg), 1), -np.inf)], axis=1)
    thresholds = padded[:, np.minimum(j, neg.shape[1])]
    return (pos[:, :, None] > thresholds[:, None, :]).mean(axis=1)


def roc_band(y_true: Any, scores: Any, fprs: Sequence[float], level: float = LEVEL, n_boot: int = 200,
             seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """The ROC curve as TPR at each false-positive rate of ``fprs`` (at most that share of
    non-members flagged, ties against the attack) with a pointwise ``level`` band from a
    stratified bootstrap over the targets (members and non-members resampled separately):
    ``(tpr, low, high)``."""
    y, s = _binary_inputs(y_true, scores)
    grid = np.asarray(fprs, dtype=np.float64)
    pos, neg = _stratified_indices(y, n_boot, seed)
    whole = _tpr_replicates(s[y == 1][None], s[y == 0][None], grid)[0]
    a = (1.0 - level) / 2.0
    low, high = np.quantile(_tpr_replicates(s[pos], s[neg], grid), [a, 1.0 - a], axis=0)
    return whole, low, high


def mean_interval(values: Sequence[float], level: float = LEVEL, bounds: tuple[float, float] | None = None) -> Estimate:
    """Mean over seeds with a Student-t interval (sample sd, ``ddof = 1``); one value gives a point, and
    so do values that are not all finite but equal (ε = inf in every seed); unequal ones, NaN bounds.

    ``bounds``: the range the metric cannot leave (``(0, 1)`` for a rate or an AUC); the
    interval is clipped to it, since with few seeds the t interval can reach past it."""
    x = np.asarray(values, dtype=np.float64)
    if len(x) == 0:
        raise ValueError("mean_interval: no values")
    mean = float(x.mean())
    if len(x) == 1:
        return Estimate(mean, mean, mean, "single seed (no interval)", 1, level)
    if not np.isfinite(x).all():  # a non-private method's epsilon: equal values are their own interval
        edge = mean if (x == x[0]).all() else math.nan
        return Estimate(mean, edge, edge, f"no t interval over {len(x)} seeds: a value is not finite", len(x), level)
    half = float(stats.t.ppf((1.0 + level) / 2.0, len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x)))
    low, high = mean - half, mean + half
    if bounds is not None:
        low, high = max(low, bounds[0]), min(high, bounds[1])
    return Estimate(mean, low, high, f"t interval over {len(x)} seeds", len(x), level)


def _cluster_weights(groups: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """``(B, n)`` bootstrap weights: clusters (``groups``) drawn with replacement, each row
    weighted by how often its cluster was drawn."""
    _, inverse = np.unique(groups, return_inverse=True)
    n_clusters = int(inverse.max()) + 1
    counts = np.random.default_rng(seed).multinomial(n_clusters, np.full(n_clusters, 1.0 / n_clusters), size=n_boot)
    return counts[:, inverse].astype(np.float64)


def paired_difference_interval(
    attack: Callable[[np.ndarray | None], float],
    baseline: Callable[[np.ndarray | None], float],
    groups: Any,
    level: float = LEVEL,
    n_boot: int = N_BOOTSTRAP,
    seed: int = 0,
) -> tuple[Estimate, float, Estimate]:
    """Attack and ``attack - baseline`` on the same targets, with a paired cluster bootstrap.

    ``attack(w)`` and ``baseline(w)`` compute one metric (mean Recall@k, accuracy, weighted F1,
    ...) over the targets with sample weights ``w`` (``None``: every target once). Each
    replicate draws the clusters ``groups`` (one id per target; the user, so that a user's
    several targets move together) with replacement, and both statistics see the same draw, so
    the interval of their difference is not inflated by scoring them on different samples.

    Returns
    -------
    (attack estimate, baseline value, margin estimate)
    """
    groups = np.asarray(groups)
    weights = _cluster_weights(groups, n_boot, seed)
    a = np.array([attack(w) for w in weights])
    b = np.array([baseline(w) for w in weights])
    method = f"paired cluster bootstrap ({n_boot}, {len(np.unique(groups))} clusters)"
    value, base = float(attack(None)), float(baseline(None))
    lo, hi = _percentile(a, level)
    mlo, mhi = _percentile(a - b, level)
    return (Estimate(value, lo, hi, method, len(groups), level), base,
            Estimate(value - base, mlo, mhi, method, len(groups), level))  # fmt: skip


def weighted_mean(values: Any) -> Callable[[np.ndarray | None], float]:
    """``w -> sum(w v) / sum(w)``: a per-target metric's mean, as ``paired_difference_interval`` takes it."""
    v = np.asarray(values, dtype=np.float64)
    return lambda w: float(v.mean()) if w is None else float(w @ v / max(w.sum(), 1e-12))


def unpaired_difference(a: Estimate, b: Estimate) -> Estimate:
    """``a - b`` of two estimates on different samples, with the normal-approximation interval
    whose half-width is the root sum of squares of the two half-widths (each interval read as
    symmetric); used where the two measurements share no targets to pair."""
    half = float(np.hypot((a.high - a.low) / 2.0, (b.high - b.low) / 2.0))
    value = a.value - b.value
    return Estimate(value, value - half, value + half, f"unpaired ({a.method}; {b.method})", min(a.n, b.n), a.level,
                    a.resolvable and b.resolvable)  # fmt: skip
