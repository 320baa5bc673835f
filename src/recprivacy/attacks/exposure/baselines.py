"""Baselines the paper lacks, so a reader can judge the attack's numbers.

* ``popularity``: every pair gets the same list, the items clicked most often by the
  training users (the history items of the training pairs), ties broken by item id;
* ``exposed``: the pair's own slate items first, ordered by that popularity, then the
  remaining items by popularity (the naive guess "the user clicked what they were shown").

Both are one ranked list per pair, scored with the attack's metrics (``metrics``) over the
same candidates and vocabulary; they are reported at list length ``k`` and ``k * M`` (the
budget a sequence decoder's union of M per-step lists has).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from recprivacy.attacks.exposure.attack import (
    Candidates,
    EncodedPairs,
    OOVPolicy,
    StepScores,
    candidate_matrix,
    leakage_report,
    rank_pairs,
)
from recprivacy.attacks.exposure.metrics import KS
from recprivacy.attacks.exposure.vocab import Vocabulary
from recprivacy.data.exposure_pairs import ExposurePairs

BASELINES = ("popularity", "exposed")


def popularity_scores(vocab: Vocabulary, train: ExposurePairs) -> torch.Tensor:
    """Distinct scores ``[V]``: higher for items clicked more often in the training
    histories; among equal counts, lower item tokens score higher."""
    tokens = vocab.index[train.histories.ravel()]
    counts = np.bincount(tokens[tokens >= 0], minlength=vocab.n_items)
    order = np.lexsort((np.arange(vocab.n_items), -counts))
    scores = np.empty(vocab.n_items, dtype=np.float32)
    scores[order] = -np.arange(vocab.n_items, dtype=np.float32)
    return torch.as_tensor(scores)


def baseline_scores(name: str, popularity: torch.Tensor) -> StepScores:
    """Step-score function ``slates [B, N] -> [B, 1, V]`` of a baseline."""
    n_items = len(popularity)

    def score(slates: torch.Tensor) -> torch.Tensor:
        scores = popularity.expand(len(slates), -1).clone()
        if name == "exposed":
            shown = slates[slates < n_items]
            rows = torch.nonzero(slates < n_items)[:, 0]
            scores[rows, shown] += float(n_items)
        return scores[:, None]

    return score


def evaluate_baselines(
    vocab: Vocabulary,
    train: ExposurePairs,
    pairs: ExposurePairs,
    ks: Sequence[int] = KS,
    candidates: Candidates = "all",
    oov: OOVPolicy = "drop",
) -> dict[str, dict[str, float]]:
    """Metrics of each baseline at list lengths ``k`` (``<name>``) and ``k*M`` (``<name>@kM``)."""
    popularity = popularity_scores(vocab, train)
    encoded = EncodedPairs(vocab, pairs, oov)
    cand = candidate_matrix(vocab, pairs, candidates)
    out = {}
    for name in BASELINES:
        ranks = rank_pairs(baseline_scores(name, popularity), encoded, cand, depth=max(ks) * pairs.history_len)
        out[name] = leakage_report(ranks, encoded.users, ks, 1, encoded.n_dropped)
        out[f"{name}@kM"] = leakage_report(ranks, encoded.users, ks, pairs.history_len, encoded.n_dropped)
    return out
