"""The ``upcsdg`` study on the study kit measures the golden numbers
(``tests/unit/golden/upcsdg_smoke.json``) on two local Ray workers and when an interrupted run
is resumed from its stored cells (``recprivacy run --resume``)."""

from __future__ import annotations

import pytest
from kit_runs import on_local_ray, resumed_runs, stored_cells
from test_upcsdg_golden import AUDIT, STUDY

from recprivacy.config import load_config
from recprivacy.experiments import run_study

#: cells of the smoke grid: 5 membership, 4 original utility, 2 x (1 release + 4 utility) of
#: Table 2, 2 x (1 release + 1 utility) and 4 x 4 recovery of the grid, 3 x 2 ablation cells
N_CELLS = 45


@pytest.fixture(scope="module")
def audit():
    """The golden record's second part: the audit's ``synthetic_release`` section (not on the kit)."""
    return run_study(load_config(base=AUDIT))


def test_the_smoke_grid_on_local_ray_with_two_workers_gives_the_golden_numbers(local_ray, golden, audit, tmp_path):
    golden("upcsdg_smoke", {"study": on_local_ray(load_config(base=STUDY), tmp_path), "audit": audit})
    assert stored_cells(tmp_path) == N_CELLS


def test_a_resumed_run_gives_the_golden_numbers(golden, audit, tmp_path, monkeypatch):
    monkeypatch.delenv("RECPRIVACY_QUIET", raising=False)  # the progress lines say how many cells were stored
    # 3: cut inside the membership cells (the attack model is trained without the original target's run);
    # 12: after the first release and its Random cell (the release and the feature model are rebuilt lazily)
    for results, _ in resumed_runs(STUDY, tmp_path, (3, 12)).values():
        golden("upcsdg_smoke", {"study": results, "audit": audit})
