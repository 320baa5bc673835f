"""The numbers paper 001 reports (its Tables 2-7 and figures), looked up so our results can sit beside them.

The numbers themselves are data (``recprivacy/papers/001/reference.yaml``), read through the kit's
comparator (``experiments.kit.compare``); this module only says where each of our results sits in
the paper: the table, row and column of the number it is compared with.

Every attack number in the paper is its "AUC", which the authors' code computes from hard
predictions as ``(1 + TPR − FPR) / 2``: a balanced accuracy at the 0.5 threshold, compared here
with our ``balanced_accuracy``, never with our ROC AUC.

Datasets: the paper's ADM, lf-2k and ml-1m. We hold ml-1m (users 1-2999 only), and stand in
S3-Rec Amazon Beauty for ADM and S3-Rec LastFM for lf-2k; ml-100k is compared with ml-1m, the
paper's other MovieLens set. ``PAPER_DATASET`` records that mapping and every table names the
paper dataset it quotes. Algorithms are keyed by the paper's letters I (Item-CF), L (LFM),
N (NCF).
"""

from __future__ import annotations

import numpy as np

from recprivacy.experiments.kit.compare import paper_table, paper_value

PAPER = "001"

PAPER_DATASET = {"ml-1m": "ml-1m", "ml-100k": "ml-1m", "s3rec-beauty": "ADM", "s3rec-lastfm": "lf-2k"}
ALGORITHM_KEYS = {"itemcf": "I", "lfm": "L", "neumf": "N", "ncf": "N"}
#: paper dataset -> its Assumption II table (shadow algorithm x target algorithm; diagonal = Figure 3)
ASSUMPTION_TABLES = {"ADM": "Table 3", "lf-2k": "Table 4", "ml-1m": "Table 5"}
#: paper dataset -> its K-Means table (the MLP rows of Tables 6-7 equal Tables 4-5)
KMEANS_TABLES = {"lf-2k": "Table 6", "ml-1m": "Table 7"}


def paper_dataset(dataset: str) -> str | None:
    """The paper's dataset our ``dataset`` is compared with (None when there is none)."""
    return PAPER_DATASET.get(dataset)


def algorithm_key(algorithm: str) -> str | None:
    return ALGORITHM_KEYS.get(algorithm)


def hit_rate(dataset: str, role: str, algorithm: str) -> float | None:
    """Table 2: HR@100 of the ``role`` ("shadow" or "target") recommender."""
    return paper_value(PAPER, ("Table 2", f"{paper_dataset(dataset) or ''}/{role}", algorithm_key(algorithm) or ""))


def assumption_value(dataset: str, shadow_algorithm: str, target_algorithm: str) -> float | None:
    """Tables 3-5 value for a same-dataset setting (None when the paper has no such cell)."""
    table = ASSUMPTION_TABLES.get(paper_dataset(dataset) or "", "")
    s, t = algorithm_key(shadow_algorithm), algorithm_key(target_algorithm)
    return paper_value(PAPER, (table, s, t) if s and t else None)


def assumption_mean(dataset: str) -> float | None:
    """Mean of the dataset's whole Tables 3-5 grid (None when the paper has no such table)."""
    table = paper_table(PAPER, ASSUMPTION_TABLES.get(paper_dataset(dataset) or "", ""))
    return float(np.mean([v for row in table.values() for v in row.values()])) if table else None


def cross_dataset_value(shadow: str, shadow_algorithm: str, target: str, target_algorithm: str) -> float | None:
    """Figure 6 (Assumption III) value stated in the text, arguments as paper dataset and letter."""
    return paper_value(PAPER, ("Figure 6", f"{shadow}/{shadow_algorithm}", f"{target}/{target_algorithm}"))


def kmeans_value(dataset: str, target_algorithm: str) -> float | None:
    """Tables 6-7: the K-Means baseline against ``target_algorithm``."""
    table = KMEANS_TABLES.get(paper_dataset(dataset) or "", "")
    return paper_value(PAPER, (table, "K-Means", algorithm_key(target_algorithm) or ""))


def mimi_points() -> dict[tuple[int, int], float]:
    """Figure 9 (MIMI on ml-1m): the end points the text states, ``(k, l) -> "AUC"``."""
    return {(int(k.removeprefix("k=")), int(n.removeprefix("l="))): v
            for k, row in paper_table(PAPER, "Figure 9").items() for n, v in row.items()}


def shadow_size_value(fraction: float) -> float | None:
    """§3.4: "AUC" on LLLL with the shadow dataset cut to ``fraction`` of its size."""
    return paper_value(PAPER, ("Section 3.4", "lf-2k/L", f"shadow_fraction={float(fraction)}"))


def defense_after(dataset: str, algorithm: str) -> float | None:
    """Figure 12: "AUC" after Popularity Randomization (alpha 0.1), where the text states it."""
    return paper_value(PAPER, ("Figure 12", f"{paper_dataset(dataset) or ''}/{algorithm_key(algorithm) or ''}", "alpha=0.1"))
