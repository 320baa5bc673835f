"""Protection randomness (issue 29): secure noise cannot be replayed from the published seed,
simulation noise repeats exactly, and every report says which of the two produced it."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch

from recprivacy.data.interactions import Interactions
from recprivacy.defenses.apm import make_defence
from recprivacy.defenses.dpsgd import DPSGD
from recprivacy.defenses.federated_dp import FeatureLDP
from recprivacy.errors import ConfigError
from recprivacy.experiments.runner import new_results
from recprivacy.config import load_config
from recprivacy.federated.models import make_federated_model
from recprivacy.federated.protocol import STREAMS, client_features, perturb_uploads
from recprivacy.privacy import LaplaceMechanism, NoiseSource, PrivacyStatement, perturb_features
from recprivacy.report.markdown import render_markdown

SIMULATION = NoiseSource("simulation", seed=7)


# --------------------------------------------------------------------------- the source


def test_simulation_streams_repeat_and_differ_from_each_other():
    assert SIMULATION.generator(1, 2).random() == NoiseSource("simulation", 7).generator(1, 2).random()
    assert SIMULATION.generator(1, 2).random() != SIMULATION.generator(2, 1).random()
    assert SIMULATION.generator("features").random() != SIMULATION.generator("noise").random()
    assert SIMULATION.generator().random() == np.random.default_rng(7).random()  # no stream: the seed itself
    a = torch.randn(5, generator=SIMULATION.torch_generator("noise"))
    assert torch.equal(a, torch.randn(5, generator=NoiseSource("simulation", 7).torch_generator("noise")))
    assert not torch.equal(a, torch.randn(5, generator=SIMULATION.torch_generator("other")))


def test_secure_generators_are_fresh_on_every_call():
    secure = NoiseSource()
    assert secure.generator(1, 2).random(4).tolist() != secure.generator(1, 2).random(4).tolist()
    assert not torch.equal(torch.randn(4, generator=secure.torch_generator()), torch.randn(4, generator=secure.torch_generator()))


def test_secure_laplace_draws_have_the_mechanisms_moments():
    """100k Laplace(0, b = 2) draws: mean within 5 standard errors of 0, variance 2 b^2 within 3%."""
    mech = LaplaceMechanism(epsilon=0.5, sensitivity=1.0)
    draws = np.concatenate([mech.perturb(np.zeros(10_000), NoiseSource().generator()) for _ in range(10)])
    assert abs(draws.mean()) < 5 * math.sqrt(2 * mech.scale**2 / len(draws))
    assert draws.var() == pytest.approx(2 * mech.scale**2, rel=0.03)
    gauss = torch.randn(100_000, generator=NoiseSource().torch_generator(), dtype=torch.float64)
    assert abs(float(gauss.mean())) < 5 / math.sqrt(len(gauss)) and float(gauss.var()) == pytest.approx(1.0, rel=0.03)


def test_simulation_needs_a_seed_and_modes_are_checked():
    with pytest.raises(ConfigError, match="simulation mode needs a seed"):
        NoiseSource("simulation")
    with pytest.raises(ConfigError, match="noise: expected 'secure' or 'simulation', got 'seeded'"):
        NoiseSource("seeded", 1)
    with pytest.raises(ConfigError, match="DPSGD.noise"):
        DPSGD.from_params(noise="fixed")


# --------------------------------------------------------------------------- mechanisms


def _features(n: int = 400) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({"age": rng.integers(18, 60, n), "gender": rng.choice(["F", "M"], n),
                         "occupation": rng.choice(["a", "b", "c", "d"], n)})


def _ldp(source: NoiseSource) -> np.ndarray:
    return perturb_features(_features(), ["age"], ["gender", "occupation"], 1.0, source.generator("user features")).to_numpy()


def test_feature_ldp_secure_differs_and_cannot_be_replayed_simulation_repeats():
    np.testing.assert_array_equal(_ldp(SIMULATION), _ldp(NoiseSource("simulation", 7)))
    secure = _ldp(NoiseSource())
    assert not np.array_equal(secure, _ldp(NoiseSource()))
    assert not np.array_equal(secure, _ldp(SIMULATION))  # the published seed does not give the reports back


def _sequences(n_users: int = 12, n_items: int = 15, length: int = 8) -> Interactions:
    rng = np.random.default_rng(1)
    items = np.stack([rng.choice(n_items, size=length, replace=False) for _ in range(n_users)]).ravel()
    return Interactions(np.repeat(np.arange(n_users), length), items, n_users, n_items,
                        timestamps=np.tile(np.arange(length), n_users))


def _dpsgd_weights(noise: str) -> torch.Tensor:
    model = DPSGD.from_params(eps2=5.0, delta=1e-3, hidden=8, user_mode="id", user_dim=4, n_epochs=1, batch_size=16,
                       seed=3, noise=noise)
    return model.fit(_sequences()).net_.item_emb.weight.detach().clone()


def test_dpsgd_gradient_noise_secure_differs_simulation_repeats():
    assert torch.equal(_dpsgd_weights("simulation"), _dpsgd_weights("simulation"))
    assert not torch.equal(_dpsgd_weights("secure"), _dpsgd_weights("secure"))


# --------------------------------------------------------------------------- federated


def _uploads(noise: NoiseSource) -> dict[str, torch.Tensor]:
    model = make_federated_model("fedrec", n_items=6, n_features=3, dim=4)
    uploads = {s.name: torch.zeros((2, *s.shape)) for s in model.shared_specs()}
    return perturb_uploads(uploads, model, make_defence("ldp", epsilon=1.0), np.array([3, 5]), noise, round_=2)


def test_federated_per_user_ldp_stream_secure_differs_simulation_repeats():
    sim, again = _uploads(SIMULATION), _uploads(NoiseSource("simulation", 7))
    assert all(torch.equal(sim[k], again[k]) for k in sim)
    first = [_uploads(NoiseSource()), _uploads(NoiseSource())]
    assert not any(torch.equal(first[0][k], first[1][k]) for k in sim)
    # simulation is the documented per-(seed, round, user, stream) generator, so anyone can replay it
    replay = LaplaceMechanism(1.0, 1.0).perturb(np.zeros(1), np.random.default_rng([7, 2, 3, STREAMS["noise"]]))
    assert float(sim[next(iter(sim))].reshape(2, -1)[0, 0]) == pytest.approx(float(replay[0]), rel=1e-5)


def test_federated_feature_ldp_uses_the_noise_source():
    x = np.tile([0.5, 1.0, 0.0], (50, 1))
    ldp = FeatureLDP(1.0, {"gender": (1, 2)})
    users = np.arange(50)
    np.testing.assert_array_equal(client_features(x, users, SIMULATION, ldp), client_features(x, users, NoiseSource("simulation", 7), ldp))
    assert not np.array_equal(client_features(x, users, NoiseSource(), ldp), client_features(x, users, NoiseSource(), ldp))


# --------------------------------------------------------------------------- reporting


def test_statements_and_results_name_the_noise():
    statement = PrivacyStatement(1.0, 0.0, "basic", "one user", "once", "local")
    assert "noise" not in str(statement)
    stamped = SIMULATION.stamp({"features": statement})["features"]
    assert "  noise:      simulation (seeded, not protection): seed 7, for experiments only" in str(stamped)
    assert stamped.to_dict()["noise"] == stamped.noise
    assert "secure: operating-system entropy" in str(NoiseSource().stamp(statement))
    dpsgd = DPSGD.from_params(hidden=8, user_mode="id", user_dim=4, n_epochs=1, batch_size=16, seed=1,
                              noise="simulation").fit(_sequences()).privacy_statement()
    assert len(dpsgd.parts) == 2  # every guarantee of the statement names the noise, the headline too
    assert all(s.noise.startswith("simulation (seeded, not protection)") for s in (dpsgd, *dict(dpsgd.parts).values()))


def test_results_json_and_report_record_the_mode():
    for mode, words in (("secure", "secure: operating-system entropy"), ("simulation", "simulation (seeded, not protection)")):
        results = new_results(load_config(base={"name": "x", "seed": 2, "noise": mode}))
        doc = results.to_document()
        assert doc["noise"].startswith(words) and doc["config"]["noise"] == mode
        report = render_markdown(doc)
        assert f"privacy noise {doc['noise']}" in report.splitlines()[2]
        assert f"Privacy noise: {doc['noise']}." in report
