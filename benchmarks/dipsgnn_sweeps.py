"""DIPSGNN (paper 002) Figs. 3-6 on MovieLens-1M: Recall@20 against eps2, eps1, T and C, resumable.

Runs the sweeps of ``configs/dipsgnn/ml-1m-sweeps.yaml`` one (parameter, value, method, seed) at
a time, the study's own sweep cells (``DIPSGNNStudy.grid`` on the study kit; ``--executor ray``
runs them on Ray workers), and appends each finished run to a JSON-lines file (``--resume`` skips what is done), so
the few CPU-days of the full sweeps can be spread over many sessions. The point of each sweep
equal to the study's own setting (eps1 = 20, eps2 = 5, T = 1, C = 0.2) is not rerun: it is taken
from the Table 2 runs of ``benchmarks/dipsgnn.py`` (``--table2-runs``). The summary prints one
Markdown table per sweep (Recall@20 and MRR@20 x100, mean ± sd over the seeds present, the
number of seeds in brackets) and writes ``benchmarks/out/dipsgnn_sweeps.json``.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/dipsgnn_sweeps.py --data-dir ../shared/datasets --resume \\
        [--sweeps eps2,eps1,n_steps,C] [--seeds 0] [--runs benchmarks/results/dipsgnn_sweep_runs.jsonl]
    python benchmarks/dipsgnn_sweeps.py --summary-only
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from dipsgnn import OUT, RESULTS, ROOT, to_record
from record import load_records
from runs_file import RunsFile

from recprivacy.config import load_config
from recprivacy.experiments.dipsgnn import METHODS, DIPSGNNStudy, SweepSpec
from recprivacy.experiments.kit import Bench, make_executor
from recprivacy.io import write_text_atomic
from recprivacy.metrics.summary import format_mean_sd, mean_sd

METRICS = ("recall@20", "mrr@20")


def point_runs(sweep: SweepSpec, value: float, default: float, sweep_records: list[dict],
               table2_records: list[dict]) -> dict[str, list[dict]]:
    """Finished runs of one sweep point per method (the last run of a seed wins)."""
    if value == default:  # the Table 2 runs, of the seeds this sweep has run elsewhere (all when none yet)
        seeds = {r["seed"] for r in sweep_records if r["parameter"] == sweep.parameter}
        chosen = [r for r in table2_records if r["method"] in sweep.methods and (not seeds or r["seed"] in seeds)]
    else:
        chosen = [r for r in sweep_records if r["parameter"] == sweep.parameter and r["value"] == value
                  and r["method"] in sweep.methods]
    latest = {(r["method"], r["seed"]): r for r in chosen}
    return {m: [r for (method, _), r in sorted(latest.items()) if method == m] for m in sweep.methods}


def summarise(sweeps: list[SweepSpec], defaults: dict[str, float], sweep_records: list[dict],
              table2_records: list[dict]) -> dict:
    """Mean, sd and seeds per sweep, value and method."""
    out: dict = {}
    for sweep in sweeps:
        rows = []
        for value in sweep.values:
            runs = point_runs(sweep, value, defaults[sweep.parameter], sweep_records, table2_records)
            cells = {m: {"seeds": [r["seed"] for r in rs],
                         **{k: [(s := mean_sd(r["metrics"][k] for r in rs)).mean, s.sd_or_none] for k in METRICS if rs}}
                     for m, rs in runs.items()}
            rows.append({"value": value, "default": value == defaults[sweep.parameter], "methods": cells})
        out[sweep.parameter] = rows
    return out


def markdown(summary: dict) -> str:
    """One table per sweep; a cell is Recall@20 / MRR@20 (mean ± sd, or the value of a single seed; [seeds])."""
    parts = []
    for parameter, rows in summary.items():
        methods = list(rows[0]["methods"])
        lines = [f"| {parameter} | " + " | ".join(f"{METHODS[m][1]}: Recall@20 / MRR@20" for m in methods) + " |",
                 "|---" * (len(methods) + 1) + "|"]
        for row in rows:
            cells = []
            for m in methods:
                c = row["methods"][m]
                one = len(c["seeds"]) == 1  # no spread to show from a single seed
                cells.append("not run" if not c["seeds"] else
                             " / ".join(f"{c[k][0]:.2f}" if one else format_mean_sd(*c[k], 2) for k in METRICS)
                             + f" [{len(c['seeds'])}]")
            label = f"{row['value']:g}" + (" (Table 2 runs)" if row["default"] else "")
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default=str(ROOT / "configs" / "dipsgnn" / "ml-1m-sweeps.yaml"))
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--sweeps", default=None, help="comma-separated parameters (default: every sweep)")
    parser.add_argument("--seeds", default=None, help="comma-separated (default: the config's)")
    parser.add_argument("--set", action="append", default=[], help="config override KEY=VALUE (repeatable)")
    parser.add_argument("--runs", default=str(RESULTS / "dipsgnn_sweep_runs.jsonl"))
    parser.add_argument("--table2-runs", default=str(RESULTS / "dipsgnn_runs.jsonl"))
    parser.add_argument("--resume", action="store_true", help="skip (parameter, value, method, seed) already in --runs")
    parser.add_argument("--summary-only", action="store_true")
    parser.add_argument("--executor", choices=["inprocess", "ray"], default="inprocess",
                        help="where the sweep's cells run (a local Ray instance with ray)")
    args = parser.parse_args()
    updates = {"dataset.data_dir": args.data_dir} if args.data_dir else {}
    config = load_config(args.config, overrides=args.set, updates=updates)
    study = DIPSGNNStudy.load(config, prepare=not args.summary_only)
    options = study.options
    wanted = set(args.sweeps.split(",")) if args.sweeps else {s.parameter for s in options.sweeps}
    sweeps = [s for s in options.sweeps if s.parameter in wanted]
    defaults = {s.parameter: study.default(s.parameter) for s in sweeps}
    runs_path = Path(args.runs)
    if not args.summary_only:
        seeds = [int(s) for s in args.seeds.split(",")] if args.seeds else options.seeds
        done = {(r["parameter"], r["value"], r["method"], r["seed"]) for r in load_records(runs_path)} if args.resume else set()
        cells = [study.cell(method, seed, (sweep.parameter, value)) for sweep in sweeps
                 for value in sweep.values if value != defaults[sweep.parameter]
                 for seed in seeds for method in sweep.methods if (sweep.parameter, value, method, seed) not in done]  # fmt: skip
        Bench(RunsFile(runs_path, to_record(study)), make_executor(args.executor)).run(study.grid, cells)
    summary = summarise(sweeps, defaults, load_records(runs_path), load_records(Path(args.table2_runs)))
    print(markdown(summary))
    out = OUT / "dipsgnn_sweeps.json"
    write_text_atomic(out, json.dumps(summary, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
