"""The ``federated`` study on the study kit measures the golden numbers
(``tests/unit/golden/federated_smoke.json``) with its (d, method) groups on two local Ray
workers, and when an interrupted run is resumed from its stored cells (``recprivacy run --resume``)."""

from __future__ import annotations

import pytest
from kit_runs import on_local_ray, resumed_runs, stored_cells
from test_federated_golden import AUDIT, STUDY

from recprivacy.config import load_config
from recprivacy.experiments import run_study

#: 5 methods, each: its training cell, and per attribute (gender, age) 2 components x 2
#: attackers and the zero-column rule
N_CELLS = 5 * (1 + 2 * (2 * 2 + 1))


@pytest.fixture(scope="module")
def audit():
    """The golden record's second part: the audit's ``attribute`` section (not on the kit)."""
    return run_study(load_config(base=AUDIT))


def test_the_smoke_groups_on_local_ray_with_two_workers_give_the_golden_numbers(local_ray, golden, audit, tmp_path):
    golden("federated_smoke", {"study": on_local_ray(load_config(base=STUDY), tmp_path), "audit": audit})
    assert stored_cells(tmp_path) == N_CELLS


def test_a_resumed_run_gives_the_golden_numbers(golden, audit, tmp_path, monkeypatch):
    monkeypatch.delenv("RECPRIVACY_QUIET", raising=False)  # the progress lines say how many cells were stored
    # 14: the first method's group stored whole (not trained again), the second's training cell
    # and two of its attack cells stored (its federation is trained again for the other eight)
    ((results, progress),) = resumed_runs(STUDY, tmp_path, (14,)).values()
    assert "d=8/none" not in progress and "d=8/apm" in progress  # the federations trained on resume
    golden("federated_smoke", {"study": results, "audit": audit})
