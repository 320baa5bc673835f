"""Same seed, same numbers across the split of ``experiments/federated.py`` into a package (issue 35).

``tests/unit/golden/federated_smoke.json`` holds what the ``federated`` study measured on the
in-process simulator (60 synthetic users, d = 8, 3 rounds; Pure FedRec, APM, FedNews / +LDP
and the F-GERAI and F-DPMF baselines; the DNN and kNN attackers on the full ΔΘ and on the user
component, with the zero-column rule) and what the audit's ``attribute`` section measured,
one thread, seeded (simulation) noise, recorded before the split at the commit named in the
file. Every metric, table and section text must come out identical (wall-clock seconds
excepted). To record again at a new commit on purpose:
``RECPRIVACY_RECORD_GOLDEN=1 pytest tests/integration/test_federated_golden.py``.
"""

from __future__ import annotations

from recprivacy.config import load_config
from recprivacy.experiments import run_study

SETTING = {"seed": 0, "threads": 1, "noise": "simulation"}
STUDY = {
    **SETTING, "name": "federated-golden", "study": "federated", "eval": {"ks": [20]},
    "dataset": {"name": "synthetic", "options": {"n_users": 60, "n_items": 60, "n_interactions": 1400, "seed": 1}},
    "study_options": {"dims": [8], "rounds": 3, "clients_per_round": 0.5, "local_epochs": 1, "eval_every": 2,
                      "methods": ["none", "apm", "ldp", "fgerai", "fdpmf"], "zetas": [0.3], "attackers": ["dnn", "knn"],
                      "components": ["all", "user"], "attack_seeds": 2},
}  # fmt: skip
AUDIT = {
    **SETTING, "name": "attribute-audit-golden", "study": "audit", "model": {"name": "popularity"}, "eval": {"ks": [10]},
    "dataset": {"name": "synthetic", "options": {"n_users": 80, "n_items": 60, "n_interactions": 1800}},
    "study_options": {"sections": ["attribute"], "attribute": {"k": 10, "attackers": ["knn", "tree"], "seeds": 2}},
}  # fmt: skip


def test_federated_study_and_attribute_section_measure_the_recorded_numbers(golden):
    golden("federated_smoke", {"study": run_study(load_config(base=STUDY)), "audit": run_study(load_config(base=AUDIT))})
