"""The reference-calibrated filter's pieces, by hand: ``reference_expectation`` (the mean over
references of ``(K - rank) / K``, 0 outside the top-``K``) and ``without_candidates`` (a reference
never trains on a pair it is asked about); the attack is ``absent * E_ref`` and its data-only
baseline ``E_ref`` alone."""

from __future__ import annotations

import numpy as np

from recprivacy.attacks.membership.interaction import Pairs, interaction_scores, reference_expectation, without_candidates
from recprivacy.data.interactions import Interactions


def _pairs(rows, items, labels) -> Pairs:
    rows, items = np.asarray(rows), np.asarray(items)
    return Pairs(rows, rows.copy(), items, np.asarray(labels), np.array(["member"] * len(rows)))


def test_the_expectation_is_the_mean_rank_weight_over_references():
    # two users, K = 4; reference 0 ranks user 0: 5, 2, 7, 1 and user 1: 3, 5, 0, 6; reference 1 reversed
    first = np.array([[5, 2, 7, 1], [3, 5, 0, 6]])
    lists = np.stack([first, first[:, ::-1]])
    pairs = _pairs([0, 0, 1, 1], [5, 4, 0, 6], [1, 0, 1, 0])
    # (u0, 5): ranks 0 and 3 -> (4/4 + 1/4) / 2; (u0, 4): in neither -> 0; (u1, 0): ranks 2, 1 -> (2/4 + 3/4) / 2;
    # (u1, 6): ranks 3, 0 -> (1/4 + 4/4) / 2
    assert np.allclose(reference_expectation(pairs, lists), [0.625, 0.0, 0.625, 0.625])


def test_a_reference_trains_on_nothing_it_is_asked_about():
    known = Interactions(users=np.array([0, 0, 0, 1, 1]), items=np.array([1, 2, 3, 1, 4]), n_users=2, n_items=5)
    pairs = _pairs([0, 1], [2, 4], [1, 0])  # user 0's item 2 and user 1's item 4
    kept = without_candidates(known, pairs)
    assert sorted(zip(kept.users.tolist(), kept.items.tolist())) == [(0, 1), (0, 3), (1, 1)]


def test_the_attack_reads_the_list_and_its_baseline_does_not():
    history = Interactions(users=np.array([0, 0, 1]), items=np.array([0, 1, 2]), n_users=2, n_items=3)
    pairs = _pairs([0, 1], [1, 2], [1, 0])
    lists = np.array([[2], [2]])  # item 2 is shown to user 1, item 1 is missing for user 0
    pop, s = np.array([1.0, 0.5, 0.5]), np.zeros((3, 3))
    expectation = np.array([0.75, 0.9])
    attacks, baselines = interaction_scores(pairs, lists, history, pop, s, expectation)
    assert np.allclose(attacks["reference_filter"], [0.75, 0.0])
    assert np.allclose(baselines["reference_fit"], [0.75, 0.9])
    without = interaction_scores(pairs, lists, history, pop, s)
    assert "reference_filter" not in without[0] and "reference_fit" not in without[1]
