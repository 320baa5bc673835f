"""Benchmark UPC-SDG (paper 003): the acceptance checks of the issue on real data, and speed.

Quality: runs ``configs/upcsdg/<dataset>.yaml`` (3 seeds: Table 2, the k x γ grid with the
recovery attack, Table 3) with ``recprivacy.experiments.run_config`` and checks, from the
run's results, that

1. at k = 0.2, γ = 0.9 BPR-MF on the synthetic data keeps >= 67% of its original Recall@20
   (both masking protocols are reported; the paper's masks the synthetic training items);
2. at k = 0.8, γ = 0.1 it keeps less than at k = 0.2, γ = 0.9;
3. UPC-SDG beats UPC-SDG_s, _r and _f (Recall@20, γ = 0.9) at k = 0.2 and at k = 0.8;
4. the mean f_sim of replacements rises with γ (for every k);
5. the recovery attack's Recall@10 falls as γ falls (for every k), reported for every cell;

and reports the membership attack's ROC AUC per cell beside them.

Speed: times ``experiments.upcsdg.synthesize`` end to end (loading, BPR-MF features with early
stopping, generator training, export and file writing) ``--repeats`` times per dataset and
quotes the median wall time and the median CPU time of the process (on the shared machine the
CPU time is the better estimate of the wall time on an idle one, with one training thread).

Usage::

    python benchmarks/upcsdg.py quality --dataset amazon-musical-instruments [--out-runs runs/bench]
    python benchmarks/upcsdg.py quality --from-run runs/bench/<run folder>   # re-check a finished run
    python benchmarks/upcsdg.py quality --dataset ml-100k --executor ray          # the seeds' cells on Ray workers
    python benchmarks/upcsdg.py quality --dataset ml-100k --resume <run folder>   # finish an interrupted run
    python benchmarks/upcsdg.py quality --dataset ml-100k --set 'study_options.seeds=[1]' --tag seed1   # one seed per process,
    python benchmarks/upcsdg.py quality --from-run <seed-0 run> --from-run <seed-1 run> ...             # then merged
    python benchmarks/upcsdg.py quality --dataset ml-100k --set 'study_options.parts=[membership]' --tag membership
    python benchmarks/upcsdg.py speed --dataset ml-100k --repeats 3
    python benchmarks/upcsdg.py markdown          # the tables for BENCHMARKS.md

Writes ``benchmarks/out/upcsdg-<dataset>.json`` / ``benchmarks/out/upcsdg-speed-<dataset>.json``
and prints Markdown for BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from recprivacy.config import load_config
from recprivacy.experiments import load_results, run_config, write_run
from recprivacy.experiments.kit import EXECUTORS, make_executor
from recprivacy.experiments.upcsdg import ATTACKS, VARIANTS, merge_runs, synthesize

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "out"


def machine() -> dict[str, Any]:
    """Where and when the numbers were measured (the machine is shared: load matters)."""
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    return {"cpu": cpu, "cores": os.cpu_count(), "load_average": os.getloadavg(), "python": platform.python_version(),
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def utility_checks(metrics: dict[str, float]) -> dict[str, Any]:
    """Checks 1-3 (both masking protocols)."""
    def bpr(variant: str, k: float, gamma: float, column: str) -> float:
        return metrics[f"{variant}/k={k}/gamma={gamma}/bpr/{column}@20"]

    original = metrics["original/bpr/recall@20"]
    out: dict[str, Any] = {"original_recall@20": original}
    for column in ("recall", "recall_history"):
        plus, minus = bpr("UPC-SDG", 0.2, 0.9, column), bpr("UPC-SDG", 0.8, 0.1, column)
        out[column] = {"retention_plus": plus / original, "retention_minus": minus / original,
                       "plus_keeps_67pct": plus / original >= 0.67, "minus_below_plus": minus < plus,
                       "beats_ablations": {str(k): {v: bpr("UPC-SDG", k, 0.9, column) > bpr(v, k, 0.9, column)
                                                    for v in VARIANTS if v != "UPC-SDG"} for k in (0.2, 0.8)}}
    return out


def grid_checks(metrics: dict[str, float], grid_k: list[float], grid_gamma: list[float], attack_k: int) -> dict[str, Any]:
    """Checks 4-5 and every recovery cell."""
    def by_gamma(key: str) -> dict[str, list[float]]:
        return {str(k): [metrics[f"UPC-SDG/k={k}/gamma={g}/{key}"] for g in grid_gamma] for k in grid_k}

    out: dict[str, Any] = {"mean_f_sim_by_gamma": by_gamma("mean_f_sim"), "heldout_share_by_gamma": by_gamma("share_heldout")}
    out["similarity_rises_with_gamma"] = {k: all(a <= b for a, b in zip(v, v[1:])) for k, v in out["mean_f_sim_by_gamma"].items()}
    for attack in ATTACKS:
        out[f"recovery_{attack}_by_gamma"] = by_gamma(f"recovery/{attack}/recall@{attack_k}")
    out["recovery_falls_as_gamma_falls"] = {k: all(a <= b for a, b in zip(v, v[1:]))
                                            for k, v in out["recovery_blind_by_gamma"].items()}
    return out


def membership_checks(metrics: dict[str, float], grid_k: list[float], grid_gamma: list[float]) -> dict[str, Any]:
    """Membership ROC AUC on the original data and per cell."""
    return {"original": metrics["membership/original/auc"],
            **{str(k): [metrics[f"UPC-SDG/k={k}/gamma={g}/membership/auc"] for g in grid_gamma] for k in grid_k}}


def quality(args: argparse.Namespace) -> None:
    if args.from_run and len(args.from_run) > 1:  # one process per seed: merge, then check the merged run
        results = merge_runs([load_results(run) for run in args.from_run])
        run_dir = write_run(results, args.out_runs)
    elif args.from_run:
        run_dir = Path(args.from_run[0])
        results = load_results(run_dir)
    else:
        config = load_config(ROOT / "configs" / "upcsdg" / f"{args.dataset}.yaml", args.set or [])
        results, run_dir = run_config(config, args.out_runs, resume=args.resume, executor=make_executor(args.executor))
    options = results.config["study_options"]
    grid_k = options.get("grid_k", [0.2, 0.4, 0.6, 0.8])
    grid_gamma = options.get("grid_gamma", [0.1, 0.3, 0.5, 0.7, 0.9])
    metrics, found = results.metrics, {}
    if "UPC-SDG_s/k=0.2/gamma=0.9/bpr/recall@20" in metrics:
        found["utility"] = utility_checks(metrics)
    if "grid" in results.tables:
        found["grid"] = grid_checks(metrics, grid_k, grid_gamma, options.get("attack_k", 10))
    if "membership/original/auc" in metrics:
        found["membership_auc_by_gamma"] = membership_checks(metrics, grid_k, grid_gamma)
    report = {"machine": machine(), "run": str(run_dir), "dataset": results.dataset, "timings": results.timings,
              "checks": found,
              "tables": {name: results.tables[name].model_dump()
                         for name in ("table2", "retention", "table3", "grid", "membership") if name in results.tables}}
    OUT.mkdir(parents=True, exist_ok=True)
    name = results.dataset.get("name", args.dataset)
    path = OUT / f"upcsdg-{args.tag + '-' if args.tag else ''}{name}.json"
    path.write_text(json.dumps(report, indent=2, default=str))
    print(json.dumps(report["checks"], indent=2))
    print(f"written {path}")


def speed(args: argparse.Namespace) -> None:
    config = load_config(ROOT / "configs" / "upcsdg" / f"{args.dataset}.yaml", args.set or [])
    seconds, cpu = [], []
    for repeat in range(args.repeats):
        with tempfile.TemporaryDirectory() as tmp:
            start, start_cpu = time.perf_counter(), _cpu_seconds()
            release = synthesize(config.model_copy(update={"seed": repeat}), tmp, None, args.k, args.gamma)
            seconds.append(time.perf_counter() - start)
            cpu.append(_cpu_seconds() - start_cpu)
        print(f"repeat {repeat}: {seconds[-1]:.1f} s wall, {cpu[-1]:.1f} s CPU, "
              f"epochs {release.summary['method']['epochs_trained']}", flush=True)
    report = {"machine": machine(), "dataset": args.dataset, "k": args.k, "gamma": args.gamma, "seconds": seconds,
              "median_seconds": statistics.median(seconds), "cpu_seconds": cpu, "median_cpu_seconds": statistics.median(cpu),
              "torch_threads_env": os.environ.get("OMP_NUM_THREADS")}
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"upcsdg-speed-{args.dataset}.json"
    path.write_text(json.dumps(report, indent=2))
    print(f"median {report['median_seconds']:.1f} s over {args.repeats}; written {path}")


def _fmt(value: Any) -> str:
    return "n/a" if value is None else f"{value:.4f}" if isinstance(value, float) else str(value)


def markdown(args: argparse.Namespace) -> None:
    """Print the BENCHMARKS.md tables from every ``benchmarks/out/upcsdg-*.json``."""
    for path in sorted(OUT.glob("upcsdg-*.json")):
        report = json.loads(path.read_text())
        if "median_seconds" in report:
            m = report["machine"]
            print(f"- speed, {report['dataset']}: median {report['median_seconds']:.0f} s wall, "
                  f"{report['median_cpu_seconds']:.0f} s CPU ({len(report['seconds'])} run(s), load average "
                  f"{m['load_average'][0]:.1f} on {m['cores']} cores, {m['date']})")
            continue
        print(f"\n### {report['dataset'].get('name')} ({path.name}, {report['machine']['date']})\n")
        for name, table in report["tables"].items():
            print(f"*{name}: {table['caption']}*\n")
            print("| " + " | ".join(map(str, table["columns"])) + " |")
            print("|" + "---|" * len(table["columns"]))
            for row in table["rows"]:
                print("| " + " | ".join(_fmt(v) for v in row) + " |")
            print()
        print("```json\n" + json.dumps(report["checks"], indent=1)[:4000] + "\n```")


def _cpu_seconds() -> float:
    """User + system CPU seconds of this process (less sensitive to other jobs than wall time)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    q = sub.add_parser("quality")
    q.add_argument("--dataset", default="amazon-musical-instruments")
    q.add_argument("--from-run", action="append", help="re-check a finished run folder; several (runs of one "
                   "config with different seeds, e.g. one process per seed) are merged into one run first")
    q.add_argument("--out-runs", default=str(ROOT / "runs" / "benchmarks"))
    q.add_argument("--set", action="append")
    q.add_argument("--tag", default="", help="Inserted in the output file name (e.g. 'membership').")
    q.add_argument("--resume", help="continue the interrupted run in this folder (its saved config must equal this one)")
    q.add_argument("--executor", choices=EXECUTORS, default="inprocess", help="where the study's cells run (one Ray task per seed)")
    s = sub.add_parser("speed")
    s.add_argument("--dataset", default="ml-100k")
    s.add_argument("--repeats", type=int, default=3)
    s.add_argument("--k", type=float, default=0.2)
    s.add_argument("--gamma", type=float, default=0.5)
    s.add_argument("--set", action="append")
    sub.add_parser("markdown")
    args = parser.parse_args()
    {"quality": quality, "speed": speed, "markdown": markdown}[args.command](args)


if __name__ == "__main__":
    main()
