"""CPU a federated device's process spends importing what it trains with (issues 33 and 34).

A Flower deployment starts one ClientApp process for every message a device receives; when the
device trains, that process imports the client, the protocol, the noise source and the app spec
(``flower_app.client.train``). This runs exactly those imports in a fresh interpreter
``--repeats`` times (``wait4``: the child's user + system CPU seconds) for each source tree
given, so a commit before a change and one after can be compared on the same machine, runs
alternating::

    git worktree add /tmp/before <commit>
    PYTHONPATH=benchmarks python benchmarks/device_imports.py --src before=/tmp/before/src now=src

Writes ``benchmarks/results/device_imports.json`` (``--out``): per tree, every run's CPU seconds,
their median, and the heavy modules the imports loaded (pandas, ``scipy.stats``, scikit-learn).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from record import write_record

TRAIN_PATH = ("import json, sys; import recprivacy.federated.flower_app.client; "
              "from recprivacy.federated.protocol import local_update, perturb_uploads; "
              "from recprivacy.privacy.randomness import NoiseSource; "
              "from recprivacy.federated.flower_app.spec import AppSpec; "
              "print(json.dumps(sorted(m for m in ('pandas', 'scipy.stats', 'sklearn') if m in sys.modules)))")  # fmt: skip


def run_once(src: Path) -> tuple[float, list[str]]:
    """One fresh interpreter doing the device's imports from ``src``: its CPU seconds and the
    heavy modules it loaded."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    proc = subprocess.Popen([sys.executable, "-c", TRAIN_PATH], env=env, stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)  # reaped here, so its rusage is this child's alone
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"device_imports: the imports failed from {src} (exit {proc.returncode})")
    return usage.ru_utime + usage.ru_stime, json.loads(out)

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", nargs="+", required=True, help="NAME=PATH of a source tree (the folder holding recprivacy/)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "device_imports.json"))
    args = parser.parse_args()
    bad = [item for item in args.src if "=" not in item]
    if bad:
        parser.error(f"--src: expected NAME=PATH, got {bad[0]!r}")
    trees = dict(item.split("=", 1) for item in args.src)
    load_before = os.getloadavg()[0]
    runs: dict[str, list[float]] = {name: [] for name in trees}
    loaded: dict[str, list[str]] = {}
    for _ in range(args.repeats):
        for name, src in trees.items():
            seconds, heavy = run_once(Path(src).resolve())
            runs[name].append(round(seconds, 3))
            loaded[name] = heavy
    trees_out = {name: {"src": trees[name], "cpu_seconds": runs[name], "median": statistics.median(runs[name]),
                        "heavy_modules_loaded": loaded[name]} for name in trees}  # fmt: skip
    for name, rec in trees_out.items():
        print(f"{name:10s} median {rec['median']:.2f} CPU s  runs {rec['cpu_seconds']}  heavy {rec['heavy_modules_loaded']}")
    write_record({"trees": trees_out, "repeats": args.repeats, "loadavg_before": load_before,
                  "command": "python benchmarks/device_imports.py " + " ".join(sys.argv[1:])}, args.out)


if __name__ == "__main__":
    main()
