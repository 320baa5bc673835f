"""The config of the reduced synthetic matrix that test_matrix.py, test_matrix_resume.py and
test_report_layout.py share (``synthetic_matrix`` in ``conftest.py`` runs it once per session)."""

from __future__ import annotations

from typing import Any

#: test_matrix.py's sizes: every central defence (two DP-SGD rows), every attack, the three sequential
#: defences and three upload defences, two seeds; the membership column's adaptive attacker trains 2
#: references per defended row (8 by default, each a training under the defence), the interactions column
#: draws 2 pairs of each label and kind per member (5 by default: its bootstraps over pairs are its cost), and the DP-SGD rows
#: train for one epoch (the path is the same: Poisson-sampled users, clipped and noised gradients, the
#: accountant's claim, the canary audit)
MATRIX_STUDY_OPTIONS: dict[str, Any] = {
    "canaries": 200, "canary_guesses": 20, "dpmf_epsilons": [1.0], "dpmf": {"n_epochs": 3},
    "dpsgd_epsilons": [1.0, 8.0], "dpsgd": {"n_factors": 8, "delta": 1e-4, "batch_users": 256, "n_epochs": 1, "lr": 0.01},
    "exposure": {"n_epochs": 1, "dim": 16}, "seeds": 2, "attackers": ["knn"], "mechanism_samples": 2000,
    "membership": {"n_references": 2}, "interactions": {"per_user": 2, "references": 2}, "release": {"generator": {"n_epochs": 2}},
    "sequential": {"canaries": 100, "canary_guesses": 20,
                   "params": {"n_epochs": 1, "hidden": 16, "user_mode": "none", "max_len": 20}},
    "uploads": {"max_users": 40, "rounds": 1, "dim": 4, "defences": ["apm", "fdpmf", "fgerai"], "attackers": ["tree"],
                "seeds": 2, "federated": {"local_epochs": 1, "batch_size": 256}},
}  # fmt: skip
#: seeded noise: the same numbers on every run (the default, secure, draws from the OS)
MATRIX_CONFIG: dict[str, Any] = {
    "name": "matrix-synthetic", "study": "matrix", "seed": 0, "noise": "simulation", "dataset": {"name": "synthetic"},
    "model": {"name": "bpr", "params": {"n_epochs": 60}}, "eval": {"ks": [10]}, "study_options": MATRIX_STUDY_OPTIONS,
}  # fmt: skip
