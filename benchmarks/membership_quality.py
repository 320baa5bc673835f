"""Quality of the membership system on real data: the paper-001 configs, our numbers beside
the paper's.

Runs each ``configs/membership/*.yaml`` named on the command line (default: ``DEFAULT``, the
main results in one run plus the figures that need other settings) with ``recprivacy.experiments.run_config`` in a fresh interpreter, one after
another, and collects every table in the paper's layout, the headline metrics (means over the
configured seeds, with standard deviations) and the stage timings. Run folders (reports with
figures) go to ``--runs`` (default ``runs/``, not part of the repository).

Usage::

    python benchmarks/membership_quality.py --data-dir ../shared/datasets [--configs fig3-assumption1,fig12-13-defense]
        [--set study_options.n_seeds=1]

Writes ``benchmarks/out/membership_quality.json`` (merged with earlier runs by config name);
``--markdown`` prints its tables as Markdown (what BENCHMARKS.md quotes) without running anything.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "configs" / "membership"
OUT = ROOT / "benchmarks" / "out" / "membership_quality.json"
DEFAULT = ["paper-main", "fig6-assumption3", "fig8-hyperparameters", "fig9-mimi", "shadow-size", "fig10-features"]


def run_once(name: str, data_dir: str, runs: str, overrides: list[str]) -> dict:
    """Run one config in this process; returns its tables, metrics and timings."""
    from recprivacy.config import load_config
    from recprivacy.experiments import run_config

    start = time.perf_counter()
    config = load_config(CONFIGS / f"{name}.yaml", [f"dataset.data_dir={data_dir}", *overrides])
    results, run_dir = run_config(config, runs)
    tables = {k: {"columns": t.columns, "rows": t.rows, "caption": t.caption} for k, t in results.tables.items()
              if k.startswith("membership-")}  # fmt: skip
    return {"seconds": time.perf_counter() - start, "run_dir": str(run_dir), "overrides": overrides,
            "metrics": results.metrics, "tables": tables, "timings": results.timings, "seeds": results.seeds}  # fmt: skip


def print_markdown(done: dict) -> None:
    """Every stored table, per config, as Markdown."""
    from recprivacy.report.tables import markdown_table

    for name, result in done["configs"].items():
        print(f"### {name} ({result['date']}, {result['seconds'] / 60:.0f} min, seeds {sorted(result['seeds'].values())})\n")
        for table in result["tables"].values():
            print(markdown_table(table) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "datasets"))
    parser.add_argument("--runs", default=str(ROOT / "runs"))
    parser.add_argument("--configs", default=",".join(DEFAULT), help="comma-separated config names")
    parser.add_argument("--set", dest="overrides", action="append", default=[], help="config override, e.g. study_options.n_seeds=1")
    parser.add_argument("--markdown", action="store_true", help="print the stored tables as Markdown and exit")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.markdown:
        print_markdown(json.loads(OUT.read_text()))
        return
    if args.child:
        print(json.dumps(run_once(args.child, args.data_dir, args.runs, args.overrides)))
        return
    names = args.configs.split(",")
    done = json.loads(OUT.read_text()) if OUT.is_file() else {"benchmark": "membership_quality", "configs": {}}
    for name in names:
        cmd = [sys.executable, __file__, "--child", name, "--data-dir", args.data_dir, "--runs", args.runs]
        cmd += [x for o in args.overrides for x in ("--set", o)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            print(f"{name}: failed\n{proc.stderr[-3000:]}", file=sys.stderr)
            continue
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        result["date"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
        result["machine"] = {"platform": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count()}
        done["configs"][name] = result
        print(f"{name}: {result['seconds']:.0f}s, report {result['run_dir']}/report.md")
        OUT.parent.mkdir(exist_ok=True)
        OUT.write_text(json.dumps(done, indent=1) + "\n")


if __name__ == "__main__":
    main()
