"""The ``dipsgnn`` study measures the numbers recorded before issue 35 moved it onto the study
kit (``tests/unit/golden/dipsgnn_smoke.json``, the ``golden`` fixture: floats to 1e-12, the
rest exactly; wall-clock columns left out): the tiny seeded run of ``test_dipsgnn_study`` (five
methods, two seeds, simulation noise, one sweep), in this process, with its cells on two local
Ray workers, and when an interrupted run is resumed from its stored cells.

Re-record only on purpose (a change meant to move the numbers), and say why in the commit:
``RECPRIVACY_RECORD_GOLDEN=1 pytest tests/integration/test_dipsgnn_golden.py -k process``.
"""

from __future__ import annotations

from test_dipsgnn_study import TINY

from recprivacy.config import load_config
from recprivacy.experiments import run_study


def test_dipsgnn_smoke_in_this_process_matches_the_golden_numbers(golden):
    golden("dipsgnn_smoke", {"study": run_study(load_config(base=TINY))})
