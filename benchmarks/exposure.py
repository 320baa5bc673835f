"""Benchmark the exposure leakage attack (paper 000): time, peak memory and pairs per second.

Two workloads, each in a fresh child process so peak resident memory (``ru_maxrss``) is its own:

* ``ml-1m``: simulated exposure on MovieLens-1M (users 1-2999): SASRec (defaults) trained on
  the 80% training users, replayed along every user's history (N = 10, M = 5, at most
  ``--max-pairs`` steps per user), then one attacker (``--model``, paper hyperparameters,
  early stopping on validation Recall@10) trained and evaluated on the test users;
* ``mind``: the MIND-small subset's logged slates with the authors' MIND rule.

Reported: wall and CPU seconds of each stage, training and evaluation pairs per second, the
attack's Recall@10 (whole catalogue and user log) beside the better baseline, peak RSS.

Usage::

    python benchmarks/exposure.py --data-dir ../shared/datasets [--workloads ml-1m,mind] [--model att+transformer]

Prints one JSON line per workload and writes ``benchmarks/out/exposure.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path


class Clock:
    """Wall and CPU seconds per named stage."""

    def __init__(self) -> None:
        self.stages: dict[str, dict[str, float]] = {}

    def run(self, name: str, fn, *args, **kwargs):
        wall, cpu = time.perf_counter(), time.process_time()
        out = fn(*args, **kwargs)
        self.stages[name] = {"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu}
        return out


def pairs_for(workload: str, data_dir: str, max_pairs: int, seed: int, clock: Clock):
    """(train/valid/test pairs, description) of a workload."""
    import numpy as np

    from recprivacy.data.exposure_pairs import mind_pairs, simulate_exposure, split_pairs, user_groups
    from recprivacy.data.registry import load_dataset, load_exposure
    from recprivacy.data.split import temporal_split
    from recprivacy.models.sasrec import SASRec

    if workload == "mind":
        log = clock.run("load", load_exposure, "mind", data_dir)
        pairs = clock.run("pairs", mind_pairs, log, 5, 10)
        groups = user_groups(np.unique(pairs.users), pairs.n_users, seed)
        return split_pairs(pairs, groups), {"next_item_recall": None}
    data = clock.run("load", load_dataset, workload, data_dir)
    groups = user_groups(np.flatnonzero(data.user_counts() > 5), data.n_users, seed)
    train, valid = temporal_split(data.subset_users(groups["train"]), leave_last=1, n_parts=2)
    target = clock.run("fit_target", SASRec(seed=seed).fit, train, valid)
    pairs = clock.run("simulate", simulate_exposure, target, data, 5, 10, max_pairs_per_user=max_pairs)
    parts = split_pairs(pairs, groups)
    hit = float((parts["test"].slates == parts["test"].next_items[:, None]).any(axis=1).mean())
    return parts, {"next_item_recall": hit, "target_epochs": len(target.history_.losses)}


def run_one(workload: str, data_dir: str, model: str, max_pairs: int, seed: int) -> dict:
    """Build the pairs, train and evaluate one attacker in this process."""
    import torch

    from recprivacy.attacks.exposure import ExposureAttack, evaluate_baselines

    torch.set_num_threads(int(os.environ.get("BENCH_THREADS", "2")))
    clock = Clock()
    parts, extra = pairs_for(workload, data_dir, max_pairs, seed, clock)
    encoder, decoder = model.split("+")
    attack = clock.run("fit_attack", ExposureAttack(encoder, decoder, seed=seed).fit, parts["train"], parts["valid"])
    scores = clock.run("evaluate", lambda: {c: attack.evaluate(parts["test"], candidates=c) for c in ("all", "user_log")})
    base = evaluate_baselines(attack.vocab_, parts["train"], parts["test"])
    epochs = len(attack.history_.losses)
    n_test = scores["all"]["n_pairs"]
    return {
        "workload": workload,
        "model": model,
        "pairs": {name: len(p) for name, p in parts.items()},
        "vocabulary_items": attack.vocab_.n_items,
        "test_pairs_dropped_oov": scores["all"]["n_dropped"],
        "epochs": epochs,
        "best_epoch": attack.history_.best_epoch + 1,
        "stages": clock.stages,
        "train_pairs_per_s_wall": len(parts["train"]) * epochs / clock.stages["fit_attack"]["wall_s"],
        "train_pairs_per_s_cpu": len(parts["train"]) * epochs / clock.stages["fit_attack"]["cpu_s"],
        "eval_pairs_per_s_wall": 2 * n_test / clock.stages["evaluate"]["wall_s"],
        "total_wall_s": sum(s["wall_s"] for s in clock.stages.values()),
        "total_cpu_s": sum(s["cpu_s"] for s in clock.stages.values()),
        "recall@10_all": scores["all"]["recall@10"],
        "recall@10_user_log": scores["user_log"]["recall@10"],
        "best_baseline_recall@10_all": max(v["recall@10"] for v in base.values()),
        "baselines_recall@10_all": {k: v["recall@10"] for k, v in base.items()},
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        **extra,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=os.environ.get("RECPRIVACY_DATA", "../shared/datasets"))
    parser.add_argument("--workloads", default="ml-1m,mind")
    parser.add_argument("--model", default="att+transformer")
    parser.add_argument("--max-pairs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--child", default=None)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_one(args.child, args.data_dir, args.model, args.max_pairs, args.seed)))
        return
    rows = []
    for workload in args.workloads.split(","):
        cmd = [sys.executable, __file__, "--child", workload, "--data-dir", args.data_dir, "--model", args.model,
               "--max-pairs", str(args.max_pairs), "--seed", str(args.seed)]  # fmt: skip
        out = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if out.returncode != 0:
            raise SystemExit(f"{workload} failed:\n{out.stderr[-2000:]}")
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(json.dumps(rows[-1]), flush=True)
    doc = {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "threads": os.environ.get("BENCH_THREADS", "2")},
        "command": " ".join(sys.argv),
        "results": rows,
    }
    path = Path(__file__).parent / "out" / "exposure.json"
    path.parent.mkdir(exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(doc, indent=2))
    tmp.replace(path)


if __name__ == "__main__":
    main()
