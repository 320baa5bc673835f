"""Wall time of the default audit on real data, as a user runs it (issue 33).

Runs ``recprivacy audit --dataset NAME --data-dir DIR`` (BPR-MF target, every section, OS
entropy noise: the command the README shows) in a fresh process per dataset, ``--repeats`` times,
and records per run the process's wall seconds (imports, data, training, every section and the
report), its CPU seconds (user + system of the child, ``getrusage``), its peak resident set, the
machine's load average before and after, and the stage wall seconds the run folder's
``results.json`` keeps (``timings``). The issue's targets are wall time on two quiet cores, so a
record whose load average before the run exceeded 1.5 is marked ``"quiet": false``.

Usage::

    python benchmarks/audit_speed.py --data-dir ../shared/datasets [--datasets ml-100k ml-1m] [--repeats 1]

Writes ``benchmarks/results/audit_speed.json`` (``--out``). ``ml-1m`` reads the shared partial
ratings file (users 1-2999).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from record import write_record

ROOT = Path(__file__).resolve().parents[1]
QUIET_LOAD = 1.5


def run_once(dataset: str, data_dir: str) -> dict:
    """One ``recprivacy audit`` in a child process, measured from outside (``wait4``: that
    child's own CPU seconds and peak resident set)."""
    with tempfile.TemporaryDirectory() as out, tempfile.TemporaryFile("w+") as err:
        cmd = [sys.executable, "-m", "recprivacy", "audit", "--dataset", dataset, "--data-dir", data_dir, "--out", out]
        load_before, start = os.getloadavg()[0], time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            raise SystemExit(f"audit of {dataset} exited with status {status}:\n{err.read()[-2000:]}")
        (results,) = Path(out).glob("*/results.json")
        timings = json.loads(results.read_text())["timings"]
    return {"wall_seconds": wall, "cpu_seconds": usage.ru_utime + usage.ru_stime, "peak_rss_mb": usage.ru_maxrss / 1024,
            "load_before": load_before, "load_after": os.getloadavg()[0], "quiet": load_before <= QUIET_LOAD,
            "stage_wall_seconds": {k: round(v, 2) for k, v in timings.items()}}  # fmt: skip


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", default=os.environ.get("RECPRIVACY_DATA", "../shared/datasets"))
    p.add_argument("--datasets", nargs="+", default=["ml-100k", "ml-1m"])
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--commit", default=None, help="the commit measured")
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "audit_speed.json"))
    args = p.parse_args()
    record: dict = {"commit": args.commit, "datasets": {}}
    for dataset in args.datasets:
        runs = []
        for i in range(args.repeats):
            runs.append(run_once(dataset, args.data_dir))
            r = runs[-1]
            print(f"{dataset} run {i + 1}: {r['wall_seconds']:.1f} s wall, {r['cpu_seconds']:.1f} CPU s, "
                  f"peak {r['peak_rss_mb']:.0f} MB, load {r['load_before']:.2f} -> {r['load_after']:.2f}", flush=True)  # fmt: skip
        record["datasets"][dataset] = {"median_wall_seconds": statistics.median(r["wall_seconds"] for r in runs),
                                       "median_cpu_seconds": statistics.median(r["cpu_seconds"] for r in runs),
                                       "runs": runs}  # fmt: skip
    write_record(record, args.out)


if __name__ == "__main__":
    main()
