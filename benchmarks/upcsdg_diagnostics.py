"""Why UPC-SDG's utility differs from the paper's: two measurements on real data, made by the
study's ``run_diagnostics`` (``recprivacy.experiments.upcsdg.diagnostics`` says what they are):

1. **What the learned selection removes**: the within-user Spearman correlation of the attention
   logits with the items' training popularity and with the BPR-MF score, and the mean within-user
   percentile of the BPR-MF score of the items selected for replacement, for the learned
   selection and for the random selection of the UPC-SDG_s ablation.
2. **What the authors' masking does to a release**: for the paper's two settings ("+": k = 0.2,
   γ = 0.9; "−": k = 0.8, γ = 0.1), releases generated with ``candidates="unconsumed"`` (ours)
   and ``candidates="authors"`` (the released code's mask): their size and where their
   replacements land.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/upcsdg_diagnostics.py --dataset ml-100k [--seed 0]

Prints a table and writes ``benchmarks/out/upcsdg-diagnostics-<dataset>.json``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from recprivacy.config import load_config, validate_options
from recprivacy.experiments.upcsdg import UPCSDGOptions, run_diagnostics
from recprivacy.io import write_text_atomic

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "out"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="ml-100k")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    config = load_config(ROOT / "configs" / "upcsdg" / f"{args.dataset}.yaml").model_copy(update={"seed": args.seed})
    out = {"dataset": args.dataset, "seed": args.seed, **run_diagnostics(config, validate_options(UPCSDGOptions, config.study_options))}
    for section in ("selection", "releases"):
        for key, values in out[section].items():
            print(f"{args.dataset} {section:9s} {key:18s} " + "  ".join(f"{k} {v:.3f}" if isinstance(v, float)
                                                                       else f"{k} {v}" for k, v in values.items()))
    path = OUT / f"upcsdg-diagnostics-{args.dataset}.json"
    write_text_atomic(path, json.dumps(out, indent=2) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
