"""Early stopping of the factor models on a seeded sample of validation users (issue 33): the
sample by hand, and a BPR-MF whose best validation score is Recall@20 over exactly that sample."""

from __future__ import annotations

import numpy as np

from recprivacy.data.split import random_split
from recprivacy.data.synthetic import make_synthetic
from recprivacy.metrics.ranking import evaluate
from recprivacy.models import lfm
from recprivacy.models.bpr import BPRMF
from recprivacy.models.lfm import validation_users


def test_validation_users_by_hand():
    data = make_synthetic(n_users=60, n_items=100, n_interactions=1500, seed=0)
    _, valid, _ = random_split(data, seed=0)
    everyone = np.flatnonzero(valid.user_counts() > 0)
    assert np.array_equal(validation_users(valid, len(everyone), seed=1), everyone)     # no sample: id order
    sample = validation_users(valid, 7, seed=1)
    assert len(sample) == 7 and np.all(np.diff(sample) > 0) and set(sample) <= set(everyone)
    assert np.array_equal(sample, validation_users(valid, 7, seed=1))
    assert not np.array_equal(sample, validation_users(valid, 7, seed=2))


def test_bpr_early_stopping_scores_the_sample(monkeypatch):
    data = make_synthetic(n_users=80, n_items=120, n_interactions=2400, seed=3)
    train, valid, _ = random_split(data, seed=3)
    monkeypatch.setattr(lfm, "VALID_USERS", 9)
    model = BPRMF(n_factors=8, n_epochs=6, eval_every=2, patience=5, seed=4).fit(train, valid)
    sample = validation_users(valid, 9, seed=4)
    assert model.history_.best_score == evaluate(model, valid, ks=(20,), users=sample)["recall@20"]
    assert len(model.history_.valid) == 3                       # epochs 2, 4, 6
