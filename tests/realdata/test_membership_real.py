"""Membership inference on real MovieLens-100K (the reduced CI version of the paper-001
benchmarks in BENCHMARKS.md): one seed, Assumption I and the defence, default settings
(k = 100, l = 100, Item-CF / LFM / NeuMF with the paper's hyperparameters)."""

import pytest

from recprivacy.config import load_config
from recprivacy.experiments import run_study

pytestmark = [pytest.mark.realdata, pytest.mark.slow]


@pytest.fixture(scope="module")
def results(dataset_dir):
    config = load_config(base={
        "name": "membership-ml100k-ci", "study": "membership", "seed": 0,
        "dataset": {"name": "ml-100k", "data_dir": str(dataset_dir("ml-100k"))},
        "study_options": {"experiments": ["assumption1", "defense"]},
    })  # fmt: skip
    return run_study(config).metrics


def test_assumption_one_attacks_leak_membership(results):
    """ROC AUC at least the paper's ml-1m values less 0.02 where they allow (LFM 0.851); the
    paper's ~0.998 for Item-CF and NCF is not reached on ml-100k (5-seed means 0.974 and 0.993),
    so those are held to 0.95."""
    assert results["assumption1/KIKI/auc"] >= 0.95
    assert results["assumption1/KLKL/auc"] >= 0.851
    assert results["assumption1/KNKN/auc"] >= 0.95
    # the paper ranks NCF above LFM on its own metric (balanced accuracy); so do we
    assert results["assumption1/KNKN/balanced_accuracy"] > results["assumption1/KLKL/balanced_accuracy"]


def test_defence_against_the_papers_adversary(results):
    """Only the target randomizes: the paper's metric falls to a blind guess for LFM and NCF."""
    for code in ("KLKL", "KNKN"):
        assert results[f"defense/{code}/defense=target/balanced_accuracy"] <= 0.60
        # members' lists are untouched, so members' HR@100 cannot drop; non-members' does
        assert results[f"defense/{code}/hr_members_after"] == results[f"defense/{code}/hr_members_before"]
        assert results[f"defense/{code}/hr_nonmembers_after"] < results[f"defense/{code}/hr_nonmembers_before"]


def test_defence_does_not_stop_an_adversary_who_knows_it(results):
    """When the shadow randomizes too, the attack recovers: the defence is no guarantee."""
    for code in ("KIKI", "KLKL", "KNKN"):
        assert results[f"defense/{code}/defense=both/auc"] >= 0.85
