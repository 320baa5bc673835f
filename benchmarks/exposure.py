"""Benchmark and full-size studies of the exposure leakage attack (paper 000), resumable.

The ``tables``, ``sweep`` and ``protection`` modes run the study's own cells
(``recprivacy.experiments.exposure``: ``study_cells`` and ``ExposureGrid`` on the study kit's
``Bench``) with the workload's config (``configs/exposure/<workload>-tables.yaml``,
``-slate-sweep.yaml``, ``-protection.yaml``), and write each finished cell as one flat record:

* ``tables`` (Tables 3-6): one cell per (workload, encoder+decoder, seed), and the blind
  baselines once;
* ``sweep`` (Figs. 6-7): one cell per (workload, slate size N, decoder) with the sweep encoder;
* ``protection`` (Figs. 8-13): one cell per (workload, selection, replacement, L, attacker) for
  the frozen attacker and, for the config's ``adaptive`` strategies, an attacker retrained on
  perturbed exposure; plus the no-information floor. The first cell to run fits the frozen
  attacker (and the item embeddings) for the rest; each row keeps its per-pair Rec*@10 and
  users, which the paired judgement against L = 0 needs.

Two more modes time the study's attacker (``attacker_cost`` and ``attacker_rates`` of the study):

* ``speed``: one attacker (``--model``) end to end in a fresh child process per workload, so
  peak resident memory is its own: target recommender, slates, training, evaluation; wall and
  CPU seconds per stage, training and evaluation pairs per CPU second, Recall@10 beside the
  better baseline. Writes ``benchmarks/out/exposure.json``.
* ``rates``: training and evaluation pairs per CPU second of every model (``--models``,
  default all 12): one epoch of training (minus its validation pass), one validation pass
  and the test evaluation under both candidate sets, on the cached pairs; JSON lines.

Each finished cell is appended as one JSON line to ``--runs`` (default
``benchmarks/results/exposure_runs.jsonl``, committed) with its CPU and wall seconds; ``--resume`` skips the
cells already there, so the study survives interruptions; ``--executor ray`` runs the cells on
Ray workers (``recprivacy.experiments.kit``). The simulated pairs (and the target recommender)
are built once per workload and seed and cached under ``benchmarks/out/cache/``.
``--summary-only`` prints the study's own tables from the JSON lines (the study's ``runs_report``;
``recprivacy.experiments.exposure.runs`` documents the record): Tables 3-6 with the
baselines and the acceptance checks (best model at least twice the better baseline, sequence
vs point-wise decoding), the slate-size sweep, and the protection table with its checks
(rows recorded before the per-pair recalls were kept say they are not judged).

Usage::

    OMP_NUM_THREADS=1 python benchmarks/exposure.py --mode rates --workloads ml-1m
    OMP_NUM_THREADS=1 python benchmarks/exposure.py --mode tables --workloads ml-1m --resume [--models M1,M2] [--seeds 0,1]
    OMP_NUM_THREADS=1 python benchmarks/exposure.py --mode protection --workloads ml-1m --resume
    OMP_NUM_THREADS=1 python benchmarks/exposure.py --mode sweep --workloads ml-1m --resume [--executor ray]
    python benchmarks/exposure.py --summary-only
    ... --set study_options.attacker.n_epochs=100 --runs benchmarks/out/exposure_runs_100.jsonl
    BENCH_THREADS=2 python benchmarks/exposure.py --mode speed --workloads ml-1m,mind
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pickle
import platform
import resource
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
from record import append_record, load_records
from runs_file import RunsFile

from recprivacy.config import load_config, validate_options
from recprivacy.experiments import new_results
from recprivacy.experiments.exposure import (
    EXPERIMENT,
    ExposureData,
    ExposureGrid,
    ExposureOptions,
    attacker_cost,
    attacker_rates,
    blind_baselines,
    build_exposure,
    cell_key,
    record_key,
    record_result,
    runs_report,
    study_cells,
    wanted,
)
from recprivacy.experiments.kit import Bench, make_executor
from recprivacy.timing import clocked

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "out"
CACHE = OUT / "cache"
#: committed JSON-lines records of finished cells (they outlive a session's machine)
RESULTS = ROOT / "benchmarks" / "results"
#: config overrides KEY=VALUE from ``--set`` (e.g. ``study_options.attacker.n_epochs=100``)
OVERRIDES: list[str] = []
SUFFIX = {"tables": "tables", "sweep": "slate-sweep", "protection": "protection", "speed": "tables", "rates": "tables"}


def threads() -> int:
    """Torch threads for this process (``BENCH_THREADS``, default 1); the attacker's training
    loop follows it through ``RECPRIVACY_TRAIN_THREADS``."""
    n = int(os.environ.get("BENCH_THREADS", "1"))
    os.environ.setdefault("RECPRIVACY_TRAIN_THREADS", str(n))
    import torch

    torch.set_num_threads(n)
    return n


def threads_used() -> int:
    import torch

    return torch.get_num_threads()


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# ---------------------------------------------------------------------------- data


def load_workload(workload: str, mode: str, data_dir: str | None):
    """(config, options) of a workload's config file for ``mode``: ``configs/exposure/
    <workload>-<mode>.yaml``, or ``<workload>.yaml`` for every mode (e.g. ``smoke-synthetic``)."""
    path = ROOT / "configs" / "exposure" / f"{workload}.yaml"
    if not path.exists():
        path = path.with_name(f"{workload}-{SUFFIX[mode]}.yaml")
    config = load_config(str(path), overrides=OVERRIDES, updates={"dataset.data_dir": data_dir} if data_dir else {})
    return config, validate_options(ExposureOptions, config.study_options)


def recipe(config, *more: Any) -> str:
    """A short hash of the config's dataset (but its folder) and target sections and ``more``."""
    sections = [config.dataset.model_dump(mode="json", exclude={"data_dir"}), config.model.model_dump(mode="json"), *more]
    return hashlib.sha1(json.dumps(sections, sort_keys=True).encode()).hexdigest()[:8]


