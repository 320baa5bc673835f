"""Scale of the audit: ``recprivacy audit`` on synthetic data shaped like MovieLens-20M.

At full size (20M interactions) the data have ML-20M's shape: 138,493 users x 26,744 items.
A run of ``n`` interactions scales it by ``s = n / 20M``: ``round(138,493 s)`` users (so the
mean history stays ML-20M's ~144 interactions) and ``round(26,744 sqrt(s))`` items (scaling
items by ``s`` as well would ask 0.1M interactions of 692 users x 134 items, more than the
catalogue holds; with ``sqrt(s)`` the density falls as ``s^-1/2`` towards ML-20M's 0.54%).

Each size runs in a fresh interpreter. The audit's stages are timed from the inside: data
generation and preparation (``data``), the target's training (``fit``) and every section, each
with its CPU seconds (``time.process_time``, all threads) and the process's peak resident set
after the stage (``ru_maxrss``; it is monotone, so a stage's own peak is at most that value).
Each stage is also printed to stderr as one JSON line when it ends, so a size that does not
finish still shows what its finished stages cost.
The growth exponent of a stage is the least-squares slope of log CPU seconds on log
interactions over the sizes in the record file (``--summary`` prints it per stage), over records
of the same sections and ``commit`` (``--commit``, the code measured; records without one form a
group of their own), so a change's before and after are never fitted as one line.

Usage::

    python benchmarks/scale.py --sizes 100000 1000000 [--sections utility exposure attribute]
                               [--bpr-epochs 20] [--commit SHA] [--summary]

Appends one JSON line per size to ``benchmarks/results/scale.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RECORDS = ROOT / "benchmarks" / "results" / "scale.jsonl"
FULL = {"n_users": 138_493, "n_items": 26_744, "n_interactions": 20_000_263}


def shape(n_interactions: int) -> dict[str, int]:
    """Users ``∝ s`` and items ``∝ sqrt(s)`` with ``s = n / 20M`` (module docstring)."""
    s = n_interactions / FULL["n_interactions"]
    return {"n_users": round(FULL["n_users"] * s), "n_items": round(FULL["n_items"] * math.sqrt(s)),
            "n_interactions": int(n_interactions)}  # fmt: skip


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class StageClock:
    """CPU seconds and peak RSS (after the stage) per named stage."""

    def __init__(self) -> None:
        self.stages: dict[str, dict[str, float]] = {}

    def wrap(self, name: str, fn):
        def timed(*args, **kwargs):
            start = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self.stages[name] = {"cpu_seconds": time.process_time() - start, "peak_rss_mb_after": _peak_mb()}
                print(json.dumps({"stage": name, **self.stages[name]}), file=sys.stderr, flush=True)

        return timed


def run_audit(n_interactions: int, sections: list[str] | None, bpr_epochs: int | None) -> dict:
    """The default audit (BPR-MF target) on the scaled synthetic data, stage by stage."""
    from dataclasses import replace

    from recprivacy.config import default_audit_config, load_config
    from recprivacy.experiments import run_study
    from recprivacy.experiments.audit import registry, study

    clock = StageClock()
    study.prepare_data = clock.wrap("data", study.prepare_data)
    study.fit_model = clock.wrap("fit", study.fit_model)
    for name, section in list(registry._SECTIONS.items()):
        registry._SECTIONS[name] = replace(section, run=clock.wrap(f"section:{name}", section.run))
    config = default_audit_config()
    config["dataset"] = {"name": "synthetic", "options": shape(n_interactions)}
    if bpr_epochs is not None:
        config["model"]["params"] = {"n_epochs": bpr_epochs}
    if sections is not None:
        config["study_options"] = {"sections": sections}
    start, wall = time.process_time(), time.perf_counter()
    results = run_study(load_config(base=config))
    with tempfile.TemporaryDirectory() as out:
        results.write(out)
    return {
        "n_interactions": n_interactions, **shape(n_interactions), "sections": sections or "all",
        "bpr_epochs": bpr_epochs, "stages": clock.stages, "cpu_seconds": time.process_time() - start,
        "wall_seconds": time.perf_counter() - wall, "peak_rss_mb": _peak_mb(),
        "risks": [row[:3] for row in results.tables["risk_summary"].rows],
    }


def child(args: argparse.Namespace, n: int) -> dict:
    cmd = [sys.executable, __file__, "--child", str(n)]
    if args.sections:
        cmd += ["--sections", *args.sections]
    if args.bpr_epochs is not None:
        cmd += ["--bpr-epochs", str(args.bpr_epochs)]
    out = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, check=False, env=_env())
    if out.returncode != 0:
        raise RuntimeError(f"the run of {n:,} interactions exited with code {out.returncode} (its stderr is above)")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _env() -> dict:
    import os

    return {**os.environ, "RECPRIVACY_QUIET": "1"}


def growth(records: list[dict]) -> dict[str, float]:
    """Per stage (and ``total``), the slope of log CPU seconds on log interactions."""
    by_stage: dict[str, list[tuple[float, float]]] = {}
    for r in records:
        for name, stage in {**r["stages"], "total": {"cpu_seconds": r["cpu_seconds"]}}.items():
            by_stage.setdefault(name, []).append((r["n_interactions"], max(stage["cpu_seconds"], 1e-3)))
    return {name: float(np.polyfit(np.log([p[0] for p in pts]), np.log([p[1] for p in pts]), 1)[0])
            for name, pts in by_stage.items() if len({p[0] for p in pts}) > 1}  # fmt: skip


def summary(path: Path = RECORDS) -> None:
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for r in records:
        print(f"n={r['n_interactions']:,} ({r['n_users']:,} x {r['n_items']:,}) sections={r['sections']} "
              f"cpu={r['cpu_seconds']:.0f}s peak={r['peak_rss_mb']:.0f}MB")  # fmt: skip
        for name, st in r["stages"].items():
            print(f"    {name:28s} {st['cpu_seconds']:9.1f} s  peak after {st['peak_rss_mb_after']:7.0f} MB")
    group = lambda r: f"sections={json.dumps(r['sections'])} commit={r.get('commit', '-')}"  # noqa: E731
    for key in sorted({group(r) for r in records}):
        exponents = growth([r for r in records if group(r) == key])
        if exponents:
            print(f"growth exponents ({key}):", {k: round(v, 2) for k, v in exponents.items()})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--sections", nargs="+", default=None, help="audit sections (default: all)")
    parser.add_argument("--bpr-epochs", type=int, default=None, help="cap the target's epochs (default: BPR-MF's)")
    parser.add_argument("--commit", default=None, help="the commit measured, stored in each record")
    parser.add_argument("--summary", action="store_true", help="print the records and growth exponents only")
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(run_audit(args.child, args.sections, args.bpr_epochs)))
        return
    if not args.summary:
        for n in args.sizes:
            record = {**child(args, n), "commit": args.commit, "date": datetime.now(UTC).isoformat(timespec="seconds"),
                      "machine": f"{platform.machine()} {platform.system()}, shared 2-core VM, Python {platform.python_version()}"}  # fmt: skip
            with RECORDS.open("a") as f:
                f.write(json.dumps(record) + "\n")
            print(json.dumps(record), flush=True)
    summary()


if __name__ == "__main__":
    main()
