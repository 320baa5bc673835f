"""The membership study's numbers do not move when its machinery changes.

``tests/unit/golden/membership_smoke.json`` holds what a small seeded run measured (metrics,
tables, section texts; the ``golden`` fixture of ``tests/conftest.py``), recorded at 63435c7,
before the study moved onto the study kit (``experiments.kit``). The run must measure the same
in-process and with its cells on two local Ray workers (``tests/integration/test_cli_resume.py``
checks a resumed run against an uninterrupted one).
"""

from __future__ import annotations

from pathlib import Path

from kit_runs import on_local_ray

from recprivacy.config import load_config
from recprivacy.experiments import run_study

SMOKE = Path(__file__).with_name("membership_smoke.yaml")


def test_membership_smoke_matches_the_golden_numbers(golden):
    golden("membership_smoke", {"study": run_study(load_config(SMOKE))})


def test_the_smoke_grid_on_local_ray_with_two_workers_gives_the_same_numbers(local_ray, golden, tmp_path):
    results = on_local_ray(load_config(SMOKE), tmp_path)
    golden("membership_smoke", {"study": results})
    assert len((tmp_path / "records.jsonl").read_text().splitlines()) == 43  # every cell of both seeds stored
