"""DIPSGNN (paper 002) Table 2 layout for one dataset: every method x seed, resumable.

Runs the protocol of ``recprivacy.experiments.dipsgnn`` (``--config``, default
``configs/dipsgnn/ml-1m.yaml``; ``ml-100k.yaml`` and ``yelp.yaml`` run the same way)
one (method, seed) at a time, the study's own cells (``DIPSGNNStudy.grid`` on the study kit's
``Bench``; ``--executor ray`` runs them on Ray workers), and appends each finished run to a
JSON-lines file, so a long benchmark survives interruptions (``--resume`` skips what is done). The summary prints Table 2
(means over seeds, the paper's numbers beside ours, DIPSGNN vs EdgeRand with a paired t-test),
the composed epsilons and the time per epoch, and writes it as JSON to ``--out``
(default ``benchmarks/out/dipsgnn.json``).

Usage::

    OMP_NUM_THREADS=2 python benchmarks/dipsgnn.py --data-dir ../shared/datasets \\
        [--methods SRGNN,EdgeRand,DIPSGNN] [--seeds 0,1,2,3,4] [--set model.params.n_epochs=10] [--resume]
    python benchmarks/dipsgnn.py --summary-only
"""

from __future__ import annotations

import argparse
import json
import math
import platform
from datetime import datetime, timezone
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from record import load_records
from runs_file import RunsFile

from recprivacy.config import load_config
from recprivacy.experiments.dipsgnn import (
    METHODS,
    PAPER_COLUMN_OF,
    PAPER_METRICS,
    DIPSGNNStudy,
    MethodRun,
    gap_text,
    improvement,
    ordering_text,
    paper_table2,
)
from recprivacy.experiments.kit import Bench, Cell, CellResult, make_executor
from recprivacy.io import write_text_atomic
from recprivacy.metrics.summary import mean_sd

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "out"
#: committed JSON-lines records of finished runs (they outlive a session's machine)
RESULTS = ROOT / "benchmarks" / "results"


def record(run: MethodRun) -> dict:
    """JSON form of one run (statements as their dicts)."""
    return {"method": run.method, "seed": run.seed, "metrics": run.metrics, "masked": run.masked,
            "fit_seconds": run.fit_seconds, "epochs": run.epochs,
            "statements": {k: s.to_dict() for k, s in run.statements.items()}, "valid_curve": run.valid_curve}


def to_record(study: DIPSGNNStudy) -> Callable[[Cell, CellResult], dict]:
    """The runs file's record of a finished study cell: ``record`` of its run, after the sweep
    point's ``parameter`` and ``value`` for a sweep cell; says on stdout what it measured."""

    def convert(cell: Cell, result: CellResult) -> dict:
        run = study.method_run(cell, result)
        point = {k: cell.setting[k] for k in ("parameter", "value") if k in cell.setting}
        where = f"{point['parameter']}={point['value']:g} " if point else ""
        print(f"{where}{run.method} seed {run.seed}: R@20 {run.metrics['recall@20']:.2f} M@20 {run.metrics['mrr@20']:.2f} "
              f"({run.fit_seconds:.0f} s, {run.epochs} epochs)", flush=True)
        return {**point, **record(run)}

    return convert


def summarise(records: list[dict], column: str | None) -> dict:
    """Means, stds, paper values, improvements and epsilons per method (the last run of a
    (method, seed) pair wins)."""
    latest = {(r["method"], r["seed"]): r for r in records}
    by_method: dict[str, list[dict]] = {}
    for (method, _), r in sorted(latest.items(), key=lambda kv: list(METHODS).index(kv[0][0])):
        by_method.setdefault(method, []).append(r)
    runs = {m: [MethodRun(r["method"], r["seed"], r["metrics"], r["masked"], r["fit_seconds"], r["epochs"]) for r in rs]
            for m, rs in by_method.items()}
    out: dict = {"methods": {}}
    for m, rs in by_method.items():
        eps = {}
        for label in rs[0]["statements"]:
            values = [r["statements"][label]["epsilon"] for r in rs]
            eps[label] = None if any(v is None for v in values) else float(np.mean(values))
        out["methods"][m] = {
            "label": METHODS[m][1], "seeds": [r["seed"] for r in rs],
            "mean": {k: float(np.mean([r["metrics"][k] for r in rs])) for k in PAPER_METRICS},
            "std": {k: mean_sd(r["metrics"][k] for r in rs).sd_or_none for k in PAPER_METRICS},
            "masked_mean": {k: float(np.mean([r["masked"][k] for r in rs])) for k in PAPER_METRICS},
            "paper": dict(zip(PAPER_METRICS, paper_table2(column).get(m, (None,) * 4))),
            "epsilon": eps,
            "seconds_per_epoch_median": float(np.median([r["fit_seconds"] / max(r["epochs"], 1) for r in rs])),
            "epochs_median": float(np.median([r["epochs"] for r in rs])),
        }
    if "DIPSGNN" in runs and "EdgeRand" in runs:
        pairs = {k: improvement(runs["DIPSGNN"], runs["EdgeRand"], k) for k in PAPER_METRICS}
        edgerand = {k: {r.seed: r.metrics[k] for r in runs["EdgeRand"]} for k in PAPER_METRICS}
        out["dipsgnn_vs_edgerand"] = {
            k: {"relative_percent": rel, "p_value": p if math.isfinite(p) else None,
                "seeds_won": sum(r.metrics[k] > edgerand[k][r.seed] for r in runs["DIPSGNN"] if r.seed in edgerand[k]),
                "seeds_paired": sum(r.seed in edgerand[k] for r in runs["DIPSGNN"])}
            for k, (rel, p) in pairs.items()}
    out["gap"] = gap_text(runs)
    out["ordering"] = ordering_text(runs, column)
    return out


