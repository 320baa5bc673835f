"""CPU a selection of tests costs over every process it starts (issue 33: the suite's CPU budget).

The Flower and Ray tests start daemons (SuperLinks, SuperNodes, ClientApps, raylets, Ray workers)
that are not children pytest waits for, so ``wait4`` and ``/usr/bin/time`` miss most of their CPU.
This runs ``pytest ARGS`` in a fresh process from a checkout (``--root``: its ``src`` on
``PYTHONPATH``, its ``tests``) and records the machine's busy CPU seconds over the run
(``/proc/stat``, as ``suite_time.py`` does: every process, so run it with nothing else running),
the CPU of the processes it waited for, the wall seconds and pytest's outcome::

    PYTHONPATH=src:benchmarks python benchmarks/test_cpu.py --label coat-flower-8 \\
        --env RECPRIVACY_FLOWER_USERS=8 -- tests/realdata/test_flower_coat.py

Each run appends one line, with its label, commit and provenance, to the runs file
``benchmarks/results/test_cpu.jsonl`` (``--out``); a failing selection stops the script.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from record import append_record, provenance
from suite_time import SUMMARY, busy_seconds

ROOT = Path(__file__).resolve().parents[1]


def measure(root: Path, pytest_args: list[str], env: dict[str, str]) -> dict:
    """One ``pytest`` run of ``pytest_args`` from ``root``: busy and waited CPU, wall, outcome."""
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *pytest_args]  # quiet by the project's addopts
    full_env = {**os.environ, **env, "PYTHONPATH": str(root / "src")}
    load_before, busy_before, start = os.getloadavg()[0], busy_seconds(), time.perf_counter()
    proc = subprocess.Popen(command, cwd=root, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    busy_after, wall = busy_seconds(), time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"test_cpu: pytest {' '.join(pytest_args)} failed in {root}:\n{output[-3000:]}")
    summary = None
    for line in output.splitlines():
        summary = SUMMARY.search(line) or summary
    return {"machine_busy_cpu_seconds": None if busy_before is None else round(busy_after - busy_before, 2),
            "waited_cpu_seconds": round(usage.ru_utime + usage.ru_stime, 2), "wall_seconds": round(wall, 2),
            "pytest_outcome": summary["outcome"] if summary else None, "load_before": load_before}  # fmt: skip


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--label", required=True, help="what this run measures (e.g. coat-flower-8)")
    p.add_argument("--root", default=str(ROOT), help="the checkout whose src and tests run (default: this one)")
    p.add_argument("--env", nargs="*", default=[], help="NAME=VALUE set for the run")
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "test_cpu.jsonl"))
    p.add_argument("pytest_args", nargs="+", help="after --: what pytest runs")
    args = p.parse_args()
    bad = [item for item in args.env if "=" not in item]
    if bad:
        p.error(f"--env: expected NAME=VALUE, got {bad[0]!r}")
    root = Path(args.root).resolve()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                            check=False).stdout.strip()  # fmt: skip
    record = {"label": args.label, "commit": commit, "pytest_args": args.pytest_args, "env": args.env,
              **measure(root, args.pytest_args, dict(item.split("=", 1) for item in args.env)), **provenance()}  # fmt: skip
    print(f"{args.label}: {record['machine_busy_cpu_seconds']} CPU s busy (machine), {record['waited_cpu_seconds']} waited, "
          f"{record['wall_seconds']} s wall, {record['pytest_outcome']}")
    append_record(args.out, record)


if __name__ == "__main__":
    main()
