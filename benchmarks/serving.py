"""Serving users not seen in training on ml-100k: held-out Recall@20 and serving time.

Protocol (issue 30, as ``tests/realdata/test_models_serving_real.py``): 20% of the users
(``user_partition``, seed 0) are held out of training; each held-out user's earliest 80% of
interactions (``--split temporal``, default) or a random 80% (``--split random``) is the history
given to ``recommend_histories``, and Recall@20 is measured on the rest, history items masked.
Models train with the realdata test's reduced epochs unless ``--full``.

Usage::

    python benchmarks/serving.py --data-dir ../shared/datasets [--split random] [--models lfm,bpr]

Prints one line per model and writes ``benchmarks/results/serving-<split>.json``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from record import write_record

from recprivacy.data.registry import load_dataset
from recprivacy.data.split import random_split, temporal_split, user_partition
from recprivacy.metrics.ranking import ranking_metrics
from recprivacy.models import make_model

MODELS = ["popularity", "itemcf", "lfm", "bpr", "lightgcn", "neumf", "sasrec"]
REDUCED = {"bpr": {"n_epochs": 60}, "lightgcn": {"n_epochs": 30}, "neumf": {"n_epochs": 5}, "sasrec": {"n_epochs": 10}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--split", choices=("temporal", "random"), default="temporal")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--full", action="store_true", help="default epochs instead of the reduced ones")
    args = parser.parse_args()
    data = load_dataset("ml-100k", Path(args.data_dir) / "ml-100k")
    groups = user_partition(data, {"members": 0.8, "new": 0.2}, seed=0)
    new = data.take_users(groups["new"])
    split = temporal_split(new, ratios=(0.8, 0.2)) if args.split == "temporal" else random_split(new, (0.8, 0.2), seed=0)
    histories, truth = split[0], split[1].to_csr()
    train = data.subset_users(groups["members"])
    rows = []
    for name in args.models.split(","):
        start = time.perf_counter()
        model = make_model(name, seed=0, **({} if args.full else REDUCED.get(name, {}))).fit(train)
        fitted = time.perf_counter()
        top = model.recommend_histories(histories, 20)
        served = time.perf_counter()
        recall = ranking_metrics(top, truth, ks=(20,))["recall@20"]
        rows.append({"model": name, "recall@20": recall, "fit_s": fitted - start, "serve_s": served - fitted,
                     "new_users": histories.n_users})
        print(f"{name:10s} recall@20 {recall:.4f}  fit {fitted - start:6.1f} s  serve {served - fitted:5.2f} s", flush=True)
    write_record({"benchmark": "serving", "dataset": "ml-100k", "split": args.split, "full": args.full, "rows": rows},
                 Path(__file__).parent / "results" / f"serving-{args.split}.json")


if __name__ == "__main__":
    main()
