"""Seconds per federated round with the in-process simulator, per model (paper 004).

    python benchmarks/federated_speed.py [--dataset ml-100k] [--rounds 3] [--data-dir ../shared/datasets]

Prints wall-clock and process-CPU seconds per round (median over rounds, after one warm-up
round) for FedRec, FedLightGCN, FedNCF and FedMF with the digest's setting (half the users per
round on ml-100k, d = 64, 5 local epochs, batch 32, 4 negatives), and writes
benchmarks/out/federated_speed.json. CPU seconds are the better guide on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from recprivacy.data.registry import load_dataset
from recprivacy.data.split import temporal_split
from recprivacy.defenses.apm import make_defence
from recprivacy.federated.features import user_features
from recprivacy.federated.models import FEDERATED_MODELS, make_federated_model
from recprivacy.federated.protocol import LocalTraining
from recprivacy.federated.simulator import FederatedSimulator


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", default="ml-100k")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clients", type=float, default=0.5)
    parser.add_argument("--defence", default="none")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    data = load_dataset(args.dataset, args.data_dir)
    train, _ = temporal_split(data, leave_last=1)
    feats = user_features(train)
    out = {}
    for name in FEDERATED_MODELS:
        model = make_federated_model(name, train.n_items, feats.dim, 64)
        sim = FederatedSimulator(model, train, feats.x, LocalTraining(lr=0.01), args.clients, seed=0,
                                 defence=make_defence(args.defence), init_std=0.1, threads=args.threads)
        sim.run_round()
        wall, cpu = [], []
        for _ in range(args.rounds):
            w, c = time.perf_counter(), time.process_time()
            sim.run_round()
            wall.append(time.perf_counter() - w)
            cpu.append(time.process_time() - c)
        out[name] = {"wall_s": statistics.median(wall), "cpu_s": statistics.median(cpu), "clients": sim.n_clients}
        print(f"{name:12s} clients {sim.n_clients}  wall {out[name]['wall_s']:.2f}s  cpu {out[name]['cpu_s']:.2f}s per round", flush=True)
    path = Path(__file__).resolve().parent / "out" / "federated_speed.json"
    path.parent.mkdir(exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"dataset": args.dataset, "defence": args.defence, "threads": args.threads, "models": out}, indent=2))
    tmp.replace(path)


if __name__ == "__main__":
    main()
