"""The ``upcsdg`` study on the study kit measures the golden numbers
(``tests/unit/golden/upcsdg_smoke.json``) on two local Ray workers and when an interrupted run
is resumed from its stored cells (``recprivacy run --resume``)."""

from __future__ import annotations

import pytest
import yaml
from test_cli_resume import interrupted_copy, invoke
from test_upcsdg_golden import AUDIT, STUDY

from recprivacy.config import load_config
from recprivacy.experiments import load_results, run_study

#: cells of the smoke grid: 5 membership, 4 original utility, 2 x (1 release + 4 utility) of
#: Table 2, 2 x (1 release + 1 utility) and 4 x 4 recovery of the grid, 3 x 2 ablation cells
N_CELLS = 45


@pytest.fixture(scope="module")
def audit():
    """The golden record's second part: the audit's ``synthetic_release`` section (not on the kit)."""
    return run_study(load_config(base=AUDIT))


def test_the_smoke_grid_on_local_ray_with_two_workers_gives_the_golden_numbers(golden, audit, tmp_path):
    ray = pytest.importorskip("ray")  # the optional 'ray' extra (installed in the test environment)
    from recprivacy.experiments.kit import Bench, RayExecutor, RecordStore

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        results = run_study(load_config(base=STUDY), Bench(RecordStore(tmp_path), RayExecutor()))
    finally:
        ray.shutdown()
    golden("upcsdg_smoke", {"study": results, "audit": audit})
    assert len((tmp_path / "records.jsonl").read_text().splitlines()) == N_CELLS


def test_a_resumed_run_gives_the_golden_numbers(golden, audit, tmp_path, monkeypatch):
    monkeypatch.delenv("RECPRIVACY_QUIET", raising=False)  # the progress lines say how many cells were stored
    config = tmp_path / "smoke.yaml"
    config.write_text(yaml.safe_dump(STUDY, allow_unicode=True))
    assert invoke("run", config, "--out", tmp_path / "runs").exit_code == 0
    (run_dir,) = (tmp_path / "runs").iterdir()
    assert len((run_dir / "records.jsonl").read_text().splitlines()) == N_CELLS
    # 3: cut inside the membership cells (the attack model is trained without the original target's run);
    # 12: after the first release and its Random cell (the release and the feature model are rebuilt lazily)
    for keep in (3, 12):
        folder = interrupted_copy(run_dir, tmp_path / f"kept{keep}", keep)
        result = invoke("run", "--resume", folder)
        assert result.exit_code == 0, result.output
        assert f"cells: {keep} stored, {N_CELLS - keep} to run" in result.stderr
        golden("upcsdg_smoke", {"study": load_results(folder), "audit": audit})
