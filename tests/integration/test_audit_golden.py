"""The audit (built-in and own target) and the ``dipsgnn`` study give the numbers recorded before
issue 35 split ``experiments/audit.py``, ``experiments/own_audit.py`` and
``experiments/dipsgnn.py`` into packages.

Four smoke runs on tiny synthetic data, fixed seeds, simulation noise:

* ``audit``: the demo audit with every registered section against a BPR-MF target;
* ``audit_sequential``: utility and the DIPSGNN section against an SR-GNN target;
* ``own``: ``Audit`` on a numpy co-occurrence recommender the library never registers;
* ``dipsgnn``: the study's Table 2 methods and an ``n_steps`` sweep on two seeds.

``tests/unit/golden/audit_dipsgnn_smoke.json`` holds what they measured at 63435c7, before the
splits; it was recorded again in the ``golden`` fixture's format (which adds seeds, noise and
figure names) only after the old test had shown the current code reproduces those numbers.
Numbers must agree to 1e-12, everything else exactly; wall-clock columns and metrics are left
out (they measure the machine, not the method). Re-record only on purpose (a change meant to
move the numbers; say why in the commit):
``RECPRIVACY_RECORD_GOLDEN=1 pytest tests/integration/test_audit_golden.py``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from recprivacy import Audit, Target
from recprivacy.config import load_config
from recprivacy.experiments import run_study
from recprivacy.experiments.results import Results
from recprivacy.experiments.train import hold_out_users, prepare_data

TINY_SYNTHETIC = {"name": "synthetic", "options": {"n_users": 120, "n_items": 120, "n_interactions": 3600}}


class CoOccurrence:
    """Items scored by how often they co-occur with the user's history in the training frame."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self.items = np.unique(frame["item_id"])
        rows = np.unique(frame["user_id"], return_inverse=True)[1]
        x = np.zeros((rows.max() + 1, len(self.items)))
        x[rows, np.searchsorted(self.items, frame["item_id"])] = 1.0
        self.co = x.T @ x

    def recommend(self, histories: list[list[int]], k: int) -> np.ndarray:
        h = np.zeros((len(histories), len(self.items)))
        for row, items in enumerate(histories):
            h[row, np.searchsorted(self.items, items)] = 1.0
        scores = np.where(h > 0, -np.inf, h @ self.co)
        return self.items[np.argsort(-scores, axis=1, kind="stable")[:, :k]]


def _audit() -> Results:
    return run_study(load_config(base={
        "name": "golden-audit", "study": "audit", "seed": 0, "noise": "simulation", "dataset": TINY_SYNTHETIC,
        "model": {"name": "bpr", "params": {"n_epochs": 20}}, "eval": {"ks": [10]},
        "study_options": {"membership": {"k": 20, "n_factors": 16, "n_references": 2},
                          "exposure": {"n_epochs": 2, "max_pairs_per_user": 5, "dim": 16, "ratios": [0.5]},
                          "attribute": {"k": 10, "attackers": ["knn", "tree"], "seeds": 2},
                          "synthetic_release": {"k": 0.5, "generator": {"n_epochs": 2}}},
    }))  # fmt: skip


def _audit_sequential() -> Results:
    return run_study(load_config(base={
        "name": "golden-audit-sequential", "study": "audit", "seed": 1, "noise": "simulation", "dataset": TINY_SYNTHETIC,
        "model": {"name": "srgnn", "params": {"hidden": 8, "user_dim": 4, "n_epochs": 2, "batch_size": 50}},
        "eval": {"ks": [5, 10]}, "study_options": {"sections": ["utility", "dipsgnn"], "dipsgnn": {"n_epochs": 2}},
    }))  # fmt: skip


def _own() -> Results:
    config = load_config(base={"dataset": TINY_SYNTHETIC, "seed": 2})
    data = hold_out_users(prepare_data(config, Results(name="split", study="audit", config={})), 0.3, 2)
    frame = data.full.to_frame()[["user_id", "item_id", "timestamp"]]
    features = data.full.user_features.assign(user_id=data.full.user_ids)
    return Audit(Target.from_training(CoOccurrence), frame, data.full.user_ids[np.unique(data.train.users)],
                 data.full.user_ids[data.heldout_users], test=data.test.to_frame()[["user_id", "item_id"]],
                 user_features=features, sections=["utility", "membership", "attribute"], seed=2, noise="simulation",
                 options={"membership": {"k": 20, "n_factors": 16, "n_references": 2},
                          "attribute": {"k": 10, "attackers": ["knn"], "seeds": 2}}).run()  # fmt: skip


def _dipsgnn() -> Results:
    return run_study(load_config(base={
        "name": "golden-dipsgnn", "study": "dipsgnn", "noise": "simulation",
        "dataset": {"name": "synthetic", "options": {"n_users": 60, "n_items": 100, "n_interactions": 1800, "seed": 0},
                    "preprocessing": {"implicit_threshold": 4, "kcore": 3}},
        "model": {"name": "srgnn", "params": {"hidden": 8, "user_dim": 4, "n_epochs": 2, "batch_size": 50}},
        "study_options": {"seeds": [0, 1], "max_len": 30,
                          "methods": ["SRGNN", "DPMF_exp", "EdgeRand", "DIPSGNN", "DIPSGNN_legacy", "Nonp-U"],
                          "method_params": {"DPMF_exp": {"n_epochs": 3, "eval_every": 1}},
                          "sweeps": [{"parameter": "n_steps", "values": [1, 2], "methods": ["DIPSGNN"]},
                                     {"parameter": "eps2", "values": [5.0, 1.0], "methods": ["EdgeRand"]}]},
    }))  # fmt: skip


SMOKE: dict[str, Callable[[], Results]] = {"audit": _audit, "audit_sequential": _audit_sequential, "own": _own,
                                           "dipsgnn": _dipsgnn}  # fmt: skip


def test_audits_and_dipsgnn_study_measure_the_recorded_numbers(golden):
    golden("audit_dipsgnn_smoke", {name: run() for name, run in SMOKE.items()})
