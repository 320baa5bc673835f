"""Popularity Randomization (paper 001 §4): random k-subsets of the k/alpha most popular items."""

import math

import numpy as np
import pytest

from recprivacy.data.interactions import Interactions
from recprivacy.defenses.popularity_randomization import PopularityRandomization
from recprivacy.errors import ConfigError, NotFittedError

RANKING = np.array([7, 3, 9, 0, 1, 2, 4, 5, 6, 8, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19])


def test_each_list_holds_k_distinct_items_from_the_top_candidates():
    lists = PopularityRandomization(alpha=0.5, seed=0).lists(RANKING, n_users=200, k=4)
    assert lists.shape == (200, 4)
    candidates = set(RANKING[:8].tolist())  # N_cand = k / alpha = 8
    for row in lists:
        assert len(set(row.tolist())) == 4
        assert set(row.tolist()) <= candidates
    # every candidate is used, and users do not share one list
    assert set(lists.ravel().tolist()) == candidates
    assert len({tuple(sorted(r)) for r in lists.tolist()}) > 20


def test_draws_are_uniform_and_independent_per_user():
    lists = PopularityRandomization(alpha=0.5, seed=1).lists(RANKING, n_users=4000, k=4)
    counts = np.bincount(lists.ravel(), minlength=20)[RANKING[:8]]
    expected = 4000 * 4 / 8
    assert np.all(np.abs(counts - expected) < 5 * math.sqrt(expected))
    # the first slot is uniform too: the order is the random draw order, not popularity
    first = np.bincount(lists[:, 0], minlength=20)[RANKING[:8]]
    assert np.all(np.abs(first - 500) < 5 * math.sqrt(500))


def test_simulation_same_seed_same_lists_other_seed_other_lists():
    a = PopularityRandomization(0.5, seed=3, noise="simulation").lists(RANKING, 50, 4)
    b = PopularityRandomization(0.5, seed=3, noise="simulation").lists(RANKING, 50, 4)
    c = PopularityRandomization(0.5, seed=4, noise="simulation").lists(RANKING, 50, 4)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_secure_lists_cannot_be_replayed_from_the_seed():
    a = PopularityRandomization(0.5, seed=3).lists(RANKING, 50, 4)
    b = PopularityRandomization(0.5, seed=3).lists(RANKING, 50, 4)
    replay = PopularityRandomization(0.5, seed=3, noise="simulation").lists(RANKING, 50, 4)
    assert not np.array_equal(a, b)
    assert not np.array_equal(a, replay)


def test_candidate_count_defaults_and_caps_at_catalogue():
    defence = PopularityRandomization()
    assert defence.n_candidates(100, 5000) == 1000
    assert defence.n_candidates(100, 400) == 400
    lists = PopularityRandomization(alpha=0.1, seed=0).lists(RANKING, 10, 5)  # 50 > 20 items: all items
    assert lists.shape == (10, 5)
    full = PopularityRandomization(alpha=1.0, seed=0).lists(RANKING, 10, 20)
    assert all(sorted(row) == list(range(20)) for row in full.tolist())


def test_fit_learns_the_ranking_most_interacted_first_ties_by_item_id():
    # item counts: 0 -> 1, 1 -> 3, 2 -> 1, 3 -> 0, 4 -> 2
    train = Interactions(users=[0, 1, 2, 0, 1, 0, 2], items=[1, 1, 1, 4, 4, 0, 2], n_users=3, n_items=5)
    defence = PopularityRandomization(alpha=1.0, seed=2, noise="simulation")
    assert defence.fit(train) is defence
    np.testing.assert_array_equal(defence.ranking_, [1, 4, 0, 2, 3])
    fitted = defence.lists(None, 6, 2)
    assert set(fitted.ravel().tolist()) == {1, 4}  # alpha = 1: the top 2 in a random order
    np.testing.assert_array_equal(fitted, PopularityRandomization(1.0, 2, "simulation").lists(defence.ranking_, 6, 2))
    with pytest.raises(NotFittedError, match="fit"):
        PopularityRandomization().lists(None, 3, 2)


def test_bad_parameters():
    with pytest.raises(ConfigError, match="alpha"):
        PopularityRandomization(alpha=0)
    with pytest.raises(ConfigError, match="k=21"):
        PopularityRandomization().lists(RANKING, 3, 21)


def test_privacy_statement_claims_no_guarantee_and_names_the_noise():
    statement = PopularityRandomization().privacy_statement()
    assert not statement.formal
    assert "No formal" in str(statement)
    assert "noise:      secure" in str(statement)
    simulated = PopularityRandomization(seed=5, noise="simulation").privacy_statement()
    assert "simulation (seeded, not protection): seed 5" in str(simulated)
    with pytest.raises(ConfigError, match="PopularityRandomization.noise"):
        PopularityRandomization(noise="seeded")
