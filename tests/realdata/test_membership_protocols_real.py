"""Membership inference under the served and paper protocols on real MovieLens-100K (the reduced
CI version of ``benchmarks/membership_protocols.py``: 2 seeds, 4 references, fewer epochs)."""

import numpy as np
import pytest

from recprivacy.experiments.membership.lab import LabOptions
from recprivacy.data.registry import load_dataset
from recprivacy.experiments.membership.compare import protocol_records

pytestmark = [pytest.mark.realdata, pytest.mark.slow]

ALGORITHMS = ("itemcf", "lfm", "bpr", "lightgcn")
FAST = {"lfm": {"n_epochs": 10}, "bpr": {"n_epochs": 20}, "lightgcn": {"n_epochs": 10}}


@pytest.fixture(scope="module")
def records(dataset_dir):
    data = load_dataset("ml-100k", dataset_dir("ml-100k"))
    return protocol_records(data, ALGORITHMS, [0, 1], LabOptions(model_params=FAST, n_references=4))


def mean_auc(records, algorithm, protocol, kind=None, name=None):
    """Mean over seeds of ROC AUC, for one name or (with ``kind``) the best name of that kind."""
    rows = [r for r in records if r["algorithm"] == algorithm and r["protocol"] == protocol]
    names = {r["name"] for r in rows if (kind is None or r["kind"] == kind) and (name is None or r["name"] == name)}
    return max(np.mean([r["auc"]["value"] for r in rows if r["name"] == n]) for n in names)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_paper_protocol_is_separated_by_an_output_statistic(records, algorithm):
    """Under the paper's protocol the best statistic of the lists (no training) does at least as
    well as the MLP (up to 0.02), and the history statistics (the baselines) stay near a blind guess."""
    assert mean_auc(records, algorithm, "paper", kind="output statistic") >= mean_auc(records, algorithm, "paper", name="mlp") - 0.02
    assert mean_auc(records, algorithm, "paper", kind="baseline") < 0.6


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_calibrated_attacks_beat_the_mlp_when_non_members_are_served(records, algorithm):
    best_new = max(mean_auc(records, algorithm, "served", name=n) for n in ("lira", "lira_offline", "rmia"))
    assert best_new >= mean_auc(records, algorithm, "served", name="mlp")


def test_every_record_names_its_protocol_and_carries_intervals(records):
    assert {r["protocol"] for r in records} == {"served", "paper"}
    for r in records:
        assert r["auc"]["low"] <= r["auc"]["value"] <= r["auc"]["high"]
        assert r["tpr@1%fpr"]["resolvable"] == (r["n_nonmembers"] >= 100)
