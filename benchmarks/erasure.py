"""Erasure verification on MovieLens-100K at full size (issue 51): is a deletion detectable?

For each target (BPR-MF at 30 epochs, ALS with its defaults, and an ALS that memorises: 256
factors, alpha 40) and each seed, 60% of the users are members before the deletion, a fifth of
them (``--forget``) are forgotten and the rest never-members (seeded); the before-model trains on the members and
the after-model is either retrained without the forgotten users (``retrained``) or the before-model
that only stops serving them by id (``fake``: the forgotten users are served from their history as
new users). ``Audit.erasure`` with its defaults (k = 100, l = 100, 8 references) judges each; the
record keeps every row's verdict, value, interval and sample; each seed is its own deletion,
judged on its own (docs/erasure.md says why the seeds are not pooled). Prints a Markdown table and
writes ``benchmarks/results/erasure.json``.

    RECPRIVACY_DATA=/work/shared/datasets python benchmarks/erasure.py --seeds 3
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
from recprivacy.models import make_model
from record import write_record

TARGETS = {"bpr": ("bpr", {"n_epochs": 30}), "als": ("als", {}),
           "als-memorising": ("als", {"factors": 256, "regularization": 1.0, "alpha": 40.0})}  # fmt: skip
MODES = ("retrained", "fake")
#: the share of the members forgotten (the rest are retained members, the positive control)
FORGET = 0.2


def erasure_rows(data: Any, target: str, fake: bool, seed: int, forget: float = FORGET) -> list[dict[str, Any]]:
    """The verdict records (secondary rows left out) of one deletion drawn with ``seed``,
    forgetting the share ``forget`` of the members."""
    algorithm, params = TARGETS[target]
    ids = np.random.default_rng(seed).permutation(data.user_ids)
    members, never = ids[: int(0.6 * len(ids))], ids[int(0.6 * len(ids)) :]
    forgotten = members[: int(forget * len(members))]
    trained = np.isin(data.user_ids[data.users], members)
    before = make_model(algorithm, seed=seed, **params).fit(data.select(trained))
    kept = trained & ~np.isin(data.user_ids[data.users], forgotten)
    after = before if fake else make_model(algorithm, seed=seed + 100, **params).fit(data.select(kept))
    results = Audit.erasure(Target.from_recommender(before), Target.from_recommender(after), data, members, forgotten, never,
                            seed=seed, noise="simulation").run()  # fmt: skip
    return [v for v in results.verdicts if v["kind"] != "secondary"]


def printed(target: str, mode: str, seed: int | str, row: dict[str, Any]) -> str:
    """One Markdown row of a verdict record."""
    v, m = row["value"], row["margin"]
    return (f"| {target} | {mode} | {seed} | {row['attack']} | {v['value']:.3f} [{v['low']:.3f}, {v['high']:.3f}] "
            f"| {m['value']:+.3f} [{m['low']:+.3f}, {m['high']:+.3f}] | {row['label']} |")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--forget", type=float, default=FORGET, help="share of the members forgotten")
    parser.add_argument("--targets", default=",".join(TARGETS), help="comma-separated, of: " + ", ".join(TARGETS))
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "erasure.json"))
    args = parser.parse_args()
    data = load_dataset("ml-100k", Path(os.environ.get("RECPRIVACY_DATA", "../shared/datasets")) / "ml-100k")
    records, start = [], time.process_time()
    print("| target | unlearning | seed | comparison | ROC AUC [interval] | margin [interval] | verdict |\n|---|---|---|---|---|---|---|")
    for target in args.targets.split(","):
        for mode in MODES:
            for seed in range(args.seeds):
                for row in erasure_rows(data, target, mode == "fake", seed, args.forget):
                    records.append({"target": target, "unlearning": mode, "seed": seed, **row})
                    print(printed(target, mode, seed, row), flush=True)
    targets = {t: TARGETS[t] for t in args.targets.split(",")}
    write_record({"benchmark": "erasure", "dataset": "ml-100k", "seeds": args.seeds, "targets": targets, "forget": args.forget,
                  "cpu_seconds": time.process_time() - start, "records": records}, args.out)  # fmt: skip


if __name__ == "__main__":
    main()
