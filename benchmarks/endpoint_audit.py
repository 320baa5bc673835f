"""Auditing ml-100k over HTTP against the reference service (issue 50): queries per audit
section, the audit's wall time at each rate limit, and the overhead against the same audit in
process.

The target is the model ``recprivacy serve`` trains from the config (``--model``, ItemCF by
default, which serves a user the same whether asked alone or in a batch, so every number of the
HTTP audit equals the in-process one); the service runs in its own process
(``recprivacy serve RUN --port P``). The in-process audit serves the same fitted model through
the same contract without HTTP (``ServedModel``), and each HTTP audit starts with an empty cache.
Sections: utility, membership (``n_references`` 2, one seed) and attribute (one split), the
shadow of the target's algorithm.

Usage::

    python benchmarks/endpoint_audit.py --data-dir ../shared/datasets [--qps 50 200] [--model itemcf]

Prints one line per run and writes ``benchmarks/results/endpoint_audit.json``.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from record import write_record

from recprivacy.config import load_config
from recprivacy.experiments.endpoint import EndpointSpec, Politeness
from recprivacy.experiments.endpoint.audit import audit_endpoint, configured_audit
from recprivacy.experiments.endpoint.service import ServedModel, fit_run_model
from recprivacy.experiments.runner import new_results
from recprivacy.experiments.target import Target


def config_of(data_dir: str, model: str) -> dict:
    return {"name": "endpoint-bench", "study": "audit", "seed": 0, "noise": "simulation",
            "dataset": {"name": "ml-100k", "data_dir": str(Path(data_dir) / "ml-100k")},
            "model": {"name": model, "params": {}},
            "study_options": {"sections": ["utility", "membership", "attribute"],
                              "membership": {"n_references": 2, "shadow_algorithm": model}, "attribute": {"seeds": 1}}}  # fmt: skip


def serve(run: Path, port: int) -> subprocess.Popen:
    """``recprivacy serve RUN`` in its own process, once it accepts connections."""
    process = subprocess.Popen([sys.executable, "-m", "recprivacy", "serve", str(run), "--port", str(port)])
    while process.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return process
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"recprivacy serve stopped: exit code {process.returncode}")


def audited(results) -> dict:
    return {k: v for k, v in results.metrics.items() if k.startswith(("membership/", "attribute/", "utility/"))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--qps", type=float, nargs="+", default=[50, 200])
    parser.add_argument("--model", default="itemcf")
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    config = load_config(base=config_of(args.data_dir, args.model))
    work = Path(tempfile.mkdtemp(prefix="endpoint-bench-"))
    (work / "config.yaml").write_text(config.to_yaml())
    model, data = fit_run_model(work)
    served = ServedModel(model, data)
    start = time.perf_counter()
    local = configured_audit(config, Target.from_model(lambda hs, k: [served.by_history(h.tolist(), k) for h in hs]),
                             new_results(config))  # fmt: skip
    rows = [{"run": "in process", "wall_s": time.perf_counter() - start}]
    print(f"in process: {rows[0]['wall_s']:.1f} s", flush=True)
    process = serve(work, args.port)
    try:
        for qps in args.qps:
            spec = EndpointSpec(f"http://127.0.0.1:{args.port}", politeness=Politeness(qps=qps, concurrency=8))
            start = time.perf_counter()
            results, _ = audit_endpoint(config, spec, work / f"runs-{qps:g}")
            wall = time.perf_counter() - start
            stats = {k.removeprefix("endpoint/"): v for k, v in results.metrics.items() if k.startswith("endpoint/")}
            rows.append({"run": f"HTTP at {qps:g} qps", "qps": qps, "wall_s": wall, "overhead_s": wall - rows[0]["wall_s"],
                         "equal_to_in_process": audited(results) == audited(local), **stats})  # fmt: skip
            print(f"HTTP at {qps:g} qps: {wall:.1f} s ({wall - rows[0]['wall_s']:+.1f} s), {stats['sent']} requests, "
                  f"{stats['seconds']:.1f} s querying, equal: {rows[-1]['equal_to_in_process']}", flush=True)  # fmt: skip
    finally:
        process.terminate()
        process.wait()
    write_record({"benchmark": "endpoint_audit", "dataset": "ml-100k", "model": args.model, "rows": rows},
                 Path(__file__).parent / "results" / "endpoint_audit.json")


if __name__ == "__main__":
    os.environ.setdefault("RECPRIVACY_QUIET", "1")
    main()
