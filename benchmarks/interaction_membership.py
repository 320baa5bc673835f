"""Interaction-level membership inference on MovieLens-100K (issue 51): for BPR-MF, ALS, LightGCN
and ItemCF targets and each seed, 70% of the users are members (a random 20% of each member's rows
held out of training: the hard non-members), the rest held out of training (the adversary's item
knowledge); top-100 lists served by id; 10 candidate pairs per member and kind. ROC AUC and TPR at
1% and 5% FPR of every attack and baseline against hard and easy non-members, with the verdict of
``compare.judge``. Prints a Markdown table and writes ``benchmarks/results/interaction_membership.json``.

    RECPRIVACY_DATA=/work/shared/datasets python benchmarks/interaction_membership.py --seeds 3
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
from recprivacy.experiments import interaction_scored, judge_interactions
from recprivacy.metrics.intervals import auc_interval
from recprivacy.models import make_model
from record import write_record

TARGETS = {"bpr": {"n_epochs": 30}, "als": {}, "lightgcn": {"n_epochs": 15}, "itemcf": {}}


def seed_records(data: Any, algorithm: str, seed: int) -> list[dict[str, Any]]:
    """One record per kind of non-member and attack or baseline for one seed."""
    frame = data.to_frame()[["user_id", "item_id", "timestamp"]]
    ids = np.random.default_rng(seed).permutation(data.user_ids)
    members, never = ids[: int(0.7 * len(ids))], ids[int(0.7 * len(ids)) :]
    test = frame[frame.user_id.isin(members)].groupby("user_id").sample(frac=0.2, random_state=seed)
    prepared = Audit(Target.from_model(lambda h, k: None), frame, members, never, test=test)._prepare()
    model = make_model(algorithm, seed=seed, **TARGETS[algorithm]).fit(prepared.train)
    judged = judge_interactions([interaction_scored(Target.from_recommender(model), prepared, 100, 10, seed)])
    out = []
    for kind, r in judged.items():
        for key, scores in {**r.scored.attacks, **r.scored.baselines}.items():
            out.append({"algorithm": algorithm, "seed": seed, "non_members": kind, "name": key,
                        "kind": "attack" if key in r.scored.attacks else "baseline",
                        "auc": auc_interval(r.scored.labels, scores).to_dict(),
                        **{f"tpr@{f:.0%}fpr": t.to_dict() for f, t in zip((0.01, 0.05), r.tprs[key])},
                        "verdict": r.judgement.verdict.text, "sample": str(r.judgement.sample)})  # fmt: skip
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "interaction_membership.json"))
    args = parser.parse_args()
    data = load_dataset("ml-100k", Path(os.environ.get("RECPRIVACY_DATA", "../shared/datasets")) / "ml-100k")
    records, start = [], time.process_time()
    print("| target | seed | non-members | attack / baseline | ROC AUC | TPR@1%FPR | TPR@5%FPR |\n|---|---|---|---|---|---|---|")
    for algorithm in TARGETS:
        for seed in range(args.seeds):
            for r in seed_records(data, algorithm, seed):
                records.append(r)
                print(f"| {algorithm} | {seed} | {r['non_members']} | {r['name']} | {r['auc']['value']:.3f} | "
                      f"{r['tpr@1%fpr']['value']:.3f} | {r['tpr@5%fpr']['value']:.3f} |", flush=True)  # fmt: skip
    write_record({"benchmark": "interaction_membership", "dataset": "ml-100k", "seeds": args.seeds, "targets": TARGETS,
                  "cpu_seconds": time.process_time() - start, "records": records}, args.out)  # fmt: skip


if __name__ == "__main__":
    main()
