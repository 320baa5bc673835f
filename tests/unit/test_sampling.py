"""Seeded user samples that bound an audit section's cost."""

from __future__ import annotations

import numpy as np

from recprivacy.experiments.sampling import sample_users


def test_small_populations_are_kept_whole_and_in_order():
    users = np.array([5, 1, 3])
    assert np.array_equal(sample_users(users, 3, seed=0), users)
    assert np.array_equal(sample_users(users, None, seed=0), users)


def test_large_populations_give_a_seeded_uniform_subset():
    users = np.arange(1000) * 2
    a = sample_users(users, 100, seed=1)
    assert len(a) == 100 and len(np.unique(a)) == 100 and np.isin(a, users).all()
    assert np.array_equal(a, sample_users(users, 100, seed=1))
    assert not np.array_equal(a, sample_users(users, 100, seed=2))
    # uniform: over many seeds every user is drawn about 10% of the time
    hits = np.bincount(np.concatenate([sample_users(np.arange(50), 5, s) for s in range(2000)]), minlength=50) / 2000
    assert np.abs(hits - 0.1).max() < 0.03
