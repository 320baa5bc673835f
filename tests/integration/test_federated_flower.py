"""The Flower engine reproduces the in-process simulator (same seed, same rounds)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from recprivacy.data.interactions import Interactions
from recprivacy.defenses.apm import make_defence
from recprivacy.defenses.federated_dp import BASELINES, make_baseline
from recprivacy.federated.features import user_features
from recprivacy.federated.flower import run_loopback
from recprivacy.federated.models import make_federated_model
from recprivacy.federated.protocol import LocalTraining
from recprivacy.federated.simulator import FederatedSimulator

pytest.importorskip("flwr", reason="Flower is in the test extra; install recprivacy[test]")


def _tiny() -> Interactions:
    rng = np.random.default_rng(0)
    users = np.repeat(np.arange(5), 6)
    items = np.concatenate([rng.choice(12, 6, replace=False) for _ in range(5)])
    return Interactions(users, items, 5, 12, ratings=rng.integers(1, 6, 30).astype(float))


@pytest.mark.parametrize("method", ["none", "apm", "fgerai", "fdpmf"])
def test_flower_loopback_run_equals_the_simulator(method):
    train = _tiny()
    feats = user_features(train)
    baseline = make_baseline(method, feats.blocks, eps_dpmf=5.0) if method in BASELINES else None
    model = make_federated_model((baseline and baseline.model) or "fedrec", train.n_items, feats.dim, 4)
    # the Taylor objective's gradient grows with the logit: the baselines take a smaller step and init
    local = LocalTraining(lr=0.01 if baseline else 0.05, local_epochs=2, batch_size=4, n_negatives=2)
    defence = None if baseline else make_defence(method)
    # the two engines draw the same noise only when it is seeded (simulation mode)
    extra = {"objective": baseline.objective, "feature_privacy": baseline.features} if baseline else {}
    extra["noise"] = "simulation"
    sim = FederatedSimulator(model, train, feats.x, local, clients_per_round=3, seed=11, defence=defence,
                             init_std=0.1 if baseline else 0.3, **extra)
    initial = {k: v.clone() for k, v in sim.params.items()}
    private = {k: v.clone() for k, v in sim.private.items()}
    seen = {}
    theta = run_loopback(model, initial, feats.x, train.to_csr(), rounds=3, n_clients=3, local=local, seed=11,
                         defence=defence, on_round=lambda t, users, up: seen.setdefault(t, users), private=private, **extra)
    for _ in range(3):
        users = sim.run_round().users
        assert np.array_equal(np.sort(users), seen[sim.round])
    for name, value in sim.params.items():
        assert torch.isfinite(value).all()
        torch.testing.assert_close(theta[name], value, rtol=1e-5, atol=1e-6)
        assert not torch.equal(value, initial[name])
