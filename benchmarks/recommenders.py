"""Benchmark every recommender on ml-100k: quality, training time and peak memory.

Protocol (issue "Foundation"): ml-100k, per-user random 8:1:1 split, seed 0, full ranking over
all items with the user's training items masked (and validation items masked when scoring test);
the validation split drives early stopping. Each model trains in a fresh child process so its
peak resident memory (``ru_maxrss``) is its own; timings are repeated and the median quoted.

Usage::

    python benchmarks/recommenders.py --data-dir ../shared/datasets [--repeats 3] [--models bpr,lightgcn]

Prints a table and writes ``benchmarks/out/recommenders.json``.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import time
from pathlib import Path

from record import model_parser, run_child, write_record

MODELS = ["popularity", "itemcf", "lfm", "bpr", "neumf", "lightgcn", "sasrec"]
KS = (10, 20)


def run_one(name: str, data_dir: str, seed: int) -> dict:
    """Train and evaluate one model in this process; returns metrics, seconds and peak RSS."""
    import torch

    from recprivacy.data.registry import load_dataset
    from recprivacy.data.split import random_split
    from recprivacy.metrics.ranking import evaluate
    from recprivacy.models import make_model

    torch.set_num_threads(int(os.environ.get("BENCH_THREADS", "2")))
    data = load_dataset("ml-100k", data_dir)
    train, valid, test = random_split(data, ratios=(0.8, 0.1, 0.1), seed=seed)
    base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    model = make_model(name, seed=seed)
    start = time.perf_counter()
    model.fit(train, valid)
    fit_seconds = time.perf_counter() - start
    metrics = evaluate(model, test, ks=KS, exclude=valid)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "model": name,
        "fit_seconds": fit_seconds,
        "peak_rss_mb": peak / 1024,
        "rss_above_data_mb": (peak - base_rss) / 1024,
        **{k: float(v) for k, v in metrics.items() if "@" in k},
    }


def summarise(name: str, runs: list[dict]) -> dict:
    """Median fit time and peak memory over repeats; quality from the first (seeded) run."""
    first = dict(runs[0])
    first["fit_seconds_median"] = statistics.median(r["fit_seconds"] for r in runs)
    first["fit_seconds_all"] = [round(r["fit_seconds"], 2) for r in runs]
    first["peak_rss_mb_median"] = statistics.median(r["peak_rss_mb"] for r in runs)
    first.pop("fit_seconds")
    first.pop("peak_rss_mb")
    return first


def main() -> None:
    p = model_parser(__doc__.splitlines()[0], MODELS, Path(__file__).parent / "out" / "recommenders.json")
    args = p.parse_args()
    if args.child:
        print(json.dumps(run_one(args.child, args.data_dir, args.seed)))
        return
    rows = []
    for name in args.models.split(","):
        runs = [run_child(__file__, name, ["--data-dir", args.data_dir, "--seed", str(args.seed)]) for _ in range(args.repeats)]
        rows.append(summarise(name, runs))
        r = rows[-1]
        print(
            f"{name:11s} R@10 {r['recall@10']:.4f} R@20 {r['recall@20']:.4f} "
            f"N@10 {r['ndcg@10']:.4f} N@20 {r['ndcg@20']:.4f} "
            f"fit {r['fit_seconds_median']:.1f}s (median of {args.repeats}) "
            f"peak RSS {r['peak_rss_mb_median']:.0f} MB",
            flush=True,
        )
    write_record({"benchmark": "recommenders", "dataset": "ml-100k",
                  "protocol": "per-user random 8:1:1, seed 0, full ranking, train+valid items masked",
                  "results": rows}, args.out)


if __name__ == "__main__":
    main()
