"""The membership study's numbers do not move when its machinery changes.

``tests/unit/golden/membership_smoke.json`` holds the metrics and tables of a small seeded run
recorded before the study moved onto the study kit (``experiments.kit``); the run must give the
same numbers, bit for bit (NaN equals NaN), in-process and with its cells on two local Ray
workers (``tests/integration/test_cli_resume.py`` checks a resumed run against an uninterrupted one).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from recprivacy.config import load_config
from recprivacy.experiments import run_study
from recprivacy.experiments.kit import Bench, RayExecutor, RecordStore

GOLDEN = Path(__file__).resolve().parents[1] / "unit" / "golden" / "membership_smoke.json"


def golden() -> dict[str, Any]:
    """The recorded document: ``config``, ``metrics`` and ``tables``."""
    return json.loads(GOLDEN.read_text(encoding="utf-8"))


def same(a: Any, b: Any) -> bool:
    """Exact equality of JSON values, with NaN equal to NaN."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b and type(a) is type(b)


def differences(doc: dict[str, Any], expected: dict[str, Any]) -> list[str]:
    """Metric names and table names whose values differ from the golden document."""
    metrics = sorted(set(doc["metrics"]) ^ set(expected["metrics"]))
    metrics += [k for k in expected["metrics"] if k in doc["metrics"] and not same(doc["metrics"][k], expected["metrics"][k])]
    tables = [k for k in expected["tables"] if not same(doc["tables"].get(k), expected["tables"][k])]
    return metrics + [f"table {k}" for k in tables] + [f"table {k}" for k in set(doc["tables"]) - set(expected["tables"])]


def document(bench: Bench | None = None) -> dict[str, Any]:
    """Metrics and tables of the golden config's run on ``bench``, through JSON."""
    results = run_study(load_config(base=golden()["config"]), bench)
    return json.loads(json.dumps({"metrics": results.metrics, "tables": {k: v.model_dump() for k, v in results.tables.items()}}))


def test_membership_smoke_matches_the_golden_numbers():
    assert differences(document(), golden()) == []


def test_the_smoke_grid_on_local_ray_with_two_workers_gives_the_same_numbers(tmp_path):
    ray = pytest.importorskip("ray")  # the optional 'ray' extra (installed in the test environment)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        doc = document(Bench(RecordStore(tmp_path), RayExecutor()))
    finally:
        ray.shutdown()
    assert differences(doc, golden()) == []
    assert len((tmp_path / "records.jsonl").read_text().splitlines()) == 43  # every cell of both seeds stored
