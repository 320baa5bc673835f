"""Wall time of the test suite as CI runs it (issue 33: ``make test`` under 8 minutes on 2 cores).

Runs ``bash .ci/run`` (install from nothing on a fresh clone, then ``make test``: pytest with one
pytest-xdist worker per core) in the given checkout and records the whole command's wall seconds,
the suite's own duration and outcome as pytest prints them on its last line (``N passed in S s``),
the CPU seconds of the command and every process it waited for (``wait4``), the machine's busy
CPU seconds over the run (``/proc/stat``: every process, also the Flower and Ray daemons that
``wait4`` never sees, and other jobs on a shared machine), its load average before and after, and
the CPU seconds of every test file (``files``, most expensive first; printed for the first 25):
``tests/conftest.py`` adds up each test's CPU, setup and teardown included, in the process that
ran it when ``RECPRIVACY_TEST_CPU`` names where to write them, which this script sets. A file's
figure is its pytest process's CPU, the children it waited for and the processes below it (the
Flower and Ray daemons it starts, read from ``/proc`` once a second and at each test's start and end; a Ray worker
orphaned by ``ray.shutdown`` counts up to the last look; since stop 57); a session fixture counts for
the first file that asks for it. Run it on a fresh clone so the install is measured from nothing::

    git clone -q REPO /tmp/ci && cd /tmp/ci && CI=true RECPRIVACY_DATA=DATA PYTHONPATH=src:benchmarks python3 benchmarks/suite_time.py

(``PYTHONPATH`` lets this script use ``benchmarks/record.py`` before anything is installed; the
command runs without it, as in CI.)

Writes ``benchmarks/results/suite_time.json`` under the checkout (``--out``) and prints the
command's output as it runs.
"""

from __future__ import annotations

import argparse
import os
import re
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from record import write_record

ROOT = Path(__file__).resolve().parents[1]
SUMMARY = re.compile(r"(?P<outcome>\d+ (?:passed|failed|errors?)\b.*?) in (?P<seconds>[\d.]+)s")


def busy_seconds() -> float | None:
    """CPU seconds the whole machine has spent busy since boot (``/proc/stat``: all but idle and
    iowait), or None where there is no ``/proc/stat``."""
    try:
        ticks = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    except OSError:
        return None
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


def file_cpu(prefix: Path) -> list[dict]:
    """The per-file CPU the test processes wrote to ``prefix.<worker>.json``, most expensive first."""
    files: dict[str, dict] = {}
    for part in prefix.parent.glob(prefix.name + ".*.json"):
        for name, entry in json.loads(part.read_text()).items():
            files[name] = {"file": name, "worker": part.name.split(".")[-2], **entry}
    ordered = sorted(files.values(), key=lambda f: -f["cpu_seconds"])
    return [{**f, "cpu_seconds": round(f["cpu_seconds"], 2), "wall_seconds": round(f["wall_seconds"], 2)} for f in ordered]


def run(command: str, cwd: Path) -> dict:
    """``command`` in ``cwd``, its output echoed line by line, the pytest summary parsed and each
    test file's CPU collected."""
    cpu_dir = Path(tempfile.mkdtemp(prefix="suite-cpu-"))
    load_before, busy_before, start = os.getloadavg()[0], busy_seconds(), time.perf_counter()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # CI sets none; this script needs one
    env["RECPRIVACY_TEST_CPU"] = str(cpu_dir / "files")
    proc = subprocess.Popen(command, shell=True, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    summary = None
    for line in proc.stdout:
        sys.stdout.write(line)
        summary = SUMMARY.search(line) or summary
    _, status, usage = os.wait4(proc.pid, 0)
    busy_after = busy_seconds()
    return {"measured_command": command, "exit_code": os.waitstatus_to_exitcode(status),
            "wall_seconds": time.perf_counter() - start, "cpu_seconds": usage.ru_utime + usage.ru_stime,
            "machine_busy_cpu_seconds": None if busy_before is None else busy_after - busy_before,
            "pytest_seconds": float(summary["seconds"]) if summary else None,
            "pytest_outcome": summary["outcome"] if summary else None,
            "load_before": load_before, "load_after": os.getloadavg()[0],
            "files": file_cpu(cpu_dir / "files")}  # fmt: skip


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--command", default="bash .ci/run")
    p.add_argument("--commit", default=None, help="the commit measured (default: the checkout's HEAD)")
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "suite_time.json"))
    args = p.parse_args()
    commit = args.commit or subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                           text=True, check=False).stdout.strip()  # fmt: skip
    record = {"commit": commit, "cpus": os.cpu_count(), **run(args.command, ROOT)}
    write_record(record, args.out)
    for f in record["files"][:25]:
        print(f"{f['cpu_seconds']:8.1f} CPU s {f['wall_seconds']:8.1f} s wall {f['tests']:4d} tests  {f['file']}")
    print(f"suite: {record['pytest_outcome']} in {record['pytest_seconds']} s; the whole command "
          f"{record['wall_seconds']:.0f} s wall, {record['cpu_seconds']:.0f} CPU s, exit {record['exit_code']}")
    sys.exit(record["exit_code"])


if __name__ == "__main__":
    main()