def print_summary(summary: dict) -> None:
    print(f"{'method':<52}" + "".join(f"{k:>16}" for k in PAPER_METRICS) + f"{'s/epoch':>10}")
    for m, s in summary["methods"].items():
        ours = "".join(f"{s['mean'][k]:>8.2f}" + (f"/{s['paper'][k]:<7.2f}" if s["paper"][k] is not None else " " * 8)
                       for k in PAPER_METRICS)
        print(f"{s['label'][:51]:<52}{ours}{s['seconds_per_epoch_median']:>10.1f}")
        for label, eps in s["epsilon"].items():
            print(f"    {label}: epsilon = {eps if eps is None else round(eps, 3)}")
    for k, v in summary.get("dipsgnn_vs_edgerand", {}).items():
        print(f"DIPSGNN vs EdgeRand {k}: {v['relative_percent']:+.2f}% (paired t-test p = {v['p_value']}; "
              f"higher in {v['seeds_won']} of {v['seeds_paired']} seeds)")
    for key in ("gap", "ordering"):
        if summary.get(key):
            print(summary[key])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default=str(ROOT / "configs" / "dipsgnn" / "ml-1m.yaml"))
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--methods", default=None, help="comma-separated (default: the config's)")
    parser.add_argument("--seeds", default=None, help="comma-separated (default: the config's)")
    parser.add_argument("--set", action="append", default=[], help="config override KEY=VALUE (repeatable)")
    parser.add_argument("--runs", default=str(RESULTS / "dipsgnn_runs.jsonl"), help="JSON-lines file of finished runs")
    parser.add_argument("--resume", action="store_true", help="skip (method, seed) pairs already in --runs")
    parser.add_argument("--summary-only", action="store_true")
    parser.add_argument("--executor", choices=["inprocess", "ray"], default="inprocess",
                        help="where the (method, seed) cells run (a local Ray instance with ray)")
    parser.add_argument("--out", default=str(OUT / "dipsgnn.json"), help="where the summary JSON goes")
    args = parser.parse_args()
    runs_path = Path(args.runs)
    runs_path.parent.mkdir(parents=True, exist_ok=True)
    updates = {"dataset.data_dir": args.data_dir} if args.data_dir else {}
    config = load_config(args.config, overrides=args.set, updates=updates)
    study = DIPSGNNStudy.load(config, prepare=not args.summary_only)
    options = study.options
    if not args.summary_only:
        methods = args.methods.split(",") if args.methods else options.methods
        seeds = [int(s) for s in args.seeds.split(",")] if args.seeds else options.seeds
        done = {(r["method"], r["seed"]) for r in load_records(runs_path)} if args.resume else set()
        cells = [study.cell(m, s) for m in methods for s in seeds if (m, s) not in done]
        Bench(RunsFile(runs_path, to_record(study)), make_executor(args.executor)).run(study.grid, cells)
    summary = summarise(load_records(runs_path), options.paper_column or PAPER_COLUMN_OF.get(config.dataset.name))
    summary["machine"] = {"platform": platform.platform(), "processor": platform.processor() or "unknown",
                          "torch_threads": torch.get_num_threads(), "python": platform.python_version()}
    summary["date"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    print_summary(summary)
    out = Path(args.out)
    write_text_atomic(out, json.dumps(summary, indent=2))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
