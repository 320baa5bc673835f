"""CPU cost and quality of the factor models on ml-100k: BPR-MF, LFM and ALS (issue 33).

Protocol (the train study's: ``recprivacy train --dataset ml-100k --model NAME``): ml-100k,
per-user random 8:1:1 split, seed 0, default hyperparameters, validation Recall@20 for early
stopping where the model has it, test Recall@20 over all items with training and validation
items masked. Each run is a fresh child process; CPU seconds (user + system, ``getrusage``) of
``fit`` and of the whole process (imports, data, fit, evaluation) are reported as the median of
``--repeats`` runs, because CPU time is what a shared machine disturbs least.

Usage::

    python benchmarks/model_speed.py --data-dir ../shared/datasets [--models bpr,lfm,als] [--repeats 3] [--threads N]

Prints one line per model and writes ``benchmarks/results/model_speed.json``.
"""

from __future__ import annotations

import json
import resource
import statistics
from pathlib import Path

from record import model_parser, run_child, write_record

MODELS = ["bpr", "lfm", "als"]


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run_one(name: str, data_dir: str, seed: int, threads: int | None) -> dict:
    """Fit and evaluate one model in this process."""
    from recprivacy.data.registry import load_dataset
    from recprivacy.data.split import random_split
    from recprivacy.metrics.ranking import evaluate
    from recprivacy.models import make_model
    from recprivacy.models.training import use_threads

    train, valid, test = random_split(load_dataset("ml-100k", data_dir), ratios=(0.8, 0.1, 0.1), seed=seed)
    with use_threads(threads) as budget:
        model = make_model(name, seed=seed)
        start = cpu_seconds()
        model.fit(train, valid)
        fit_cpu = cpu_seconds() - start
        recall = evaluate(model, test, ks=(20,), exclude=valid)["recall@20"]
    history = getattr(model, "history_", None)
    return {"model": name, "fit_cpu_s": fit_cpu, "process_cpu_s": cpu_seconds(), "recall@20": float(recall),
            "epochs": len(history.losses) if history else None, "threads": budget}  # fmt: skip


def summarise(runs: list[dict]) -> dict:
    """Medians of the CPU seconds; quality from the first (seeded, repeatable) run."""
    row = dict(runs[0])
    for key in ("fit_cpu_s", "process_cpu_s"):
        row[key] = statistics.median(r[key] for r in runs)
        row[f"{key}_all"] = [round(r[key], 2) for r in runs]
    return row


def main() -> None:
    p = model_parser(__doc__.splitlines()[0], MODELS, Path(__file__).parent / "results" / "model_speed.json")
    p.add_argument("--threads", type=int, default=None, help="thread budget (default: every core)")
    args = p.parse_args()
    if args.child:
        print(json.dumps(run_one(args.child, args.data_dir, args.seed, args.threads)))
        return
    rows = []
    for name in args.models.split(","):
        argv = ["--data-dir", args.data_dir, "--seed", str(args.seed), *(["--threads", str(args.threads)] if args.threads else [])]
        rows.append(summarise([run_child(__file__, name, argv) for _ in range(args.repeats)]))
        r = rows[-1]
        print(f"{name:5s} Recall@20 {r['recall@20']:.4f}  fit {r['fit_cpu_s']:.2f} CPU s  process {r['process_cpu_s']:.2f} "
              f"CPU s (medians of {args.repeats}; epochs {r['epochs']}, threads {r['threads']})", flush=True)  # fmt: skip
    write_record({"benchmark": "model_speed", "dataset": "ml-100k",
                  "protocol": "per-user random 8:1:1, seed 0, default hyperparameters, full ranking, train+valid items masked",
                  "results": rows}, args.out)


if __name__ == "__main__":
    main()
