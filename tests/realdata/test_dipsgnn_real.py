"""DIPSGNN on real data, reduced to fit the CI budget.

Full-size numbers (all methods, 5 seeds, 10 epochs) come from ``benchmarks/dipsgnn.py`` and are
recorded in BENCHMARKS.md. Here the ml-1m (users 1-2999) data protocol is checked exactly, and a
shortened run on ml-100k (seed 0, 2 epochs; DP-SGD 1) checks the ordering Table 2 reports among the private
methods and the size of the gap to non-private SR-GNN.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from recprivacy.config import load_config, validate_options
from recprivacy.experiments.dipsgnn import DIPSGNNOptions
from recprivacy.experiments.dipsgnn.collect import run_method
from recprivacy.experiments.dipsgnn.methods import backbone_params
from recprivacy.experiments.dipsgnn.sequences import prepare_sequences
from recprivacy.experiments.runner import new_results

pytestmark = [pytest.mark.realdata, pytest.mark.slow]
CONFIGS = Path(__file__).resolve().parents[2] / "configs" / "dipsgnn"


@pytest.fixture(scope="module")
def ml1m(dataset_dir):
    config = load_config(base={
        "name": "dipsgnn-real", "study": "dipsgnn",
        "dataset": {"name": "ml-1m", "data_dir": str(dataset_dir("ml-1m")),
                    "preprocessing": {"implicit_threshold": 4, "kcore": 10}},
        "model": {"name": "srgnn"},
    })
    options = validate_options(DIPSGNNOptions, {})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the partial ratings file
        return prepare_sequences(config, options, new_results(config)), options


def test_protocol_reproduces_the_ml1m_statistics(ml1m):
    data, _ = ml1m
    # ratings >= 4, 10-core, last 100 per user (the paper's full ML-1M has 5,945 x 2,810)
    assert (data.full.n_users, data.full.n_items, len(data.full)) == (2964, 2363, 177_314)
    assert (len(data.train), len(data.test)) == (141_029, 36_285)
    counts = data.full.user_counts()
    assert counts.max() == 100 and np.array_equal(data.train.user_counts(), (0.8 * counts + 1e-9).astype(int))
    assert len(data.test_samples) == len(data.test) - (data.test.user_counts() > 0).sum()
    assert set(np.unique(data.train.ratings)) == {4.0, 5.0}  # star ratings kept for DPMF_exp
    assert data.full.user_features.shape[0] == 2964


@pytest.fixture(scope="module")
def ml100k_short(dataset_dir):
    """ml-100k under the paper's protocol (configs/dipsgnn/ml-100k.yaml), trained for 2 epochs
    (3 until issue 33: 227 -> 158 CPU s for the four fits, every bound still met with margin; the
    recalls of both lengths are in the test below)."""
    config = load_config(CONFIGS / "ml-100k.yaml", updates={"dataset.data_dir": str(dataset_dir("ml-100k"))})
    options = validate_options(DIPSGNNOptions, config.study_options)
    backbone = {**backbone_params(config), "n_epochs": 2}
    return prepare_sequences(config, options, new_results(config)), options, backbone


def test_dipsgnn_beats_the_other_private_methods_on_ml100k(ml100k_short):
    """Table 2's ordering at eps1 = 20, eps2 = 5, shortened: DIPSGNN above DPMF and DP-SGD by a wide
    margin, below non-private SR-GNN by a bounded gap, and its whole-run epsilon above the per-pass 5.
    Measured Recall@20 (x100, seeded simulation noise) at 2 epochs: DIPSGNN 12.22, SR-GNN 13.24,
    DPMF_imp 4.12, DP-SGD 4.93, whole-run epsilon 190.9 (at 3 epochs: 13.54, 14.05, 4.12, 4.85, 264.2).
    DP-SGD trains 1 epoch here (issue 49): its recall does not move with training (4.91 at 1 epoch,
    4.93 at 2, 4.85 at 3) and its epochs are the dearest of the four fits (about 21 CPU s each against
    DIPSGNN's 18 and SR-GNN's 12), so the bound against it stays as strict (12.22 > 2 x 4.91) for
    about a quarter less CPU."""
    data, options, backbone = ml100k_short
    epochs = {"DPSGD": {**backbone, "n_epochs": 1}}
    runs = {m: run_method(m, 0, data, options, epochs.get(m, backbone)) for m in ("DIPSGNN", "SRGNN", "DPMF_imp", "DPSGD")}
    recall = {m: r.metrics["recall@20"] for m, r in runs.items()}
    assert recall["DIPSGNN"] > 2 * max(recall["DPMF_imp"], recall["DPSGD"]), recall
    assert 0.6 * recall["SRGNN"] < recall["DIPSGNN"] < 1.1 * recall["SRGNN"], recall
    edges = runs["DIPSGNN"].statements
    assert edges["edges, one forward pass (paper)"].epsilon == pytest.approx(5.0)
    assert edges["edges, whole training run"].epsilon > 50
