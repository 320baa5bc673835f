"""The ``dipsgnn`` study measures the numbers recorded before issue 35 moved it onto the study
kit (``tests/unit/golden/dipsgnn_smoke.json``, the ``golden`` fixture: floats to 1e-12, the
rest exactly; wall-clock columns left out): the tiny seeded run of ``test_dipsgnn_study`` (five
methods, two seeds, simulation noise, one sweep), in this process, with its cells on two local
Ray workers, and when an interrupted run is resumed from its stored cells.

Re-record only on purpose (a change meant to move the numbers), and say why in the commit:
``RECPRIVACY_RECORD_GOLDEN=1 pytest tests/integration/test_dipsgnn_golden.py -k process``.
"""

from __future__ import annotations

import yaml
from kit_runs import on_local_ray
from test_cli_resume import interrupted_copy, invoke
from test_dipsgnn_study import TINY

from recprivacy.config import load_config
from recprivacy.experiments import load_results, run_study

#: cells of the smoke run: 5 methods x 2 seeds, and DIPSGNN x 2 seeds at n_steps = 2 (the sweep's
#: n_steps = 1 is the study's own setting: Table 2's runs)
N_CELLS = 5 * 2 + 2


def test_dipsgnn_smoke_in_this_process_matches_the_golden_numbers(golden):
    golden("dipsgnn_smoke", {"study": run_study(load_config(base=TINY))})


def test_the_smoke_run_on_local_ray_with_two_workers_gives_the_golden_numbers(local_ray, golden, tmp_path):
    results = on_local_ray(load_config(base=TINY), tmp_path)
    golden("dipsgnn_smoke", {"study": results})
    assert len((tmp_path / "records.jsonl").read_text().splitlines()) == N_CELLS


def test_a_resumed_run_gives_the_golden_numbers(golden, tmp_path, monkeypatch):
    monkeypatch.delenv("RECPRIVACY_QUIET", raising=False)  # the progress lines say how many cells were stored
    config = tmp_path / "smoke.yaml"
    config.write_text(yaml.safe_dump(TINY))
    assert invoke("run", config, "--out", tmp_path / "runs").exit_code == 0
    (run_dir,) = (tmp_path / "runs").iterdir()
    assert len((run_dir / "records.jsonl").read_text().splitlines()) == N_CELLS
    for keep in (3, 10):  # cut inside Table 2's runs, and before the sweep point's
        folder = interrupted_copy(run_dir, tmp_path / f"kept{keep}", keep)
        result = invoke("run", "--resume", folder)
        assert result.exit_code == 0, result.output
        assert f"cells: {keep} stored, {N_CELLS - keep} to run" in result.stderr
        golden("dipsgnn_smoke", {"study": load_results(folder)})
