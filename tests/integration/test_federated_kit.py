"""The ``federated`` study on the study kit measures the golden numbers
(``tests/unit/golden/federated_smoke.json``) with its (d, method) groups on two local Ray
workers, and when an interrupted run is resumed from its stored cells (``recprivacy run --resume``)."""

from __future__ import annotations

import pytest
import yaml
from test_cli_resume import interrupted_copy, invoke
from test_federated_golden import AUDIT, STUDY

from recprivacy.config import load_config
from recprivacy.experiments import load_results, run_study

#: 5 methods, each: its training cell, and per attribute (gender, age) 2 components x 2
#: attackers and the zero-column rule
N_CELLS = 5 * (1 + 2 * (2 * 2 + 1))


@pytest.fixture(scope="module")
def audit():
    """The golden record's second part: the audit's ``attribute`` section (not on the kit)."""
    return run_study(load_config(base=AUDIT))


def test_the_smoke_groups_on_local_ray_with_two_workers_give_the_golden_numbers(golden, audit, tmp_path):
    ray = pytest.importorskip("ray")  # the optional 'ray' extra (installed in the test environment)
    from recprivacy.experiments.kit import Bench, RayExecutor, RecordStore

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        results = run_study(load_config(base=STUDY), Bench(RecordStore(tmp_path), RayExecutor()))
    finally:
        ray.shutdown()
    golden("federated_smoke", {"study": results, "audit": audit})
    assert len((tmp_path / "records.jsonl").read_text().splitlines()) == N_CELLS


def test_a_resumed_run_gives_the_golden_numbers(golden, audit, tmp_path, monkeypatch):
    monkeypatch.delenv("RECPRIVACY_QUIET", raising=False)  # the progress lines say how many cells were stored
    config = tmp_path / "smoke.yaml"
    config.write_text(yaml.safe_dump(STUDY))
    assert invoke("run", config, "--out", tmp_path / "runs").exit_code == 0
    (run_dir,) = (tmp_path / "runs").iterdir()
    # 14: the first method's group stored whole (not trained again), the second's training cell
    # and two of its attack cells stored (its federation is trained again for the other eight)
    folder = interrupted_copy(run_dir, tmp_path / "kept", 14)
    result = invoke("run", "--resume", folder)
    assert result.exit_code == 0, result.output
    assert f"cells: 14 stored, {N_CELLS - 14} to run" in result.stderr
    assert "d=8 none" not in result.stderr and "d=8 apm" in result.stderr  # the federations trained on resume
    golden("federated_smoke", {"study": load_results(folder), "audit": audit})
