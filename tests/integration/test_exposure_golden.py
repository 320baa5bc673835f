"""The ``exposure`` study and audit section give the numbers recorded before issue 35 moved
``experiments/exposure.py`` into a package: the same seeds, simulation noise and tiny synthetic
data must give the same numbers (``golden`` fixture: floats to 1e-12, the rest exactly;
wall-clock columns left out).

``tests/unit/golden/exposure_smoke.json`` holds the numbers recorded at 63435c7, before the
split; it was recorded again in the fixture's format (which adds seeds, noise, captions, section
titles and figure names) only after the old test had shown the current code reproduces them.
Re-record only on purpose (a change that is meant to move the numbers), and say why in the
commit: ``RECPRIVACY_RECORD_GOLDEN=1 pytest tests/integration/test_exposure_golden.py``.
"""

from __future__ import annotations

from recprivacy.config import load_config
from recprivacy.experiments import run_study

SYNTHETIC = {"name": "synthetic", "options": {"n_users": 60, "n_items": 150, "n_interactions": 2400, "seed": 0}}
SMOKE = {
    "simulated": {
        "name": "exposure-golden-simulated", "study": "exposure", "seed": 0, "noise": "simulation", "dataset": SYNTHETIC,
        "model": {"name": "sasrec", "params": {"hidden": 16, "n_blocks": 1, "n_epochs": 2, "eval_every": 1}},
        "study_options": {
            "max_pairs_per_user": 6, "experiments": ["attack", "slate_sweep", "protection"], "encoders": ["mean", "att"],
            "decoders": ["point", "transformer"], "slate_sizes": [5, 10], "attacker": {"dim": 16, "n_epochs": 2, "patience": 1},
            "protection": {"selections": ["random", "similar"], "replacements": ["uniform", "batch_popularity"],
                           "ratios": [0.0, 0.5], "attacker": "mean+point", "embedding_epochs": 1},
        },
    },
    "impressions": {
        "name": "exposure-golden-impressions", "study": "exposure", "seed": 1, "noise": "simulation", "dataset": SYNTHETIC,
        "study_options": {"source": "impressions", "max_pairs_per_user": 5, "experiments": ["attack"], "encoders": ["max"],
                          "decoders": ["lstm"], "attacker": {"dim": 16, "n_epochs": 2}},
    },
    "audit": {
        "name": "exposure-golden-audit", "study": "audit", "seed": 0, "noise": "simulation",
        "dataset": {"name": "synthetic", "options": {"n_users": 80, "n_items": 120, "n_interactions": 2400}},
        "model": {"name": "bpr", "params": {"n_epochs": 3, "eval_every": 1}},
        "study_options": {"sections": ["exposure"], "exposure": {"n_epochs": 2, "max_pairs_per_user": 5, "dim": 16}},
    },
}  # fmt: skip


def test_exposure_study_and_audit_section_measure_the_recorded_numbers(golden):
    golden("exposure_smoke", {name: run_study(load_config(base=config)) for name, config in SMOKE.items()})
