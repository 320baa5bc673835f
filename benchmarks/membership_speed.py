"""Speed of the membership system: the full Assumption II grid on ml-100k, end to end.

Runs ``configs/membership/ml100k-assumption2.yaml`` (3 shadow x 3 target algorithms: Item-CF,
LFM, NeuMF; one seed; k = 100, l = 100) through ``recprivacy.experiments.run_config``, which
loads the data, partitions it, learns item vectors, trains the six recommenders, builds lists
and features, trains three MLP attacks, scores nine settings and writes the run folder. Each
repeat runs in a fresh interpreter; the wall-clock time of every stage is printed and the
median end-to-end time quoted.

Usage::

    python benchmarks/membership_speed.py --data-dir ../shared/datasets [--repeats 3]

Writes ``benchmarks/out/membership_speed.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "membership" / "ml100k-assumption2.yaml"


def run_once(data_dir: str) -> dict:
    """One end-to-end run in this process: wall and CPU seconds, stage seconds, the grid's AUCs."""
    start, cpu = time.perf_counter(), time.process_time()
    from recprivacy.config import load_config
    from recprivacy.experiments import run_config

    config = load_config(CONFIG, [f"dataset.data_dir={data_dir}"])
    with tempfile.TemporaryDirectory() as out:
        results, _ = run_config(config, out)
    total, cpu = time.perf_counter() - start, time.process_time() - cpu
    aucs = {k.split("/")[1]: v for k, v in results.metrics.items() if k.endswith("/auc") and k.startswith("assumption2/")}
    return {"total_seconds": total, "cpu_seconds": cpu, "stages": dict(results.timings), "auc": aucs}


def child(data_dir: str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", "--data-dir", data_dir], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(ROOT.parent / "shared" / "datasets"))
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_once(args.data_dir)))
        return
    runs = [child(args.data_dir) for _ in range(args.repeats)]
    for i, run in enumerate(runs, 1):
        stages = ", ".join(f"{k} {v:.1f}s" for k, v in sorted(run["stages"].items(), key=lambda kv: -kv[1]))
        print(f"run {i}: {run['total_seconds']:.1f}s end to end ({run['cpu_seconds']:.1f}s CPU); stages: {stages}")
    report = {
        "benchmark": "membership_speed",
        "config": str(CONFIG.relative_to(ROOT)),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": {"platform": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count(),
                    "load_average_1min": os.getloadavg()[0]},  # fmt: skip
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "total_seconds_median": statistics.median(r["total_seconds"] for r in runs),
        "total_seconds_all": [round(r["total_seconds"], 1) for r in runs],
        "cpu_seconds_median": statistics.median(r["cpu_seconds"] for r in runs),
        "stages_first_run": {k: round(v, 2) for k, v in runs[0]["stages"].items()},
        "auc_first_run": runs[0]["auc"],
    }
    print(f"median end to end: {report['total_seconds_median']:.1f}s over {len(runs)} run(s)")
    out = ROOT / "benchmarks" / "out" / "membership_speed.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
