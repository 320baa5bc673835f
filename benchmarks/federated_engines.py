"""Seconds per federated round for each engine of the ``federated`` study (paper 004).

    python benchmarks/federated_engines.py [--dataset ml-100k] [--rounds 2] [--engines simulator,flower-sim,flower]
                                           [--max-users N] [--data-dir ../shared/datasets]

Trains Pure FedRec (d = 64, half the users per round, 5 local epochs; seeded simulation noise)
with each engine through ``federated.engines.train_federation`` and prints, per engine, the
median seconds per round (the server's clock: sampling to aggregation; Flower's start-up is
excluded, and reported as ``total_seconds``) and the process-CPU seconds of this process.
``flower`` starts a SuperNode process per user: ``--max-users`` bounds it on a small machine.
Writes benchmarks/out/federated_engines-<dataset>.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np

from recprivacy.data.registry import load_dataset
from recprivacy.data.split import temporal_split
from recprivacy.federated.engines import ENGINES, Method, train_federation
from recprivacy.federated.features import user_features
from recprivacy.federated.models import make_federated_model
from recprivacy.federated.protocol import LocalTraining
from recprivacy.federated.simulator import FederatedSimulator


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", default="ml-100k")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--max-users", type=int, default=None)
    args = parser.parse_args()
    data = load_dataset(args.dataset, args.data_dir)
    if args.max_users is not None and args.max_users < data.n_users:
        data = data.subset_users(np.arange(args.max_users)).reindex()
    train, _ = temporal_split(data, leave_last=1)
    feats = user_features(train)
    out = {"dataset": args.dataset, "users": train.n_users, "rounds": args.rounds, "engines": {}}
    for engine in args.engines.split(","):
        model = make_federated_model("fedrec", train.n_items, feats.dim, 64)
        sim = FederatedSimulator(model, train, feats.x, LocalTraining(lr=0.01), 0.5, seed=0, init_std=0.1, noise="simulation")
        wall, cpu = time.perf_counter(), time.process_time()
        fed = train_federation(sim, Method("none"), args.rounds, args.rounds, engine)
        row = {"seconds_per_round_median": statistics.median(fed.round_seconds), "round_seconds": fed.round_seconds,
               "total_seconds": time.perf_counter() - wall, "process_cpu_seconds": time.process_time() - cpu}
        out["engines"][engine] = row
        print(f"{engine:11s} {row['seconds_per_round_median']:8.2f} s/round  total {row['total_seconds']:7.1f} s  "
              f"this process's CPU {row['process_cpu_seconds']:7.1f} s", flush=True)
    path = Path(__file__).parent / "out" / f"federated_engines-{args.dataset}{'-' + str(args.max_users) if args.max_users else ''}.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(out, indent=2))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
