"""What every benchmark record carries about where and how it was measured, and how it is written.

Resumable benchmarks keep one JSON line per finished run in a *runs file*: ``append_record``
adds a line and ``load_records`` reads them back (the one reader of every runs file);
``runs_file.RunsFile`` appends the cells of a study run on the study kit. This module imports
nothing beyond ``recprivacy.io``, so a script that runs before the package's dependencies are
installed (``suite_time.py``) can use it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from recprivacy.io import write_text_atomic


def provenance() -> dict[str, Any]:
    """Date (UTC), machine (platform, Python, CPUs, load average at the end) and the command."""
    return {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": {"platform": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count(),
                    "loadavg_at_end": os.getloadavg()},  # fmt: skip
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
    }


def write_record(record: dict[str, Any], path: str | Path) -> None:
    """``record`` with its provenance as indented JSON at ``path`` (atomically; folders created)."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out, json.dumps({**record, **provenance()}, indent=2))
    print(f"wrote {out}")


def load_records(path: str | Path) -> list[dict[str, Any]]:
    """The records of a runs file (none if it does not exist yet). A last line without its
    newline, left by a run killed mid-write, is left out (that run is redone); any other line
    that is not JSON stops the script naming the file and line."""
    path = Path(path)
    if not path.exists():
        return []
    *complete, _cut_short = path.read_text(encoding="utf-8").split("\n")
    records = []
    for number, line in enumerate(complete, 1):
        if line.strip():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as err:
                raise SystemExit(f"{path}:{number}: not a JSON run record ({err.msg})") from None
    return records


def append_record(path: str | Path, record: dict[str, Any]) -> None:
    """Append ``record`` as one JSON line with a single ``write`` on an ``O_APPEND`` descriptor,
    so two benchmark processes (e.g. one per core) can share one runs file."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (json.dumps(record) + "\n").encode("utf-8"))
    finally:
        os.close(fd)


def run_child(script: str, name: str, args: list[str]) -> dict[str, Any]:
    """Run ``script --child name *args`` in a fresh interpreter (so each measurement pays its own
    imports and starts with an empty heap) and parse the JSON record of its last stdout line."""
    cmd = [sys.executable, script, "--child", name, *args]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False, env={**os.environ, "RECPRIVACY_QUIET": "1"})
    if out.returncode != 0:
        raise RuntimeError(f"{name} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def model_parser(description: str, models: tuple[str, ...], default_out: Path) -> argparse.ArgumentParser:
    """The options every per-model benchmark takes: data folder, models, repeats, seed, output
    record, and the hidden ``--child`` that ``run_child`` uses."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--data-dir", default=os.environ.get("RECPRIVACY_DATA", "../shared/datasets"))
    p.add_argument("--models", default=",".join(models))
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=str(default_out))
    p.add_argument("--child", help=argparse.SUPPRESS)
    return p
