"""The Flower simulation engine reproduces the in-process simulator (seeded ``noise: simulation``):
the protocol core on tiny data (the whole study on the simulation engine: ``test_cli_engine.py``; on
a deployment: ``tests/realdata/test_flower_coat.py``). What happens when a deployment loses a
SuperNode or is stopped by a signal: ``test_flower_deployment.py``."""

from __future__ import annotations


import numpy as np
import pytest
import torch

from recprivacy.data.interactions import Interactions
from recprivacy.defenses.apm import make_defence
from recprivacy.defenses.federated_dp import BASELINES, make_baseline
from recprivacy.federated.features import user_features
from recprivacy.federated.models import make_federated_model
from recprivacy.federated.protocol import LocalTraining

pytest.importorskip("flwr", reason="Flower is in the test extra; install recprivacy[test]")
from recprivacy.federated.engines import Method, app_spec  # noqa: E402
from recprivacy.federated.flower_app.device import devices  # noqa: E402
from recprivacy.federated.flower_app.run import run_simulation_engine  # noqa: E402
from recprivacy.federated.simulator import FederatedSimulator  # noqa: E402

needs_ray = pytest.mark.skipif(__import__("importlib").util.find_spec("ray") is None, reason="flower-sim needs flwr[simulation]")


def _tiny() -> Interactions:
    rng = np.random.default_rng(0)
    users = np.repeat(np.arange(5), 6)
    items = np.concatenate([rng.choice(12, 6, replace=False) for _ in range(5)])
    return Interactions(users, items, 5, 12, ratings=rng.integers(1, 6, 30).astype(float))


def _tiny_sim(method: str, n_clients: int = 3) -> tuple[FederatedSimulator, Method]:
    train = _tiny()
    feats = user_features(train)
    baseline = make_baseline(method, feats.blocks, eps_dpmf=5.0) if method in BASELINES else None
    model = make_federated_model((baseline and baseline.model) or "fedrec", train.n_items, feats.dim, 4)
    # the Taylor objective's gradient grows with the logit: the baselines take a smaller step and init
    local = LocalTraining(lr=0.01 if baseline else 0.05, local_epochs=2, batch_size=4, n_negatives=2)
    extra = {"objective": baseline.objective, "feature_privacy": baseline.features} if baseline else {}
    sim = FederatedSimulator(model, train, feats.x, local, clients_per_round=n_clients, seed=11,
                             defence=None if baseline else make_defence(method), init_std=0.1 if baseline else 0.3,
                             noise="simulation", **extra)
    return sim, Method(method, {"eps_dpmf": 5.0} if method in BASELINES else {}, feats.blocks)


@needs_ray
@pytest.mark.ray  # Flower's simulation engine starts a local Ray instance
@pytest.mark.parametrize("method", ["apm", "fgerai", "fdpmf"])
def test_flower_simulation_engine_equals_the_simulator(method):
    sim, spec_method = _tiny_sim(method)
    # waves of 2 nodes: the 3 sampled devices of a round train in two waves, as in a deployment
    log = run_simulation_engine(app_spec(sim, spec_method, 3, (), False, wave_size=2), devices(sim.raw_features, sim.train_csr))
    for t in range(1, 4):
        assert np.array_equal(np.sort(sim.run_round().users), log.users[t])
    for name, value in sim.params.items():
        torch.testing.assert_close(log.final[name], value, rtol=0, atol=1e-6)
