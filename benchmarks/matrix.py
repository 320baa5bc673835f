"""The attack x defence matrix's record (issue 32): run ``configs/matrix/ml-100k.yaml`` and keep
what RESULTS.md reads, with the run's cost.

Usage::

    python benchmarks/matrix.py --data-dir ../shared/datasets            # run, then write the record
    python benchmarks/matrix.py --from-run RUN_DIR --cpu-seconds S --wall "12 min 3 s" --peak-rss-mb M
                                                                          # a run made by `recprivacy run`
    python benchmarks/matrix.py --data-dir ../shared/datasets --columns interactions \
        --out benchmarks/results/matrix_interactions_ml100k.json          # the rows and one column only

The record (``benchmarks/results/matrix_ml100k.json``) holds the run's tables (the long cell
table, the claimed-vs-measured epsilon tables, the sequential defences' utility), each row's
title, utility cost and first statement line, the report's paragraph on the uploads column's
setup (Pure FedRec's and a popularity list's Recall@10), the stage timings, every matrix verdict record
(``results.json``'s ``verdicts``: the numbers each word and change was judged on), and where, when and at which
commit it ran. CPU seconds are ``time.process_time`` of the run (all threads) or, with
``--from-run``, the user + system time ``/usr/bin/time -v`` printed. ``--columns`` measures only
those columns (``study_options.columns``; the rows are built all the same); such a record has no
uploads paragraph.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import time
from pathlib import Path
from typing import Any

from record import write_record

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "benchmarks" / "results" / "matrix_ml100k.json"
CONFIG = ROOT / "configs" / "matrix" / "ml-100k.yaml"
TABLES = {"cells": "matrix-cells", "epsilon": "matrix-epsilon", "epsilon_uploads": "matrix-epsilon-uploads",
          "sequential_utility": "matrix-sequential-utility"}  # fmt: skip


def record_of(run_dir: Path) -> dict[str, Any]:
    """The record's content from a run folder's ``results.json``."""
    results = json.loads((run_dir / "results.json").read_text())
    tables = results["tables"]
    matrix = tables["matrix"]
    keys = list(dict.fromkeys(row[0] for row in tables["matrix-cells"]["rows"]))
    defences = [{"key": key, "title": row[0], "utility": row[-2], "statement": row[-1]}
                for key, row in zip(keys, matrix["rows"], strict=True)]  # fmt: skip
    section = next(x for x in results["sections"] if x["title"] == "Attack x defence matrix")
    uploads = next((p for p in section["text"].split("\n\n") if p.startswith("Attribute inference from federated uploads")), "")
    return {"noise": results["noise"], "defences": defences, "attacks": matrix["columns"][1:-2], "uploads_setup": uploads,
            **{name: {k: tables[table][k] for k in ("columns", "rows", "caption")} for name, table in TABLES.items()},
            "timings": results["timings"], "verdicts": [v for v in results["verdicts"] if v.get("section") == "matrix"]}  # fmt: skip


def commit() -> str:
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", help="folder holding ml-100k (runs the config)")
    parser.add_argument("--from-run", type=Path, help="a finished run folder of the config instead")
    parser.add_argument("--cpu-seconds", type=float, help="with --from-run: the run's user + system CPU seconds")
    parser.add_argument("--wall", help="with --from-run: the run's wall time as text")
    parser.add_argument("--peak-rss-mb", type=float, help="with --from-run: the run's peak resident set")
    parser.add_argument("--commit", help="with --from-run: the commit the run was made at (default: HEAD)")
    parser.add_argument("--note", default="", help="the machine's load or anything else a reader needs")
    parser.add_argument("--columns", help="comma-separated columns to measure (study_options.columns; default: every one)")
    parser.add_argument("--out", type=Path, default=RECORD)
    args = parser.parse_args()
    if args.from_run is None:
        if args.data_dir is None:
            parser.error("give --data-dir (to run the config) or --from-run RUN_DIR")
        from recprivacy.config import load_config
        from recprivacy.experiments import run_config

        config = load_config(CONFIG, overrides=[f"dataset.data_dir={args.data_dir}", *_columns(args.columns)])
        start, cpu = time.perf_counter(), time.process_time()
        _, run_dir = run_config(config, ROOT / "benchmarks" / "out" / "matrix")
        cost = {"cpu_seconds": time.process_time() - cpu, "wall": f"{time.perf_counter() - start:.0f} s",
                "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}  # fmt: skip
    else:
        if None in (args.cpu_seconds, args.wall, args.peak_rss_mb):
            parser.error("--from-run needs --cpu-seconds, --wall and --peak-rss-mb")
        run_dir = args.from_run
        cost = {"cpu_seconds": args.cpu_seconds, "wall": args.wall, "peak_rss_mb": args.peak_rss_mb}
    source = " ".join(["recprivacy run configs/matrix/ml-100k.yaml", *(f"--set '{o}'" for o in _columns(args.columns)),
                       f"(run folder {run_dir.name})"])  # fmt: skip
    write_record({"source": source, "commit": args.commit or commit(), "note": args.note, **cost, **record_of(run_dir)}, args.out)


def _columns(columns: str | None) -> list[str]:
    """The override that selects ``columns`` (none for every column)."""
    return [] if columns is None else [f"study_options.columns=[{columns}]"]


if __name__ == "__main__":
    main()
