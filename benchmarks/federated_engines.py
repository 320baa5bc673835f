"""Seconds per federated round for each engine of the ``federated`` study (paper 004).

    python benchmarks/federated_engines.py [--dataset ml-100k] [--rounds 2] [--engines simulator,flower-sim,flower]
                                           [--max-users N] [--wave-size 8] [--data-dir ../shared/datasets]
                                           [--commit SHA]

Trains Pure FedRec (d = 64, half the users per round, 5 local epochs; seeded simulation noise)
with each engine through ``federated.engines.train_federation`` and prints, per engine, the
median seconds per round (the server's clock: sampling to aggregation; Flower's start-up is
excluded, and reported as ``total_seconds``), the CPU seconds of this process and of the
processes it started and reaped (``children_cpu_seconds``: the Ray workers, or the SuperLink
and SuperNodes with the ClientApps they reaped; a ClientApp killed with its SuperNode at the
end is not counted, so it is a lower bound). The Flower engines send each round's messages in
waves of ``--wave-size`` nodes. ``flower`` starts a SuperNode process (and its
``flower-superexec``, ~180 MB together) per user: ``--max-users`` keeps the first N users so
that the federation fits the machine; the record says which users were measured.
Writes benchmarks/results/federated_engines-<dataset>[-<N>users].json.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time
from pathlib import Path

import numpy as np
from record import write_record

from recprivacy.data.registry import load_dataset
from recprivacy.data.split import temporal_split
from recprivacy.federated.engines import ENGINES, Method, train_federation
from recprivacy.federated.features import user_features
from recprivacy.federated.models import make_federated_model
from recprivacy.federated.protocol import LocalTraining
from recprivacy.federated.simulator import FederatedSimulator


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", default="ml-100k")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--max-users", type=int, default=None)
    parser.add_argument("--wave-size", type=int, default=8)
    parser.add_argument("--commit", default=None, help="the commit measured")
    args = parser.parse_args()
    data = load_dataset(args.dataset, args.data_dir)
    subset = args.max_users is not None and args.max_users < data.n_users
    if subset:
        data = data.subset_users(np.arange(args.max_users)).reindex()
    train, _ = temporal_split(data, leave_last=1)
    feats = user_features(train)
    out = {"commit": args.commit, "dataset": args.dataset, "users": train.n_users,
           "user_subset": f"the first {args.max_users} user ids" if subset else "all", "items": train.n_items,
           "rounds": args.rounds, "wave_size": args.wave_size, "engines": {}}
    for engine in args.engines.split(","):
        model = make_federated_model("fedrec", train.n_items, feats.dim, 64)
        sim = FederatedSimulator(model, train, feats.x, LocalTraining(lr=0.01), 0.5, seed=0, init_std=0.1, noise="simulation")
        wall, cpu, children = time.perf_counter(), time.process_time(), _children_cpu()
        fed = train_federation(sim, Method("none"), args.rounds, args.rounds, engine, wave_size=args.wave_size)
        row = {"seconds_per_round_median": statistics.median(fed.round_seconds), "round_seconds": fed.round_seconds,
               "total_seconds": time.perf_counter() - wall, "process_cpu_seconds": time.process_time() - cpu,
               "children_cpu_seconds": _children_cpu() - children}
        out["engines"][engine] = row
        print(f"{engine:11s} {row['seconds_per_round_median']:8.2f} s/round  total {row['total_seconds']:7.1f} s  "
              f"CPU {row['process_cpu_seconds']:7.1f} s (+ {row['children_cpu_seconds']:.1f} s in reaped children)", flush=True)
    name = f"federated_engines-{args.dataset}{f'-{train.n_users}users' if subset else ''}.json"
    write_record(out, Path(__file__).parent / "results" / name)


if __name__ == "__main__":
    main()
