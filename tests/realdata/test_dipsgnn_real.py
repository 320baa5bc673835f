"""DIPSGNN's protocol on the real MovieLens-1M (users 1-2999), reduced to fit the CI budget.

Full-size numbers (all methods, 5 seeds, 10 epochs) come from ``benchmarks/dipsgnn.py`` and are
recorded in BENCHMARKS.md; here the data protocol is checked exactly and a reduced run (a
subset of users, two epochs) checks the ordering the paper reports.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from recprivacy.config import load_config, validate_options
from recprivacy.experiments.dipsgnn import DIPSGNNOptions, prepare_sequences, run_method
from recprivacy.experiments.runner import new_results

pytestmark = pytest.mark.realdata


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
