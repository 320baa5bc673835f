"""DIPSGNN: the noisy aggregation layer (Eqs. 6-7), calibration (Thm 4.2), features (Alg. 3),
the compatibility option for the authors' sigma-squared noise, statements and bad input."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch

from recprivacy.data.interactions import Interactions
from recprivacy.defenses.dipsgnn import DIPSGNN, NoisyAggregationNet
from recprivacy.errors import ConfigError, DataError
from recprivacy.models.srgnn import UserEncoder
from recprivacy.privacy import compose_gaussian, dipsgnn_epsilon, encode_features

DELTA = 2.5e-7
ML1M_CATEGORIES = {"gender": ["F", "M"], "age": [1, 18, 25, 35, 45, 50, 56], "occupation": list(range(21))}


def layer(C: float = 0.3, std: float = 0.0, at_inference: bool = True, seed: int = 0) -> NoisyAggregationNet:
    torch.manual_seed(0)
    return NoisyAggregationNet(10, 6, 1, UserEncoder(4, 3, None), C, std, at_inference, torch.Generator().manual_seed(seed))


def test_rows_are_rescaled_to_norm_exactly_C_even_tiny_ones() -> None:
    h = torch.randn(2, 5, 9) * torch.tensor([1e-8, 1e-3, 1.0, 10.0, 1e4])[None, :, None]
    identity = torch.eye(5).expand(2, 5, 5)
    _, out, hidden = layer(C=0.2).aggregate(h, identity, identity)
    assert torch.allclose(out.norm(dim=-1), torch.full((2, 5), 0.2), atol=1e-6)
    assert torch.allclose(hidden, out[..., :6])  # the GRU reads the normalised item part


def test_one_count_changes_A_Hbar_by_exactly_C_in_frobenius_norm() -> None:
    rng = np.random.default_rng(0)
    for C in (0.1, 0.2, 1.0):
        a = torch.as_tensor(rng.integers(0, 3, size=(1, 6, 6)), dtype=torch.float32)
        a2 = a.clone()
        a2[0, 2, 4] += 1.0
        h = torch.randn(1, 6, 9)
        m = layer(C=C)
        _, out, _ = m.aggregate(h, a, a)
        _, out2, _ = m.aggregate(h, a2, a2)
        assert (out2 - out).norm().item() == pytest.approx(C, rel=1e-5)


def test_noise_has_std_sigma_fresh_for_each_direction_and_none_at_sigma_zero() -> None:
    m = layer(C=0.5, std=0.3).train()
    h, a = torch.randn(50, 8, 9), torch.rand(50, 8, 8)
    clean = a @ (torch.nn.functional.normalize(h, dim=-1) * 0.5)
    m_in, m_out, _ = m.aggregate(h, a, a)
    noise_in, noise_out = m_in - clean, m_out - clean
    assert noise_in.std().item() == pytest.approx(0.3, rel=0.03) and abs(noise_in.mean().item()) < 0.01
    assert abs(np.corrcoef(noise_in.ravel(), noise_out.ravel())[0, 1]) < 0.02  # independent draws
    quiet = layer(C=0.5, std=0.0)
    assert torch.equal(quiet.aggregate(h, a, a)[1], quiet.aggregate(h, a, a)[1])


def test_the_noisy_messages_divided_by_C_do_not_depend_on_C() -> None:
    """Theorem 4.2's sigma grows linearly in C and the rows have norm C, so A H̄ + noise is C times
    one C-free quantity: C sets the scale the GRU reads, not the signal-to-noise ratio (Fig. 6)."""
    h, a = torch.randn(3, 6, 9), torch.as_tensor(np.random.default_rng(1).integers(0, 3, (3, 6, 6)), dtype=torch.float32)
    scaled = []
    for C in (0.2, 0.6, 1.0):
        sigma = DIPSGNN.from_params(C=C).sigma_
        assert sigma / C == pytest.approx(0.237407 / 0.2, rel=1e-5)
        m_in, m_out, hidden = layer(C=C, std=sigma, seed=7).train().aggregate(h, a, a)
        scaled.append(torch.cat([m_in, m_out, hidden], dim=-1) / C)
    for other in scaled[1:]:
        assert torch.allclose(other, scaled[0], atol=1e-5)


def test_only_noisy_scoring_keeps_its_batches_in_sample_order() -> None:
    assert layer(std=0.5).scores_are_random() and not layer(std=0.5, at_inference=False).scores_are_random()
    assert not layer(std=0.0).scores_are_random()


def test_noise_at_inference_flag_controls_the_scoring_passes() -> None:
    h, a = torch.randn(2, 4, 9), torch.rand(2, 4, 4)
    off = layer(std=0.5, at_inference=False).eval()
    assert torch.equal(off.aggregate(h, a, a)[1], off.aggregate(h, a, a)[1])
    on = layer(std=0.5, at_inference=True).eval()
    assert not torch.equal(on.aggregate(h, a, a)[1], on.aggregate(h, a, a)[1])


@pytest.mark.parametrize("T, C, sigma", [(1, 0.2, 0.237407), (1, 0.5, 0.593517), (5, 0.2, 0.530857)])
def test_sigma_follows_theorem_4_2_and_legacy_mode_uses_sigma_squared(T: int, C: float, sigma: float) -> None:
    model = DIPSGNN.from_params(C=C, n_steps=T)
    assert model.sigma_ == pytest.approx(sigma, abs=6e-7) and model.noise_std == model.sigma_
    legacy = DIPSGNN.from_params(C=C, n_steps=T, noise_std_mode="sigma_squared_legacy")
    assert legacy.noise_std == pytest.approx(model.sigma_**2, rel=1e-12) == pytest.approx(sigma**2, rel=1e-5)
    assert DIPSGNN.from_params(eps2=math.inf).noise_std == 0.0


@pytest.mark.parametrize(
    "bad, message",
    [({"eps1": 0.0}, "eps1"), ({"eps2": -1.0}, "eps2"), ({"delta": 1.0}, "delta"), ({"delta": 0.0}, "delta"),
     ({"C": 0.0}, "C must"), ({"noise_std_mode": "sigma2"}, "noise_std_mode"), ({"adjacency": "degree"}, "adjacency must be 'count'")],
)
def test_bad_privacy_parameters_are_one_line_config_errors(bad: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as err:
        DIPSGNN.from_params(**bad)
    assert "\n" not in str(err.value)


# --------------------------------------------------------------------------- fitted models


def tiny_data(age_of_user0: int = 25) -> Interactions:
    rng = np.random.default_rng(1)
    n_users, n_items, length = 12, 15, 8
    items = np.stack([rng.choice(n_items, size=length, replace=False) for _ in range(n_users)]).ravel()
    features = pd.DataFrame({
        "gender": rng.choice(["F", "M"], size=n_users),
        "age": [age_of_user0] + list(rng.choice([1, 18, 25, 35], size=n_users - 1)),
        "occupation": rng.integers(0, 21, size=n_users),
    })
    return Interactions(np.repeat(np.arange(n_users), length), items, n_users, n_items,
                        timestamps=np.tile(np.arange(length), n_users), user_features=features)


def fit(data: Interactions | None = None, **params) -> DIPSGNN:
    params = {"hidden": 8, "user_dim": 4, "n_epochs": 2, "batch_size": 16, "user_categories": ML1M_CATEGORIES, **params}
    return DIPSGNN.from_params(**params).fit(data if data is not None else tiny_data())


def test_features_are_perturbed_once_per_user_and_clean_at_infinite_budget() -> None:
    data = tiny_data()
    clean = encode_features(data.user_features, [], ["gender", "age", "occupation"], categories=ML1M_CATEGORIES)
    assert clean.shape[1] == 30  # d0 = 2 + 7 + 21 on ML-1M
    private = fit(data)
    assert private.user_features_.shape == clean.shape
    assert not np.array_equal(private.user_features_.to_numpy(), clean.to_numpy())
    buffer = private.net_.user.features.numpy()
    assert np.array_equal(buffer, private.user_features_.to_numpy(dtype=np.float32))  # one vector per user, reused
    assert np.array_equal(fit(data, eps1=math.inf).user_features_.to_numpy(), clean.to_numpy())


def test_a_feature_outside_its_declared_domain_is_a_data_error() -> None:
    with pytest.raises(DataError, match="age"):
        fit(tiny_data(age_of_user0=99))


def test_statements_give_the_nominal_eps2_and_the_honest_composition() -> None:
    model = fit()
    statement = model.privacy_statement()
    features = statement.part("user features")
    assert features.epsilon == 20.0 and features.setting == "local"
    assert statement.part("edges, one forward pass (paper)").epsilon == pytest.approx(5.0)
    reuse = 8 - 2  # training sequences have 8 items: the first transition is in prefixes of length 2..7
    assert model.edge_reuse() == reuse
    releases = reuse * len(model.history_.losses) * 1 * 2
    composed = statement.part("edges, whole training run").epsilon
    assert composed == pytest.approx(compose_gaussian(model.sigma_ / 0.2, releases, DELTA, "rdp"))
    assert composed > 5.0 and statement.epsilon == composed  # the headline is the whole run
    assert [name for name, _ in statement.parts] == ["user features", "edges, one forward pass (paper)",
                                                     "edges, whole training run"]


def test_edge_reuse_counts_whole_sequences_scored_for_validation() -> None:
    from recprivacy.data.split import temporal_split

    train, valid = temporal_split(tiny_data(), leave_last=1)  # 7 training items per user
    model = DIPSGNN.from_params(hidden=8, user_dim=4, n_epochs=1, user_categories=ML1M_CATEGORIES).fit(train, valid)
    assert model.edge_reuse() == (7 - 2) + 1


def test_legacy_mode_reports_the_epsilon_its_smaller_noise_gives() -> None:
    model = fit(noise_std_mode="sigma_squared_legacy", noise_at_inference=False)
    per_pass = model.privacy_statement().part("edges, one forward pass (paper)")
    assert per_pass.epsilon == pytest.approx(dipsgnn_epsilon(0.237407**2, DELTA, 0.2, 1), rel=1e-4)
    assert per_pass.epsilon > 25 and "does not hold" in per_pass.notes[0]
    assert any("noise_at_inference=False" in n for n in model.privacy_statement().part("edges, whole training run").notes)


def test_dipsgnn_training_reduces_the_loss_with_the_default_noise() -> None:
    model = fit(n_epochs=4, lr_milestones=())
    assert model.history_.losses[-1] < model.history_.losses[0]
    assert model.score(np.arange(3)).shape == (3, 15)
