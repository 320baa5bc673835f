"""Leakage metrics of the exposure attack as paper 000 uses them (§5.2; the formulas, which the
paper does not print, are those of the authors' code).

The attack outputs ``S`` ranked lists per pair: one per greedy decoding step for sequence
decoders (``S = M``), a single list for the point-wise decoder. For each distinct true item
``b`` of the pair let ``r_b`` be its best 0-based rank over the ``S`` lists. With cut-off
``c`` (``c = k``, or ``k * M`` for the point-wise "top-kM" list of footnote 5):

* ``Recall@k = |{b : r_b < c}| / |set(B)|``  (Eq. 20: the union of the per-step top-k lists
  intersected with the truth);
* ``NDCG@k   = (1 / |set(B)|) sum_b 1[r_b < c] / log2(r_b + 2)`` (no IDCG normalisation:
  each true item is scored like a single-target next-item metric, as in the authors' code);
* ``MRR@k    = (1 / |set(B)|) sum_b 1[r_b < c] / (r_b + 1)``.

These differ from the standard set metrics of ``metrics.ranking``. Decision: the truth is a
set, so a duplicated history item counts once (the code skipped such
pairs; without duplicates both agree). Averages are over pairs (the code) and, as a second
view, over users (the mean of each user's pair average, the paper's wording).

Ranks are computed without sorting: ``r_b`` in a list is the number of candidates scoring
strictly higher than ``b``, so ties never cost the truth a rank (scores are float logits;
baselines break ties by a fixed item order). A true item outside the candidates (score
``-inf``) never counts as found. With a ``depth`` ``D`` (the deepest cut-off the metrics
read, ``max(ks) * cutoff_factor``) only each list's ``D`` best scores are compared: an item
scoring below the ``D``-th best has at least ``D`` items above it and is reported as ``inf``,
and any other item has all its betters among those ``D``, so every rank below ``D`` is the
same as the full count's (about 10x cheaper on a 3,700-item catalogue).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

KS = (5, 10, 20)
METRICS = ("recall", "ndcg", "mrr")


def distinct_truth(histories: np.ndarray) -> np.ndarray:
    """Histories with every repeated item (after its first occurrence) replaced by -1."""
    h = np.asarray(histories, dtype=np.int64)
    repeat = (h[:, :, None] == h[:, None, :]) & np.tri(h.shape[1], k=-1, dtype=bool)[None]
    return np.where(repeat.any(axis=2), -1, h)


def best_ranks(step_scores: torch.Tensor, truth: torch.Tensor, depth: int | None = None) -> torch.Tensor:
    """Best 0-based rank over the ``S`` lists of every true item.

    ``step_scores``: ``[B, S, V]`` candidate scores (``-inf`` = not a candidate);
    ``truth``: ``[B, M]`` item columns, -1 for absent entries; ``depth``: compare against
    each list's ``depth`` best scores only (module docstring), None = the whole list.
    Returns float ``[B, M]``: NaN where the truth is absent, ``inf`` where the item is not a
    candidate (or, with ``depth``, ranks ``depth`` or lower).
    """
    present = truth >= 0
    idx = truth.clamp(min=0)
    true_scores = torch.gather(step_scores, 2, idx[:, None, :].expand(-1, step_scores.shape[1], -1))
    if depth is not None and depth < step_scores.shape[2]:
        top = torch.topk(step_scores, depth, dim=2).values
        higher = (top[:, :, None, :] > true_scores[:, :, :, None]).sum(dim=3, dtype=torch.int32).float()
        higher = torch.where(true_scores < top[:, :, -1:], torch.inf, higher)
    else:
        higher = torch.stack(
            [(step_scores > true_scores[:, :, m : m + 1]).sum(dim=2, dtype=torch.int32) for m in range(truth.shape[1])], dim=2
        ).float()
    higher = torch.where(torch.isinf(true_scores) & (true_scores < 0), torch.inf, higher)
    best = higher.min(dim=1).values
    return torch.where(present, best, torch.nan)


def per_pair_metrics(ranks: np.ndarray, ks: Sequence[int] = KS, cutoff_factor: int = 1) -> dict[str, np.ndarray]:
    """Recall / NDCG / MRR at each ``k`` for every pair (module docstring), from the
    ``best_ranks`` matrix (NaN = absent truth)."""
    ranks = np.asarray(ranks, dtype=np.float64)
    present = ~np.isnan(ranks)
    n_truth = present.sum(axis=1)
    r = np.where(present, ranks, np.inf)
    out = {}
    for k in ks:
        found = r < k * cutoff_factor
        with np.errstate(divide="ignore", invalid="ignore"):
            out[f"recall@{k}"] = found.sum(axis=1) / n_truth
            out[f"ndcg@{k}"] = np.where(found, 1.0 / np.log2(np.where(found, r, 0) + 2), 0.0).sum(axis=1) / n_truth
            out[f"mrr@{k}"] = np.where(found, 1.0 / (np.where(found, r, 0) + 1), 0.0).sum(axis=1) / n_truth
    return out


def average_metrics(per_pair: dict[str, np.ndarray], users: np.ndarray) -> dict[str, float]:
    """Pair averages (``recall@10``, ...) and user averages (``user/recall@10``, ...)."""
    users = np.asarray(users)
    _, inverse, counts = np.unique(users, return_inverse=True, return_counts=True)
    out: dict[str, float] = {}
    for name, values in per_pair.items():
        out[name] = float(values.mean()) if len(values) else float("nan")
        per_user = np.bincount(inverse, weights=values, minlength=len(counts)) / np.maximum(counts, 1)
        out[f"user/{name}"] = float(per_user.mean()) if len(values) else float("nan")
    return out
