"""Membership inference under the ``served`` and ``paper`` protocols on MovieLens-100K.

For Item-CF, LFM, BPR-MF and LightGCN targets (Assumption I: shadow and references of the same
algorithm), the paper's MLP, LiRA (online / offline), RMIA and the trivial baselines, over seeds:
ROC AUC (mean, sample sd, t interval over seeds; first-seed bootstrap intervals in the JSON) and
TPR at 1% FPR. Prints a Markdown table and writes every record to
``benchmarks/results/membership_protocols.json``.

    RECPRIVACY_DATA=/work/shared/datasets python benchmarks/membership_protocols.py --seeds 5
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

from recprivacy.data.registry import load_dataset
from recprivacy.experiments.membership import LabOptions, name_of, protocol_records, summarise_records

ALGORITHMS = ("itemcf", "lfm", "bpr", "lightgcn")
#: BPR-MF and LightGCN at fixed epochs (no early stopping: the lab trains on members only)
MODEL_PARAMS = {"bpr": {"n_epochs": 30}, "lightgcn": {"n_epochs": 15}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--references", type=int, default=8)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "membership_protocols.json"))
    args = parser.parse_args()
    data = load_dataset("ml-100k", Path(os.environ.get("RECPRIVACY_DATA", "../shared/datasets")) / "ml-100k")
    options = LabOptions(model_params=MODEL_PARAMS, n_references=args.references)
    start = time.process_time()
    records = protocol_records(data, ALGORITHMS, list(range(args.seeds)), options)
    cpu = time.process_time() - start
    summary = summarise_records(records)
    print(f"| target | protocol | attack / baseline | ROC AUC mean ± sd [95% t, {args.seeds} seeds] | TPR@1%FPR mean [95% t] |")
    print("|---|---|---|---|---|")
    for s in summary:
        a, t = s["auc"], s["tpr@1%fpr"]
        tpr = f"{t['value']:.3f} [{t['low']:.3f}, {t['high']:.3f}]" if t else f"not resolvable with n = {s['n_nonmembers']}"
        print(f"| {s['algorithm']} | {s['protocol']} | {name_of(s['name'])} | {a['value']:.3f} ± {s['auc_sd']:.3f} "
              f"[{a['low']:.3f}, {a['high']:.3f}] | {tpr} |")
    print(f"\nCPU seconds: {cpu:.0f}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    meta = {"date": time.strftime("%Y-%m-%d"), "machine": f"shared 2-core VM ({platform.machine()})", "cpu_seconds": cpu,
            "seeds": args.seeds, "references": args.references, "model_params": MODEL_PARAMS}
    Path(args.out).write_text(json.dumps({"meta": meta, "summary": summary, "records": records}, indent=1))


if __name__ == "__main__":
    main()
