"""Wall and CPU time of the audit on real data, as a user runs it (issue 33; its executors: issue 47).

Runs ``recprivacy audit --dataset NAME --data-dir DIR`` (BPR-MF target, every section, OS
entropy noise: the command the README shows) in a fresh process per dataset, ``--repeats`` times,
and records per run the process's wall seconds (imports, data, training, every section and the
report), its CPU seconds (user + system of the child, ``getrusage``), its peak resident set, the
machine's load average before and after, and the stage wall seconds the run folder's
``results.json`` keeps (``timings``). The issue's targets are wall time on two quiet cores, so a
record whose load average before the run exceeded 1.5 is marked ``"quiet": false``.

``--sections membership`` runs those sections only; ``--executor inprocess ray`` runs the audit with
``--executor`` each of them, alternating within each repeat so that both see the same load. Ray's
processes (its GCS, raylet and the workers that train the references) are not all reaped by the
audit's process, so ``wait4`` alone misses their CPU: every process of the audit's tree is also
sampled every ``SAMPLE`` seconds (``psutil``) and ``cpu_seconds_tree`` is the larger of ``wait4``'s
CPU and the audit process's own CPU plus every descendant's last sample (a lower bound either way:
a descendant's CPU after its last sample is missed).

Usage::

    python benchmarks/audit_speed.py --data-dir ../shared/datasets [--datasets ml-100k ml-1m] [--repeats 1]
    python benchmarks/audit_speed.py --datasets ml-100k --sections membership --executor inprocess ray \
        --out benchmarks/results/audit_executor-ml-100k.json

Writes ``benchmarks/results/audit_speed.json`` (``--out``). ``ml-1m`` reads the shared partial
ratings file (users 1-2999). With one executor a dataset's entry is as before (``median_wall_seconds``,
``median_cpu_seconds``, ``runs``); with several it holds one such entry per executor (``by_executor``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

from record import write_record

ROOT = Path(__file__).resolve().parents[1]
QUIET_LOAD = 1.5
SAMPLE = 0.25  # seconds between samples of the audit's process tree


class TreeCPU:
    """Samples the CPU seconds (user + system, without reaped children) of ``pid`` and every process
    below it until ``stop()``; ``own(pid)`` and ``descendants()`` read each process's last sample."""

    def __init__(self, pid: int) -> None:
        self.pid, self.last, self.names = pid, {}, {}
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        root = psutil.Process(self.pid)
        while not self._done.is_set():
            try:
                procs = [root, *root.children(recursive=True)]
            except psutil.Error:
                return
            for proc in procs:
                try:
                    times = proc.cpu_times()
                    key = (proc.pid, proc.create_time())
                    self.last[key] = times.user + times.system
                    self.names[key] = " ".join(proc.cmdline()[:1]) if proc.name() == "python" else proc.name()
                except psutil.Error:
                    continue
            self._done.wait(SAMPLE)

    def stop(self) -> None:
        self._done.set()
        self._thread.join()

    def own(self) -> float:
        return sum(v for (pid, _), v in self.last.items() if pid == self.pid)

    def descendants(self) -> float:
        return sum(v for (pid, _), v in self.last.items() if pid != self.pid)

    def by_kind(self) -> dict[str, float]:
        """The descendants' CPU by kind: Ray's workers (``ray::...``, the reference tasks), and every
        other process (Ray's GCS, raylet, log monitor, ...) by name."""
        out: dict[str, float] = {}
        for key, value in self.last.items():
            if key[0] != self.pid:
                name = self.names.get(key, "?")
                kind = "ray workers" if name.startswith(("ray::", "default_worker")) else name.rsplit("/", 1)[-1]
                out[kind] = round(out.get(kind, 0.0) + value, 2)
        return out


def run_once(dataset: str, data_dir: str, sections: str | None = None, executor: str = "inprocess") -> dict:
    """One ``recprivacy audit`` in a child process, measured from outside (``wait4``: that
    child's own CPU seconds and peak resident set; ``TreeCPU``: every process below it)."""
    with tempfile.TemporaryDirectory() as out, tempfile.TemporaryFile("w+") as err:
        cmd = [sys.executable, "-m", "recprivacy", "audit", "--dataset", dataset, "--data-dir", data_dir, "--out", out,
               *(["--sections", sections] if sections else []), *(["--executor", executor] if executor != "inprocess" else [])]  # fmt: skip
        load_before, start = os.getloadavg()[0], time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        tree = TreeCPU(proc.pid)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        tree.stop()
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            raise SystemExit(f"audit of {dataset} exited with status {status}:\n{err.read()[-2000:]}")
        (results,) = Path(out).glob("*/results.json")
        timings = json.loads(results.read_text())["timings"]
    cpu = usage.ru_utime + usage.ru_stime
    return {"executor": executor, "wall_seconds": wall, "cpu_seconds": cpu,
            "cpu_seconds_tree": max(cpu, tree.own() + tree.descendants()),
            "cpu_seconds_sampled": {"audit_process": round(tree.own(), 2), "descendants": round(tree.descendants(), 2),
                                    "processes": len(tree.last), "descendants_by_kind": tree.by_kind()},
            "peak_rss_mb": usage.ru_maxrss / 1024,
            "load_before": load_before, "load_after": os.getloadavg()[0], "quiet": load_before <= QUIET_LOAD,
            "stage_wall_seconds": {k: round(v, 2) for k, v in timings.items()}}  # fmt: skip


def summary(runs: list[dict]) -> dict:
    """Medians of a dataset's (and executor's) runs, with the runs."""
    return {"median_wall_seconds": statistics.median(r["wall_seconds"] for r in runs),
            "median_cpu_seconds": statistics.median(r["cpu_seconds"] for r in runs),
            "median_cpu_seconds_tree": statistics.median(r["cpu_seconds_tree"] for r in runs), "runs": runs}  # fmt: skip


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", default=os.environ.get("RECPRIVACY_DATA", "../shared/datasets"))
    p.add_argument("--datasets", nargs="+", default=["ml-100k", "ml-1m"])
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--sections", default=None, help="comma-separated sections (default: the audit's default)")
    p.add_argument("--executor", nargs="+", default=["inprocess"], choices=["inprocess", "ray"],
                   help="the audit's --executor; several alternate within each repeat")
    p.add_argument("--commit", default=None, help="the commit measured")
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "audit_speed.json"))
    args = p.parse_args()
    record: dict = {"commit": args.commit, "sections": args.sections, "executors": args.executor, "datasets": {}}
    for dataset in args.datasets:
        runs: dict[str, list[dict]] = {e: [] for e in args.executor}
        for i in range(args.repeats):
            for executor in args.executor:
                r = run_once(dataset, args.data_dir, args.sections, executor)
                runs[executor].append(r)
                print(f"{dataset} {executor} run {i + 1}: {r['wall_seconds']:.1f} s wall, {r['cpu_seconds']:.1f} CPU s "
                      f"({r['cpu_seconds_tree']:.1f} with every process of its tree), peak {r['peak_rss_mb']:.0f} MB, "
                      f"load {r['load_before']:.2f} -> {r['load_after']:.2f}", flush=True)  # fmt: skip
        by = {e: summary(rs) for e, rs in runs.items()}
        record["datasets"][dataset] = by[args.executor[0]] if len(by) == 1 else {"by_executor": by}
    write_record(record, args.out)


if __name__ == "__main__":
    main()
