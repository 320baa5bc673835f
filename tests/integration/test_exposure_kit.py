"""The ``exposure`` study on the study kit measures the golden numbers
(``tests/unit/golden/exposure_smoke.json``) with its cells on two local Ray workers and when an
interrupted run is resumed from its stored cells (``recprivacy run --resume``).

The record's ``impressions`` and ``audit`` parts are measured once in this process (the audit
is not on the kit); the ``simulated`` part, which has every kind of cell, is the one moved.
"""

from __future__ import annotations

import pytest
import yaml
from kit_runs import on_local_ray
from test_cli_resume import interrupted_copy, invoke
from test_exposure_golden import SMOKE

from recprivacy.config import load_config
from recprivacy.experiments import load_results, run_study

#: cells of the simulated smoke run: 2 encoders x 2 decoders (Tables 3-6), 2 slate sizes x 2
#: decoders (the sweep), the floor and 2 selections x 2 replacements x 2 ratios with the frozen
#: attacker, plus the adaptive one for random/uniform (the protection rows)
N_CELLS = 4 + 4 + 1 + 8 + 2


@pytest.fixture(scope="module")
def others():
    """The golden record's other parts, measured in this process."""
    return {name: run_study(load_config(base=SMOKE[name])) for name in ("impressions", "audit")}


def test_the_simulated_smoke_run_on_local_ray_with_two_workers_gives_the_golden_numbers(local_ray, golden, others, tmp_path):
    results = on_local_ray(load_config(base=SMOKE["simulated"]), tmp_path)
    golden("exposure_smoke", {"simulated": results, **others})
    assert len((tmp_path / "records.jsonl").read_text().splitlines()) == N_CELLS


def test_a_resumed_run_gives_the_golden_numbers(golden, others, tmp_path, monkeypatch):
    monkeypatch.delenv("RECPRIVACY_QUIET", raising=False)  # the progress lines say how many cells were stored
    config = tmp_path / "smoke.yaml"
    config.write_text(yaml.safe_dump(SMOKE["simulated"]))
    assert invoke("run", config, "--out", tmp_path / "runs").exit_code == 0
    (run_dir,) = (tmp_path / "runs").iterdir()
    assert len((run_dir / "records.jsonl").read_text().splitlines()) == N_CELLS
    # 2: cut inside the attack grid; 11: after three protection rows (the frozen attacker and
    # the embeddings are fitted again for the rest)
    for keep in (2, 11):
        folder = interrupted_copy(run_dir, tmp_path / f"kept{keep}", keep)
        result = invoke("run", "--resume", folder)
        assert result.exit_code == 0, result.output
        assert f"cells: {keep} stored, {N_CELLS - keep} to run" in result.stderr
        golden("exposure_smoke", {"simulated": load_results(folder), **others})
