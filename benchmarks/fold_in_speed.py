"""CPU seconds of folding users not seen in training into BPR-MF and LFM (issue 33).

On ml-100k with the held-out protocol of ``serving.py`` (20% of the users held out of training,
``user_partition`` seed 0; each served from its earliest 80% of interactions), one long-lived
child process per source tree fits BPR-MF (``--bpr-epochs``, 60 as ``serving.py``'s reduced
run) and LFM (its defaults) once, folds every model in once untimed (the first Adam step of a
process pays PyTorch's lazy imports), then times ``model._fold_in(histories)`` (process CPU
seconds, every thread) whenever the parent asks. The parent asks the trees in turn,
``--repeats`` rounds, so a commit before a change and one after are compared in alternating
runs on the same machine::

    git worktree add --detach /tmp/before <commit>
    PYTHONPATH=benchmarks python benchmarks/fold_in_speed.py --src before=/tmp/before/src now=src

The children run as a test-suite worker does (``OMP_NUM_THREADS=RECPRIVACY_TRAIN_THREADS=1``
unless ``--threads``; ``OMP_WAIT_POLICY=PASSIVE``). Writes
``benchmarks/results/fold_in_speed.json`` (``--out``): per tree its commit, every run's CPU
seconds and their median per model, the fit CPU seconds, and the largest absolute difference of
its folded-in rows from the first tree's.
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
from typing import Any

import numpy as np
from record import write_record

MODELS = ("bpr", "lfm")


def child(data_dir: str, models: list[str], bpr_epochs: int) -> None:
    """Fit ``models`` once, fold in once untimed, then answer the parent's lines on stdin:
    ``fold MODEL`` -> ``{"cpu_seconds": ...}``; ``save DIR`` writes each model's rows to
    ``DIR/MODEL.npy``."""
    import recprivacy
    from recprivacy.data.registry import load_dataset
    from recprivacy.data.split import temporal_split, user_partition
    from recprivacy.models import make_model

    data = load_dataset("ml-100k", Path(data_dir) / "ml-100k")
    groups = user_partition(data, {"members": 0.8, "new": 0.2}, seed=0)
    histories = temporal_split(data.take_users(groups["new"]), ratios=(0.8, 0.2))[0]
    train = data.subset_users(groups["members"])
    fitted, fit_cpu = {}, {}
    for name in models:
        start = time.process_time()
        fitted[name] = make_model(name, seed=0, **({"n_epochs": bpr_epochs} if name == "bpr" else {})).fit(train)
        fit_cpu[name] = round(time.process_time() - start, 3)
        fitted[name]._fold_in(histories)
    reply({"recprivacy": recprivacy.__file__, "fit_cpu_seconds": fit_cpu, "new_users": histories.n_users,
           "history_interactions": int(histories.to_csr().nnz)})  # fmt: skip
    for line in sys.stdin:
        command, arg = line.split()
        if command == "fold":
            start = time.process_time()
            fitted[arg]._fold_in(histories)
            reply({"cpu_seconds": round(time.process_time() - start, 4)})
        else:
            for name, model in fitted.items():
                np.save(Path(arg) / f"{name}.npy", model._fold_in(histories).numpy())
            reply({"saved": arg})


def reply(message: dict[str, Any]) -> None:
    print(json.dumps(message), flush=True)


def start_child(src: Path, args: argparse.Namespace) -> subprocess.Popen:
    """The child of ``src`` (its ``recprivacy`` first on the path), once it has fitted."""
    env = {**os.environ, "PYTHONPATH": str(src), "RECPRIVACY_QUIET": "1", "OMP_WAIT_POLICY": "PASSIVE",
           "OMP_NUM_THREADS": str(args.threads), "RECPRIVACY_TRAIN_THREADS": str(args.threads)}  # fmt: skip
    cmd = [sys.executable, __file__, "--child", "--data-dir", args.data_dir, "--models", args.models,
           "--bpr-epochs", str(args.bpr_epochs)]  # fmt: skip
    return subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def ask(proc: subprocess.Popen, line: str | None = None) -> dict[str, Any]:
    """Send ``line`` (if any) to a child and read its JSON reply."""
    if line is not None:
        proc.stdin.write(line + "\n")
        proc.stdin.flush()
    answer = proc.stdout.readline()
    if not answer:
        raise SystemExit(f"fold_in_speed: a child stopped (exit {proc.wait()})")
    return json.loads(answer)


def commit_of(src: Path) -> str:
    """``git describe --always --dirty`` of the checkout holding ``src``."""
    out = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=src, capture_output=True, text=True, check=False)
    return out.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", nargs="+", default=["now=src"], help="NAME=PATH of a source tree (the folder holding recprivacy/)")
    parser.add_argument("--data-dir", default=os.environ.get("RECPRIVACY_DATA", "../shared/datasets"))
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--bpr-epochs", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "fold_in_speed.json"))
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    models = args.models.split(",")
    if args.child:
        child(args.data_dir, models, args.bpr_epochs)
        return
    bad = [item for item in args.src if "=" not in item]
    if bad:
        parser.error(f"--src: expected NAME=PATH, got {bad[0]!r}")
    trees = {name: Path(path).resolve() for name, path in (item.split("=", 1) for item in args.src)}
    load_before = os.getloadavg()[0]
    procs = {name: start_child(src, args) for name, src in trees.items()}
    ready = {name: ask(proc) for name, proc in procs.items()}
    runs: dict[str, dict[str, list[float]]] = {name: {m: [] for m in models} for name in trees}
    for _ in range(args.repeats):
        for name, proc in procs.items():
            for model in models:
                runs[name][model].append(ask(proc, f"fold {model}")["cpu_seconds"])
    with tempfile.TemporaryDirectory() as tmp:
        for name, proc in procs.items():
            Path(tmp, name).mkdir()
            ask(proc, f"save {Path(tmp, name)}")
            proc.stdin.close()
            proc.wait()
        rows = {name: {m: np.load(Path(tmp, name, f"{m}.npy")) for m in models} for name in trees}
    first = next(iter(trees))
    out = {name: {"src": str(src), "commit": commit_of(src), "recprivacy": ready[name]["recprivacy"],
                  "fit_cpu_seconds": ready[name]["fit_cpu_seconds"], "fold_in_cpu_seconds": runs[name],
                  "median": {m: statistics.median(runs[name][m]) for m in models},
                  f"max_abs_diff_from_{first}": {m: float(np.abs(rows[name][m] - rows[first][m]).max()) for m in models}}
           for name, src in trees.items()}  # fmt: skip
    for name, rec in out.items():
        print(f"{name:10s} " + "  ".join(f"{m} median {rec['median'][m]:.3f} CPU s" for m in models)
              + f"  max |diff| from {first} {rec[f'max_abs_diff_from_{first}']}")  # fmt: skip
    write_record({"benchmark": "fold_in_speed", "dataset": "ml-100k", "protocol": "serving.py, temporal 80% histories",
                  "bpr_epochs": args.bpr_epochs, "threads": args.threads, "repeats": args.repeats,
                  "new_users": ready[first]["new_users"], "history_interactions": ready[first]["history_interactions"],
                  "loadavg_before": load_before, "trees": out}, args.out)  # fmt: skip


if __name__ == "__main__":
    main()
