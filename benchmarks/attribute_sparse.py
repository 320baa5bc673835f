"""Attribute attack on CSR lists versus the same lists densified (``attacks/attribute.py``).

``n_users`` users each get a top-20 list over ML-20M's 26,744 items (Zipf popularity, a planted
binary attribute that favours every 7th item); the attacker (``dnn`` or ``knn``) trains on a
seeded 20% and is scored on the rest. Prints one JSON line: CPU seconds of building the input
plus the attack, the weighted F1 (equal for both inputs) and the peak resident set before and
after (the difference is what the input costs).

Usage::

    python benchmarks/attribute_sparse.py {sparse,dense} {dnn,knn} N_USERS
"""

from __future__ import annotations

import json
import resource
import sys
import time

import numpy as np

from recprivacy.attacks.attribute import attack_report, recommendation_matrix

N_ITEMS, K = 26_744, 20


def planted_lists(n_users: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Top-``K`` lists of Gumbel-perturbed ``log pop + [y = 1 and item % 7 = 0]``, 100 users at a time."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n_users)
    log_pop = -np.log(np.arange(1, N_ITEMS + 1))
    favoured = np.arange(N_ITEMS) % 7 == 0

    def lists(rows: np.ndarray) -> np.ndarray:
        keys = log_pop + rng.gumbel(size=(len(rows), N_ITEMS)) + np.outer(y[rows], favoured)
        return np.argpartition(-keys, K, axis=1)[:, :K]

    return np.concatenate([lists(np.arange(lo, min(lo + 100, n_users))) for lo in range(0, n_users, 100)]), y


def main() -> None:
    mode, kind, n_users = sys.argv[1], sys.argv[2], int(sys.argv[3])
    topk, y = planted_lists(n_users)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    start = time.process_time()
    x = recommendation_matrix(topk, N_ITEMS)
    report = attack_report(x.toarray() if mode == "dense" else x, y, ("a", "b"), 0.2, 0, kind)
    print(json.dumps({"mode": mode, "kind": kind, "n_users": n_users, "cpu_seconds": round(time.process_time() - start, 1),
                      "weighted_f1": round(report["weighted_f1"], 4), "peak_rss_mb_before": round(before),
                      "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}))  # fmt: skip


if __name__ == "__main__":
    main()
