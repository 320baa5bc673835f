"""Same seed, same numbers across the split of ``experiments/upcsdg.py`` into a package (issue 35).

``tests/unit/golden/upcsdg_smoke.json`` holds what the ``upcsdg`` study (every part: Table 2,
the k x γ grid with the recovery attack, the ablations, the membership attack) and the audit's
``synthetic_release`` section measured on 60 synthetic users, one seed, one thread, seeded
(simulation) noise, recorded before the split at the commit named in the file. Every metric,
table and section text must come out identical (wall-clock seconds excepted). To record again
at a new commit on purpose: ``RECPRIVACY_RECORD_GOLDEN=1 pytest tests/integration/test_upcsdg_golden.py``.
"""

from __future__ import annotations

from recprivacy.config import load_config
from recprivacy.experiments import run_study

DATA = {"name": "synthetic", "options": {"n_users": 60, "n_items": 90, "n_interactions": 1500, "seed": 0}}
SETTING = {"seed": 0, "threads": 1, "noise": "simulation", "dataset": DATA}
STUDY = {
    **SETTING, "name": "upcsdg-golden", "study": "upcsdg", "model": {"name": "bpr", "params": {"n_epochs": 10, "eval_every": 5}},
    "study_options": {"seeds": [0], "generator": {"n_epochs": 2}, "models": ["bpr", "neumf", "lightgcn"],
                      "downstream": {"bpr": {"n_epochs": 5}, "neumf": {"n_epochs": 2}, "lightgcn": {"n_epochs": 5}},
                      "grid_k": [0.2, 0.8], "grid_gamma": [0.1, 0.9], "ablation_k": [0.2], "membership_list_k": 20},
}  # fmt: skip
AUDIT = {
    **SETTING, "name": "upcsdg-audit-golden", "study": "audit", "model": {"name": "bpr", "params": {"n_epochs": 5}},
    "study_options": {"sections": ["synthetic_release"], "synthetic_release": {"k": 0.5, "generator": {"n_epochs": 2}}},
}  # fmt: skip


def test_upcsdg_study_and_audit_section_measure_the_recorded_numbers(golden):
    golden("upcsdg_smoke", {"study": run_study(load_config(base=STUDY)), "audit": run_study(load_config(base=AUDIT))})
