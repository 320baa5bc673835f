"""Step 4 of the protocol (package docstring): score every test sample and rank the target among
all items.

Recall@K and MRR@K (x100) rank the target among *all* items, seen ones included (the paper's
protocol); the same lists with each user's training items masked (recprivacy's convention) are
returned beside them. SR-GNN-family models score the graph of each prefix, SASRec each prefix
(left-padded), and the non-sequential baselines each sample's user, so all test samples of a
user share one ranking.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import scipy.sparse as sp
import torch

from recprivacy.experiments.dipsgnn.methods import GRAPH_MODELS
from recprivacy.metrics.ranking import mask_items, ranking_metrics
from recprivacy.models.base import Recommender
from recprivacy.models.sasrec import SASRec
from recprivacy.models.srgnn import SequenceSamples, batch_inputs


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
