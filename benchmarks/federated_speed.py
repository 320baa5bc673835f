"""Seconds per federated round with the in-process simulator, per model (paper 004).

    python benchmarks/federated_speed.py [--dataset ml-100k] [--rounds 3] [--data-dir ../shared/datasets]
    python benchmarks/federated_speed.py --models fedrec --rounds 100      # a whole training run, timed
    python benchmarks/federated_speed.py --methods none,apm,fgerai,fgerai_nl,fdpmf [--clients 0.1 --dataset ml-1m]

Prints wall-clock and process-CPU seconds per round (median over rounds, after one warm-up
round) for FedRec, FedLightGCN, FedNCF and FedMF with the paper's setting (half the users per
round on ml-100k, d = 64, 5 local epochs, batch 32, 4 negatives), and writes
benchmarks/out/federated_speed.json (with ``--models``, federated_speed-<models>-<rounds>rounds.json,
so a timed 100-round run does not replace the all-model figures; ``--threads N`` > 1 adds
``-Nthreads``). CPU seconds are the better guide on a shared machine; with two threads, wall
seconds are the figure that counts.

With ``--methods`` it times one round per method instead (FedRec, or federated MF for F-DPMF /
FedMF), with each method's upload defence, perturbed objective and feature LDP as the
``federated`` study builds them, and writes benchmarks/out/federated_speed_methods-<dataset>.json.
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
from recprivacy.defenses.federated_dp import BASELINES, make_baseline
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
    parser.add_argument("--methods", default=None, help="comma-separated study methods to time with FedRec")
    parser.add_argument("--models", default=None, help=f"comma-separated models (default: all of {list(FEDERATED_MODELS)})")
    args = parser.parse_args()
    models = args.models.split(",") if args.models else list(FEDERATED_MODELS)
    unknown = sorted(set(models) - set(FEDERATED_MODELS))
    if unknown:
        parser.error(f"--models: unknown {unknown}; expected some of {list(FEDERATED_MODELS)}")
    data = load_dataset(args.dataset, args.data_dir)
    train, _ = temporal_split(data, leave_last=1)
    feats = user_features(train)
    out = {}
    runs = [(m, None) for m in models] if args.methods is None else [("fedrec", m) for m in args.methods.split(",")]
    for name, method in runs:
        baseline = make_baseline(method, feats.blocks) if method in BASELINES else None
        if baseline is not None and baseline.model:
            name = baseline.model
        defence = None if baseline else make_defence(method or args.defence)
        model = make_federated_model(name, train.n_items, feats.dim, 64)
        sim = FederatedSimulator(model, train, feats.x, LocalTraining(lr=0.01), args.clients, seed=0, defence=defence,
                                 init_std=0.1, threads=args.threads, objective=baseline and baseline.objective,
                                 feature_privacy=baseline and baseline.features)
        sim.run_round()
        wall, cpu = [], []
        for _ in range(args.rounds):
            w, c = time.perf_counter(), time.process_time()
            sim.run_round()
            wall.append(time.perf_counter() - w)
            cpu.append(time.process_time() - c)
        key = name if method is None else method
        out[key] = {"wall_s": statistics.median(wall), "cpu_s": statistics.median(cpu), "clients": sim.n_clients, "model": name,
                    "rounds": args.rounds, "total_wall_s": sum(wall), "total_cpu_s": sum(cpu)}
        print(f"{key:12s} clients {sim.n_clients}  wall {out[key]['wall_s']:.2f}s  cpu {out[key]['cpu_s']:.2f}s per round"
              f"  ({args.rounds} rounds: {sum(wall):.0f}s wall, {sum(cpu):.0f}s cpu)", flush=True)
    stem = "federated_speed" if args.methods is None else f"federated_speed_methods-{args.dataset}"
    if args.methods is None and args.models:
        stem += "-" + "-".join(models) + f"-{args.rounds}rounds"
    if args.threads != 1:
        stem += f"-{args.threads}threads"
    path = Path(__file__).resolve().parent / "out" / f"{stem}.json"
    path.parent.mkdir(exist_ok=True)
    tmp = path.with_suffix(".tmp")
    payload = {"dataset": args.dataset, "defence": args.defence, "threads": args.threads, "clients": args.clients,
               "date": time.strftime("%Y-%m-%d", time.gmtime()), "models" if args.methods is None else "methods": out}
    tmp.write_text(json.dumps(payload, indent=2))
    tmp.replace(path)


if __name__ == "__main__":
    main()
