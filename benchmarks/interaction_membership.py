"""Interaction-level membership inference on MovieLens (issue 51): for BPR-MF, ALS, LightGCN
and ItemCF targets and each seed, 70% of the users are members (a random 20% of each member's rows
held out of training: the hard non-members), the rest held out of training (the adversary's item
knowledge); top-100 lists served by id; 10 candidate pairs per member and kind; ``--references``
recommenders trained as the target was for the reference-calibrated filter. ROC AUC and TPR at
1% and 5% FPR of every attack and baseline against hard and easy non-members, per seed, with the
sample; RESULTS.md judges each target and kind over the seeds from these numbers (``benchmarks/results.py``,
as ``compare.judge`` does: the best attack's mean against the strongest baseline's, t intervals). Prints
a Markdown table and writes ``benchmarks/results/interaction_membership.json`` (ml-100k) or
``interaction_membership-<dataset>.json`` after every target, with each target's CPU seconds.

    RECPRIVACY_DATA=/work/shared/datasets python benchmarks/interaction_membership.py --seeds 3
    RECPRIVACY_DATA=/work/shared/datasets python benchmarks/interaction_membership.py --dataset ml-1m --seeds 3
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from recprivacy import Audit, Target
from recprivacy.data.registry import load_dataset
from recprivacy.experiments import INTERACTION_FPRS, interaction_scored
from recprivacy.experiments.membership import target_trainer
from recprivacy.metrics.intervals import auc_interval, tpr_at_fpr_interval
from recprivacy.models import make_model
from record import write_record

TARGETS = {"bpr": {"n_epochs": 30}, "als": {}, "lightgcn": {"n_epochs": 15}, "itemcf": {}}


def tpr_key(fpr: float) -> str:
    """``tpr@1%fpr``, ``tpr@5%fpr``: the records' keys."""
    return f"tpr@{fpr:.0%}fpr"


def seed_scored(data: Any, algorithm: str, seed: int, references: int = 4) -> dict[str, Any]:
    """One seed: the partition, the target trained on it and every candidate pair scored, by kind."""
    frame = data.to_frame()[["user_id", "item_id", "timestamp"]]
    ids = np.random.default_rng(seed).permutation(data.user_ids)
    members, never = ids[: int(0.7 * len(ids))], ids[int(0.7 * len(ids)) :]
    test = frame[frame.user_id.isin(members)].groupby("user_id").sample(frac=0.2, random_state=seed)
    prepared = Audit(Target.from_model(lambda h, k: None), frame, members, never, test=test)._prepare()
    model = make_model(algorithm, seed=seed, **TARGETS[algorithm]).fit(prepared.train)
    target = Target.from_recommender(model)
    return interaction_scored(target, prepared, 100, 10, seed, target_trainer(target, seed), references)


def seed_records(algorithm: str, seed: int, scored: dict[str, Any]) -> list[dict[str, Any]]:
    """One record per kind of non-member and attack or baseline for one seed: ROC AUC (stratified
    bootstrap) and TPR at ``INTERACTION_FPRS`` (Clopper-Pearson) with their intervals, and the sample."""
    out = []
    for kind, run in scored.items():
        positives, negatives = int(run.labels.sum()), int((run.labels == 0).sum())
        for key, scores in {**run.attacks, **run.baselines}.items():
            out.append({"algorithm": algorithm, "seed": seed, "non_members": kind, "name": key,
                        "kind": "attack" if key in run.attacks else "baseline",
                        "auc": auc_interval(run.labels, scores).to_dict(),
                        **{tpr_key(f): tpr_at_fpr_interval(run.labels, scores, f).to_dict() for f in INTERACTION_FPRS},
                        "positives": positives, "negatives": negatives})  # fmt: skip
    return out


def default_out(dataset: str) -> Path:
    """The record's path: the ml-100k record keeps its first name, other datasets are suffixed."""
    suffix = "" if dataset == "ml-100k" else f"-{dataset}"
    return Path(__file__).parent / "results" / f"interaction_membership{suffix}.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="ml-100k")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--algorithms", default=",".join(TARGETS))
    parser.add_argument("--references", type=int, default=4, help="reference recommenders (0: no reference-calibrated filter)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    data = load_dataset(args.dataset, Path(os.environ.get("RECPRIVACY_DATA", "../shared/datasets")) / args.dataset)
    out, records, cpu = args.out or default_out(args.dataset), [], {}
    print("| target | seed | non-members | attack / baseline | ROC AUC | TPR@1%FPR | TPR@5%FPR |\n|---|---|---|---|---|---|---|")
    for algorithm in args.algorithms.split(","):
        start = time.process_time()
        for seed in range(args.seeds):
            for r in seed_records(algorithm, seed, seed_scored(data, algorithm, seed, args.references)):
                records.append(r)
                print(f"| {algorithm} | {seed} | {r['non_members']} | {r['name']} | {r['auc']['value']:.3f} | "
                      f"{r['tpr@1%fpr']['value']:.3f} | {r['tpr@5%fpr']['value']:.3f} |", flush=True)  # fmt: skip
        cpu[algorithm] = time.process_time() - start
        write_record({"benchmark": "interaction_membership", "dataset": args.dataset, "seeds": args.seeds,
                      "targets": {a: TARGETS[a] for a in cpu}, "cpu_seconds": sum(cpu.values()),
                      "cpu_seconds_per_target": cpu, "records": records}, out)  # after every target; fmt: skip

if __name__ == "__main__":
    main()
