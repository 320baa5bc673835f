"""LFM: the SGD update rule by hand, sampling, determinism and bad input."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from recprivacy.data.interactions import Interactions
from recprivacy.errors import ConfigError
from recprivacy.models.lfm import LFM, FactorTables, sgd_step


def _tables(p: list[list[float]], q: list[list[float]]) -> FactorTables:
    tables = FactorTables(len(p), len(q), len(p[0]), 0.1, torch.Generator().manual_seed(0))
    with torch.no_grad():
        tables.user.copy_(torch.tensor(p))
        tables.item.copy_(torch.tensor(q))
    return tables


def test_one_sgd_step_matches_the_update_rule_by_hand():
    tables = _tables([[1.0, 0.0]], [[0.5, 1.0]])
    loss = sgd_step(tables, torch.tensor([0]), torch.tensor([0]), torch.tensor([1.0]), lr=0.1, reg=0.1)
    # e = 1 - 0.5 = 0.5; p += 0.1 (0.5 q - 0.1 p); q += 0.1 (0.5 p - 0.1 q)
    torch.testing.assert_close(tables.user.data, torch.tensor([[1.015, 0.05]]))
    torch.testing.assert_close(tables.item.data, torch.tensor([[0.545, 0.99]]))
    assert loss == pytest.approx(0.5 * (0.25 + 0.1 * (1.0 + 1.25)))


def test_a_batch_sums_the_per_sample_steps_from_the_old_values():
    p, q = [[1.0, 0.0]], [[0.5, 1.0], [-1.0, 2.0]]
    batch = _tables(p, q)
    sgd_step(batch, torch.tensor([0, 0]), torch.tensor([0, 1]), torch.tensor([1.0, 0.0]), lr=0.1, reg=0.1)
    deltas = []
    for item, target in ((0, 1.0), (1, 0.0)):
        single = _tables(p, q)
        sgd_step(single, torch.tensor([0]), torch.tensor([item]), torch.tensor([target]), lr=0.1, reg=0.1)
        deltas.append(single.user.data - torch.tensor(p))
    torch.testing.assert_close(batch.user.data, torch.tensor(p) + deltas[0] + deltas[1])


def _blocks() -> Interactions:
    """Two groups of 10 users; each user has 6 of the 10 items of its group's block."""
    rng = np.random.default_rng(0)
    users, items = [], []
    for u in range(20):
        block = 10 * (u // 10)
        chosen = rng.choice(10, size=6, replace=False) + block
        users += [u] * 6
        items += chosen.tolist()
    return Interactions(users=users, items=items, n_users=20, n_items=20, ratings=np.ones(len(users)) * 4)


def test_training_lowers_the_loss_and_separates_the_blocks():
    model = LFM(n_factors=8, n_epochs=30, lr=0.05, batch_size=16).fit(_blocks())
    assert model.history_.losses[-1] < model.history_.losses[0]
    scores = model.score(np.arange(20)).numpy()
    own = np.where(np.arange(20)[:, None] // 10 == np.arange(20)[None, :] // 10, scores, np.nan)
    other = np.where(np.isnan(own), scores, np.nan)
    assert np.nanmean(own) > np.nanmean(other) + 0.3


def test_same_seed_same_factors_other_seed_different():
    data = _blocks()
    a = LFM(n_factors=4, n_epochs=2, seed=3).fit(data).user_factors_
    b = LFM(n_factors=4, n_epochs=2, seed=3).fit(data).user_factors_
    c = LFM(n_factors=4, n_epochs=2, seed=4).fit(data).user_factors_
    assert torch.equal(a, b)
    assert not torch.equal(a, c)


def test_rating_target_fits_ratings_and_needs_them():
    data = _blocks()
    model = LFM(n_factors=4, n_epochs=40, lr=0.05, reg=0.0, target="rating", batch_size=8).fit(data)
    seen = model.score(np.arange(20)).numpy()[data.users, data.items]
    assert abs(seen.mean() - 4.0) < 0.5
    with pytest.raises(ConfigError, match="needs ratings"):
        LFM(target="rating").fit(Interactions(users=[0], items=[0], n_users=1, n_items=2))


@pytest.mark.parametrize(
    "params", [{"n_factors": 0}, {"lr": 0}, {"reg": -1.0}, {"neg_ratio": -1}, {"target": "clicks"}, {"batch_size": 1.5}]
)
def test_bad_parameters_raise_config_error(params):
    with pytest.raises(ConfigError, match="LFM"):
        LFM(**params)
