"""Time of one training epoch of each paper-002 model on MovieLens-1M (users 1-2999).

Same data as ``benchmarks/dipsgnn.py``; each model is fitted for exactly one epoch without a
validation hold-out (``n_epochs=1``, ``valid_fraction=0`` for the SR-GNN family), so the time
is one pass over all ~138k training prefixes (or all training pairs for the MF models).
For the SR-GNN family it also times one validation pass (Recall@20 of a random 10% of the
training prefixes, what every epoch of a Table 2 run adds) and the test evaluation (all test
prefixes, plain and masked metrics, once per run). Training runs with the thread count of
``--threads`` (``RECPRIVACY_TRAIN_THREADS``; the shared training loop otherwise uses one).

Both CPU seconds of this process (``time.process_time``: what the run costs, hardly affected
by other jobs on the machine) and wall seconds are recorded, with the load average before
each model. Repeats give the median. Prints a table and merges the timings into
``benchmarks/out/dipsgnn_speed.json`` (methods measured earlier keep their entries and dates).

Usage::

    OMP_NUM_THREADS=1 python benchmarks/dipsgnn_speed.py --data-dir ../shared/datasets \\
        [--methods SRGNN,DIPSGNN,EdgeRand] [--repeats 1] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import torch

from recprivacy.config import load_config
from recprivacy.experiments.dipsgnn import GRAPH_MODELS, DIPSGNNStudy
from recprivacy.io import write_text_atomic
from recprivacy.models.srgnn import SequenceSamples

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = "SRGNN,APGNN,DIPSGNN,DIPSGNN_legacy,EdgeRand,DPSGD,BPRMF,LightGCN,SASRec,DPMF_imp,DPMF_exp"


class Clock:
    """CPU and wall seconds since construction."""

    def __init__(self) -> None:
        self.cpu, self.wall = time.process_time(), time.perf_counter()

    def read(self) -> tuple[float, float]:
        return time.process_time() - self.cpu, time.perf_counter() - self.wall


def one_epoch(method: str, study: DIPSGNNStudy) -> dict:
    """CPU and wall seconds of one training epoch of ``method`` (seed 0), and for the SR-GNN
    family of one validation pass and of the test evaluation."""
    model = study.model(method, seed=0)
    if isinstance(model, GRAPH_MODELS):
        backbone = getattr(model, "backbone", model)  # a private variant trains a copy of its backbone
        backbone.n_epochs, backbone.valid_fraction = 1, 0.0
    else:
        model.n_epochs = 1
    clock = Clock()
    model.fit(study.prepared.train)
    cpu, wall = clock.read()
    out = {"cpu": cpu, "wall": wall}
    if isinstance(model, GRAPH_MODELS):
        samples = SequenceSamples.prefixes(model.sequences_)
        held = samples.subset(np.sort(np.random.default_rng(0).permutation(len(samples))[: len(samples) // 10]))
        clock = Clock()
        model.sample_metrics(held, ks=(20,))
        out["valid_cpu"] = clock.read()[0]
        clock = Clock()
        study.evaluate(model)
        out["test_eval_cpu"] = clock.read()[0]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default=str(ROOT / "configs" / "dipsgnn" / "ml-1m.yaml"))
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--methods", default=DEFAULT)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    os.environ["RECPRIVACY_TRAIN_THREADS"] = str(args.threads)
    config = load_config(args.config, updates={"dataset.data_dir": args.data_dir} if args.data_dir else {})
    study = DIPSGNNStudy.load(config)
    out = ROOT / "benchmarks" / "out" / "dipsgnn_speed.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    rows = json.loads(out.read_text())["methods"] if out.exists() else {}
    for method in args.methods.split(","):
        load = os.getloadavg()[0]
        runs = [one_epoch(method, study) for _ in range(args.repeats)]
        row = {"cpu_seconds_per_epoch_median": statistics.median(r["cpu"] for r in runs),
               "seconds_per_epoch_median": statistics.median(r["wall"] for r in runs),
               "all_cpu": [round(r["cpu"], 1) for r in runs], "all": [round(r["wall"], 1) for r in runs],
               "load_average_1min": round(load, 2),
               "date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "threads": args.threads}
        for key in ("valid_cpu", "test_eval_cpu"):
            if key in runs[0]:
                row[f"{key}_seconds"] = round(statistics.median(r[key] for r in runs), 1)
        rows[method] = row
        extra = "".join(f"  {k}: {row[k]:.1f} s" for k in ("valid_cpu_seconds", "test_eval_cpu_seconds") if k in row)
        print(f"{method:<16}{row['cpu_seconds_per_epoch_median']:>8.1f} CPU s/epoch {row['seconds_per_epoch_median']:>8.1f} wall s"
              f"  (load {load:.2f}){extra}", flush=True)
    summary = {"platform": platform.platform(), "processor": platform.processor() or "unknown",
               "cpus": os.cpu_count(), "torch": torch.__version__, "training_interactions": len(study.prepared.train), "methods": rows}
    write_text_atomic(out, json.dumps(summary, indent=2))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