def exposure_data(config, options, max_slate: int) -> tuple[ExposureData, dict]:
    """The study's ``ExposureData`` (pairs, user groups, target), cached per dataset and target
    (their config sections), source, lengths and seed so that every mode and cell reads the
    same pairs (a retrained target is not bitwise the same under another thread count, so the
    cache is never rebuilt over; each cell records ``pairs_digest``)."""
    key = f"{config.dataset.name}-{options.source}-{config.model.name}-M{options.history_len}-N{max_slate}" \
          f"-cap{options.max_pairs_per_user}-seed{config.seed}-{recipe(config)}"  # fmt: skip
    path = CACHE / f"exposure-{key}.pkl"
    if path.exists():
        return pickle.loads(path.read_bytes()), {"cached": str(path)}
    data, cost = clocked(lambda: build_exposure(config, options, new_results(config), max_slate))
    write_pickle(path, data)
    return data, {"built": str(path), **cost}


def pairs_digest(pairs) -> str:
    """A short hash of the pairs' histories and slates: the build a cell was computed on."""
    h = hashlib.sha1(np.ascontiguousarray(pairs.histories).tobytes())
    h.update(np.ascontiguousarray(pairs.slates).tobytes())
    return h.hexdigest()[:12]


def write_pickle(path: Path, obj: Any) -> None:
    """Pickle ``obj`` to ``path`` atomically (a per-process temporary file, then rename)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(pickle.dumps(obj))
    tmp.replace(path)


# ---------------------------------------------------------------------------- cells


def stamped(record: dict) -> dict:
    """``record`` with the date (UTC) and this process's peak resident memory."""
    return {**record, "date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "peak_rss_mb": peak_rss_mb()}


def flat_record(keys: dict[str, dict], build: dict):
    """``to_record`` of the runs file: a cell's key (``keys`` by cell key), cost, threads, the
    build of the pairs and the study's ``record_result``; says on stdout what it cost."""

    def to_record(cell, result) -> dict:
        cost = {m.metric: m.value for m in result.measurements if m.metric in ("seconds", "cpu_seconds")}
        key = keys[cell.key]
        print(f"{json.dumps(key)}: {cost['cpu_seconds']:.0f} CPU s, {cost['seconds']:.0f} wall s", flush=True)
        return stamped({**key, "wall_s": cost["seconds"], "cpu_s": cost["cpu_seconds"], **build, "result": record_result(cell, result)})

    return to_record


def run_cells(mode: str, workloads: list[str], data_dir: str | None, runs: Path, resume: bool, only: set[str] | None,
              seeds: set[int] | None = None, executor: str = "inprocess") -> None:  # fmt: skip
    """The mode's study cells of every workload that ``--runs`` does not hold yet (``--resume``)."""
    done = {cell_key(r) for r in load_records(runs)} if resume else set()
    for workload in workloads:
        config, options = load_workload(workload, mode, data_dir)
        options = options.model_copy(update={"experiments": [EXPERIMENT[mode]]})
        keys = {c.key: record_key(mode, workload, options, dict(c.setting)) for c in study_cells(options)}
        todo = [c for c in study_cells(options) if cell_key(keys[c.key]) not in done and wanted(mode, dict(c.setting), only, seeds)]
        baselines = {"mode": "tables", "workload": workload, "model": "baselines"}
        more_baselines = mode == "tables" and cell_key(baselines) not in done
        if not todo and not more_baselines:
            continue  # a fully resumed mode never touches the data
        max_slate = max([options.slate_size] + (options.slate_sizes if mode == "sweep" else []))
        data, info = exposure_data(config, options, max_slate)
        print(f"pairs: {info}", flush=True)
        build = {"threads": threads_used(), "pairs_digest": pairs_digest(data.pairs)}
        if more_baselines:
            result, cost = clocked(lambda: blind_baselines(options, data.parts(options.slate_size, options)))
            append_record(runs, stamped({**baselines, **cost, **build, "result": result}))
        grid = ExposureGrid(f"exposure-{workload}", options, data, config.noise)
        Bench(RunsFile(runs, flat_record(keys, build)), make_executor(executor)).run(grid, todo)


def summary(records: list[dict]) -> list[str]:
    """The study's tables and checks (Markdown) from the cells' records."""
    return runs_report(records, lambda workload: load_workload(workload, "tables", None)[1])


# ---------------------------------------------------------------------------- speed


def run_speed(workload: str, data_dir: str | None, model: str) -> dict:
    """One attacker end to end in this process (target and slates built here; the study
    cache is neither read nor written)."""
    n = threads()
    config, options = load_workload(workload, "speed", data_dir)
    data, build = clocked(lambda: build_exposure(config, options, new_results(config), options.slate_size))
    cost = attacker_cost(options, data.parts(options.slate_size, options), model)
    stages = {"pairs (target + slates)": build, **cost.pop("stages")}
    return {"workload": workload, "model": model, "threads": n, **cost, "stages": stages,
            "total_wall_s": sum(s["wall_s"] for s in stages.values()), "total_cpu_s": sum(s["cpu_s"] for s in stages.values()),
            "peak_rss_mb": peak_rss_mb()}  # fmt: skip


def rates(workload: str, data_dir: str | None, models: list[str] | None):
    """Pairs per CPU second of each model (module docstring, ``rates``)."""
    config, options = load_workload(workload, "rates", data_dir)
    data, _ = exposure_data(config, options, options.slate_size)
    for row in attacker_rates(options, data.parts(options.slate_size, options), models):
        yield {"workload": workload, "model": row.pop("model"), "threads": threads_used(), **row}


def speed(workloads: list[str], data_dir: str | None, model: str) -> None:
    rows = []
    for workload in workloads:
        cmd = [sys.executable, __file__, "--mode", "speed", "--child", workload, "--model", model]
        cmd += ["--data-dir", data_dir] if data_dir else []
        cmd += [arg for item in OVERRIDES for arg in ("--set", item)]
        out = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if out.returncode != 0:
            raise SystemExit(f"{workload} failed:\n{out.stderr[-2000:]}")
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(json.dumps(rows[-1]), flush=True)
    doc = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
           "machine": {"platform": platform.platform(), "cpus": os.cpu_count()}, "command": " ".join(sys.argv), "results": rows}  # fmt: skip
    path = OUT / "exposure.json"
    path.parent.mkdir(exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(doc, indent=2))
    tmp.replace(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=["speed", "rates", "tables", "sweep", "protection"], default="speed")
    parser.add_argument("--data-dir", default=os.environ.get("RECPRIVACY_DATA"))
    parser.add_argument("--workloads", default="ml-1m", help="comma-separated config prefixes of configs/exposure/")
    parser.add_argument("--model", default="att+transformer", help="speed mode: the attacker")
    parser.add_argument("--models", default=None, help="rates/tables/sweep: only these encoder+decoder models (comma-separated)")
    parser.add_argument("--seeds", default=None, help="tables: only these seeds (comma-separated)")
    parser.add_argument("--runs", default=str(RESULTS / "exposure_runs.jsonl"), help="JSON-lines file of finished cells")
    parser.add_argument("--resume", action="store_true", help="skip the cells already in --runs")
    parser.add_argument("--summary-only", action="store_true", help="print the tables and checks of --runs and exit")
    parser.add_argument("--set", action="append", default=[], help="config override KEY=VALUE (repeatable); "
                        "use another --runs file for other settings, as cells are keyed without them")
    parser.add_argument("--executor", choices=["inprocess", "ray"], default="inprocess",
                        help="tables/sweep/protection: where the cells run (a local Ray instance with ray)")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    OVERRIDES.extend(args.set)
    runs = Path(args.runs)
    if args.child:
        print(json.dumps(run_speed(args.child, args.data_dir, args.model)))
        return
    if not args.summary_only:
        workloads = args.workloads.split(",")
        if args.mode == "speed":
            speed(workloads, args.data_dir, args.model)
            return
        threads()
        if args.mode == "rates":
            for workload in workloads:
                for row in rates(workload, args.data_dir, args.models.split(",") if args.models else None):
                    print(json.dumps(row), flush=True)
            return
        runs.parent.mkdir(parents=True, exist_ok=True)
        run_cells(args.mode, workloads, args.data_dir, runs, args.resume, set(args.models.split(",")) if args.models else None,
                  {int(x) for x in args.seeds.split(",")} if args.seeds else None, args.executor)  # fmt: skip
    print("\n".join(summary(load_records(runs))))


if __name__ == "__main__":
    main()
