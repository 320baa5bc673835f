"""Time of one training epoch of each paper-002 model on MovieLens-1M (users 1-2999).

Same data as ``benchmarks/dipsgnn.py``; each model is fitted for exactly one epoch without a
validation hold-out (``n_epochs=1``, ``valid_fraction=0`` for the SR-GNN family), so the time
is one pass over all ~141k training prefixes (or all training pairs for the MF models).
Repeats give the median. Prints a table and merges the timings into
``benchmarks/out/dipsgnn_speed.json`` (methods measured earlier keep their entries and dates).

Usage::

    OMP_NUM_THREADS=2 python benchmarks/dipsgnn_speed.py --data-dir ../shared/datasets \\
        [--methods SRGNN,DIPSGNN,EdgeRand] [--repeats 3] [--threads 2]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from datetime import datetime, timezone
from pathlib import Path

import torch

from recprivacy.config import load_config, validate_options
from recprivacy.experiments.dipsgnn import DIPSGNNOptions, build_method, prepare_sequences
from recprivacy.experiments.runner import new_results
from recprivacy.models.srgnn import SRGNN

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = "SRGNN,APGNN,DIPSGNN,DIPSGNN_legacy,EdgeRand,DPSGD,BPRMF,LightGCN,SASRec,DPMF_imp,DPMF_exp"


def one_epoch(method: str, data, options: DIPSGNNOptions, backbone: dict) -> float:
    """Seconds of one training epoch of ``method`` (seed 0)."""
    model = build_method(method, options, backbone, seed=0)
    if isinstance(model, SRGNN):
        model.n_epochs, model.valid_fraction = 1, 0.0
    else:
        model.n_epochs = 1
    start = time.perf_counter()
    model.fit(data.train)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default=str(ROOT / "configs" / "dipsgnn" / "ml-1m.yaml"))
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--methods", default=DEFAULT)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    config = load_config(args.config, updates={"dataset.data_dir": args.data_dir} if args.data_dir else {})
    options = validate_options(DIPSGNNOptions, config.study_options)
    data = prepare_sequences(config, options, new_results(config))
    backbone = {k: v for k, v in config.model.params.items() if k != "seed"}
    out = ROOT / "benchmarks" / "out" / "dipsgnn_speed.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    rows = json.loads(out.read_text())["methods"] if out.exists() else {}
    for method in args.methods.split(","):
        times = [one_epoch(method, data, options, backbone) for _ in range(args.repeats)]
        rows[method] = {"seconds_per_epoch_median": statistics.median(times), "all": [round(t, 1) for t in times],
                        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "threads": args.threads}
        print(f"{method:<16}{statistics.median(times):>10.1f} s/epoch  {rows[method]['all']}", flush=True)
    summary = {"platform": platform.platform(), "training_interactions": len(data.train), "methods": rows}
    tmp = out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(summary, indent=2))
    tmp.replace(out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
