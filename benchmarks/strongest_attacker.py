"""The strongest membership attacker at the default and the thorough setting (issue 47).

On the targets of the served table (``benchmarks/membership_protocols.py``: the membership lab's
partition, Assumption I, protocol ``served``, the same fixed epochs) plus ALS and NCF, every
attack of the audit (the paper's MLP, LiRA online and offline, RMIA, the output statistics)
against the history baselines; per target and setting the best attack chosen and judged as the
audit does (``compare.judge``: mean over seeds, t interval at the Bonferroni level of the best of
7), its TPR at 1% and 0.1% FPR (``compare.secondary_rows``; "not resolvable" where the sample
cannot resolve it) and the CPU seconds of the whole setting, with the one-minute load average at its start and
end and when it ran (the machine is shared: CPU seconds rise with the load). A setting is a number of reference
recommenders: ``default`` is ``MembershipAuditOptions.n_references``, ``thorough`` is
``THOROUGH_REFERENCES``; ``--references`` sweeps other counts (how the default was chosen).

    RECPRIVACY_DATA=/work/shared/datasets python benchmarks/strongest_attacker.py --dataset ml-100k --seeds 3
    RECPRIVACY_DATA=/work/shared/datasets python benchmarks/strongest_attacker.py --dataset ml-100k --seeds 1 \
        --algorithms bpr,lfm --references 4,8,16,32
    RECPRIVACY_DATA=/work/shared/datasets OMP_NUM_THREADS=1 python benchmarks/strongest_attacker.py --dataset ml-1m \
        --algorithms ncf --settings thorough --workers 3

Writes ``benchmarks/results/strongest_attacker-<dataset>.json`` (or ``--out``) after every target, adding to
the records an earlier run with the same seeds left there (``--settings`` and ``--algorithms`` measure a part).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from recprivacy.data.registry import load_dataset
from recprivacy.experiments.membership import (THOROUGH_REFERENCES, AttackSpec, LabOptions, MembershipAuditOptions,
                                               MembershipLab, Scored, judge, name_of, score_all,
                                               secondary_rows)

ALGORITHMS = ("itemcf", "lfm", "bpr", "als", "lightgcn", "ncf")
#: the served table's fixed epochs (no early stopping: the lab trains on members only); NCF at its default 20
MODEL_PARAMS = {"bpr": {"n_epochs": 30}, "lightgcn": {"n_epochs": 15}}


def settings(references: str | None) -> dict[str, int]:
    """Setting name -> number of reference recommenders."""
    if references:
        return {f"{n} references": int(n) for n in references.split(",")}
    return {"default": MembershipAuditOptions().n_references, "thorough": THOROUGH_REFERENCES}


def scored_seed(data: Any, algorithm: str, seed: int, n_references: int) -> tuple[Scored, float]:
    """Every attack and baseline on one target and seed, with the CPU seconds it took (measured in the
    process that ran it, so that seeds run in worker processes are counted)."""
    start = time.process_time()
    options = LabOptions(model_params=MODEL_PARAMS, n_references=n_references)
    spec = AttackSpec((data.name, algorithm), (data.name, algorithm), protocol="served")
    return score_all(MembershipLab({data.name: data}, options, seed=seed), spec), time.process_time() - start


def scored_seeds(data: Any, algorithm: str, seeds: list[int], n_references: int, workers: int) -> list[tuple[Scored, float]]:
    """``scored_seed`` for every seed: in this process, or in ``workers`` spawned processes (a seed
    per process; the numbers are the same, the wall time shorter)."""
    if workers <= 1:
        return [scored_seed(data, algorithm, seed, n_references) for seed in seeds]
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        futures = [pool.submit(scored_seed, data, algorithm, seed, n_references) for seed in seeds]
        return [f.result() for f in futures]


def measure(data: Any, algorithm: str, seeds: list[int], n_references: int, workers: int = 1) -> dict[str, Any]:
    """The best attack on one target over ``seeds`` with ``n_references`` references."""
    start, load = time.process_time(), os.getloadavg()[0]
    per_seed = scored_seeds(data, algorithm, seeds, n_references, workers)
    runs = [run for run, _ in per_seed]
    cpu = sum(seconds for _, seconds in per_seed) + (time.process_time() - start if workers > 1 else 0.0)
    j = judge(runs)
    tprs = {metric: value.to_dict() for metric, value, *_ in secondary_rows(runs, j)}
    return {"algorithm": algorithm, "n_references": n_references, "best_attack": j.best_attack,
            "auc": j.attack.to_dict(), "per_seed": list(j.per_seed), "baseline": j.best_baseline,
            "baseline_auc": j.baseline.to_dict(), "margin": j.margin.to_dict(), "verdict": j.verdict.label, "tpr": tprs,
            "n_members": j.sample.positives, "n_nonmembers": j.sample.negatives, "cpu_seconds": cpu,
            "load_average": [round(load, 2), round(os.getloadavg()[0], 2)], "date": time.strftime("%Y-%m-%d %H:%M")}  # fmt: skip


def row(setting: str, r: dict[str, Any]) -> str:
    """One Markdown row."""
    a = r["auc"]
    tpr = " | ".join(f"{t['value']:.3f} [{t['low']:.3f}, {t['high']:.3f}]" if t["resolvable"]
                     else f"not resolvable with n = {r['n_nonmembers']}" for t in r["tpr"].values())  # fmt: skip
    return (f"| {r['algorithm']} | {setting} | {name_of(r['best_attack'])} | {a['value']:.3f} [{a['low']:.3f}, {a['high']:.3f}] "
            f"| {tpr} | {r['cpu_seconds']:.0f} |")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="ml-100k")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--algorithms", default=",".join(ALGORITHMS))
    parser.add_argument("--settings", default="default,thorough", help="which of the two settings to measure")
    parser.add_argument("--references", default=None, help="comma-separated reference counts instead of the two settings")
    parser.add_argument("--out", default=None)
    parser.add_argument("--workers", type=int, default=1, help="processes running seeds side by side (CPU s are summed)")
    args = parser.parse_args()
    data = load_dataset(args.dataset, Path(os.environ.get("RECPRIVACY_DATA", "../shared/datasets")) / args.dataset)
    out = Path(args.out or Path(__file__).parent / "results" / f"strongest_attacker-{args.dataset}.json")
    chosen = {name: n for name, n in settings(args.references).items() if args.references or name in args.settings.split(",")}
    records, dates = kept_records(out, args.seeds)
    meta = {"date": dates, "machine": f"shared 2-core VM ({platform.machine()})", "dataset": args.dataset,
            "seeds": args.seeds, "model_params": MODEL_PARAMS,
            "command": f"python benchmarks/strongest_attacker.py --dataset {args.dataset} --seeds {args.seeds}"}  # fmt: skip
    print("| target | setting | best attack | ROC AUC [t interval] | TPR@1%FPR | TPR@0.1%FPR | CPU s |\n|---|---|---|---|---|---|---|")
    for setting, n in chosen.items():
        for algorithm in args.algorithms.split(","):
            record = {"setting": setting, **measure(data, algorithm, list(range(args.seeds)), n, args.workers)}
            records = [r for r in records if (r["setting"], r["algorithm"]) != (setting, algorithm)] + [record]
            write(out, meta, records)  # after every target: an interrupted run keeps what it measured
            print(row(setting, record), flush=True)


def kept_records(out: Path, seeds: int) -> tuple[list[dict[str, Any]], str]:
    """The records of an earlier run with the same number of seeds (the run adds to them) and
    the dates of the runs the record then holds (the earlier ones', then today's)."""
    today = time.strftime("%Y-%m-%d")
    earlier = json.loads(out.read_text()) if out.is_file() else None
    if earlier is None or earlier["meta"]["seeds"] != seeds:
        return [], today
    dates = earlier["meta"]["date"]
    return earlier["records"], dates if today in dates else f"{dates} and {today}"


def write(out: Path, meta: dict[str, Any], records: list[dict[str, Any]]) -> None:
    """The record file, written atomically."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".partial")
    tmp.write_text(json.dumps({"meta": meta, "records": records}, indent=1))
    tmp.replace(out)


if __name__ == "__main__":
    main()
