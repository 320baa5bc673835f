"""The membership study's numbers do not move when its machinery changes.

``tests/unit/golden/membership_smoke.json`` holds what a small seeded run measured (metrics,
tables, section texts; the ``golden`` fixture of ``tests/conftest.py``), recorded at 63435c7,
before the study moved onto the study kit (``experiments.kit``). The run must measure the same
in-process and with its cells on two local Ray workers (``tests/integration/test_cli_resume.py``
checks a resumed run against an uninterrupted one).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from recprivacy.config import load_config
from recprivacy.experiments import run_study

SMOKE = Path(__file__).with_name("membership_smoke.yaml")


def test_membership_smoke_matches_the_golden_numbers(golden):
    golden("membership_smoke", {"study": run_study(load_config(SMOKE))})


def test_the_smoke_grid_on_local_ray_with_two_workers_gives_the_same_numbers(golden, tmp_path):
    ray = pytest.importorskip("ray")  # the optional 'ray' extra (installed in the test environment)
    from recprivacy.experiments.kit import Bench, RayExecutor, RecordStore

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        results = run_study(load_config(SMOKE), Bench(RecordStore(tmp_path), RayExecutor()))
    finally:
        ray.shutdown()
    golden("membership_smoke", {"study": results})
    assert len((tmp_path / "records.jsonl").read_text().splitlines()) == 43  # every cell of both seeds stored
