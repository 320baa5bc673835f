"""Replaced-item recovery attack on a synthetic release (hand-computed scores)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from recprivacy.attacks.recovery import PopularityGuess, ReplacementRecoveryAttack, recovery_metrics
from recprivacy.data.interactions import Interactions
from recprivacy.errors import ConfigError, DataError, NotFittedError

ITEMS = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0], [-3.0, 0.0]])
R = 1 / math.sqrt(2)


@pytest.fixture
def release() -> Interactions:
    # user 0 released {0, 1}; user 1 released {1}
    return Interactions(users=np.array([0, 0, 1]), items=np.array([0, 1, 1]), n_users=2, n_items=4)


def test_blind_scores_by_hand(release):
    scores = ReplacementRecoveryAttack(ITEMS, weight=0.5).fit(release).score([0])[0]
    # max cos to {0, 1}: item 2 -> 1/sqrt2, item 3 -> 0; profile (1, 1)/sqrt2: item 2 -> 1, item 3 -> -1/sqrt2
    assert scores[2] == pytest.approx(0.5 * R + 0.5 * 1.0, rel=1e-6)
    assert scores[3] == pytest.approx(-0.5 * R, rel=1e-6)
    assert np.isneginf(scores[:2]).all()


def test_informed_scores_by_hand(release):
    replacements = sp.csr_matrix((np.ones(1), ([0], [1])), shape=(2, 4))
    scores = ReplacementRecoveryAttack(ITEMS, informed=True, weight=0.5).fit(release, replacements).score([0])[0]
    # replacements {1}: item 2 -> 1/sqrt2, item 3 -> 0; kept {0}: item 2 -> 1/sqrt2, item 3 -> -1
    assert scores[2] == pytest.approx(R, rel=1e-6)
    assert scores[3] == pytest.approx(-0.5, rel=1e-6)
    # weight 0: the profile alone; weight 1: the replacement term alone
    only_profile = ReplacementRecoveryAttack(ITEMS, informed=True, weight=0.0).fit(release, replacements).score([0])[0]
    assert only_profile[3] == pytest.approx(-1.0)
    only_max = ReplacementRecoveryAttack(ITEMS, informed=True, weight=1.0).fit(release, replacements).score([0])[0]
    assert only_max[3] == pytest.approx(0.0, abs=1e-7)


def test_popularity_guess_and_recovery_metrics(release):
    popular = PopularityGuess().fit(release).score([1])[0]
    assert popular.tolist()[0] == 1.0 and np.isneginf(popular[1]) and popular[2] == 0.0
    truth = sp.csr_matrix((np.ones(1), ([0], [3])), shape=(2, 4))  # user 0's replaced original was item 3
    attack = ReplacementRecoveryAttack(ITEMS).fit(release)
    assert recovery_metrics(attack, truth, ks=(1,))["recall@1"] == 0.0  # item 2 ranks first
    result = recovery_metrics(attack, truth, ks=(2,))
    assert result["recall@2"] == 1.0 and result["n_users"] == 1


def test_attack_input_errors(release):
    with pytest.raises(ConfigError, match="weight"):
        ReplacementRecoveryAttack(ITEMS, weight=1.5)
    with pytest.raises(DataError, match="4 items"):
        ReplacementRecoveryAttack(ITEMS[:3]).fit(release)
    with pytest.raises(ConfigError, match="informed attacker needs"):
        ReplacementRecoveryAttack(ITEMS, informed=True).fit(release)
    with pytest.raises(NotFittedError):
        ReplacementRecoveryAttack(ITEMS).score([0])
