"""The synthetic release's recovery attack on a seeded sample of users (issue 33): the sampled
truth keeps exactly the chosen users' replaced originals, a sample at least as large as the
users changes nothing, and the attack's Recall@k is the per-user mean over the sample."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from recprivacy.attacks.recovery import ReplacementRecoveryAttack, recovery_metrics
from recprivacy.data.synthetic import make_synthetic
from recprivacy.defenses.upcsdg import UPCSDG, FrozenEmbeddings, PrivacyPreferences
from recprivacy.experiments.sampling import sample_users
from recprivacy.experiments.upcsdg.release import judged_recovery, recovery_truth


@pytest.fixture(scope="module")
def release():
    train = make_synthetic(n_users=40, n_items=80, n_interactions=800, seed=1)
    g = torch.Generator().manual_seed(1)
    features = FrozenEmbeddings(torch.randn(train.n_users, 8, generator=g), torch.randn(train.n_items, 8, generator=g), "random")
    model = UPCSDG(n_epochs=1, batch_users=8, seed=0, pool_size=None, noise="simulation")
    return model.fit(train, features, PrivacyPreferences.uniform(train.n_users, 0.4, 0.5)).generate(), features


def test_recovery_truth_keeps_the_sampled_users_rows(release):
    rel, _ = release
    full = rel.pairs_matrix("original_item")
    users = np.flatnonzero(np.diff(full.indptr) > 0)
    assert (recovery_truth(rel, None, 0) != full).nnz == 0 and (recovery_truth(rel, len(users), 0) != full).nnz == 0
    sampled = recovery_truth(rel, 7, seed=3)
    chosen = sample_users(users, 7, 3)
    assert np.array_equal(np.flatnonzero(np.diff(sampled.indptr) > 0), chosen)
    assert (sampled[chosen] != full[chosen]).nnz == 0


def test_judged_recovery_on_a_sample(release):
    rel, features = release
    attack = ReplacementRecoveryAttack(features.items).fit(rel.data)
    value, _, _ = judged_recovery(attack, rel, 10, max_users=7, seed=3)
    per_user = recovery_metrics(attack, recovery_truth(rel, 7, 3), ks=(10,), per_user=True)["recall@10"]
    assert len(per_user) == 7 and value.value == pytest.approx(float(np.mean(per_user)))
    everyone, _, _ = judged_recovery(attack, rel, 10)
    assert judged_recovery(attack, rel, 10, max_users=10**6)[0].value == everyone.value
