"""ALS (implicit): the new-user solve by hand, determinism, threads and bad input."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from recprivacy.data.interactions import Interactions
from recprivacy.errors import ConfigError
from recprivacy.models.als import ALS
from recprivacy.models.training import use_threads


def _blocks(n_users: int = 40, n_items: int = 20) -> Interactions:
    """Two user groups, each with 5 of the 10 items of its own block."""
    rng = np.random.default_rng(0)
    users = np.repeat(np.arange(n_users), 5)
    items = np.concatenate([rng.choice(10, 5, replace=False) + 10 * (u % 2) for u in range(n_users)])
    return Interactions(users=users, items=items, n_users=n_users, n_items=n_items)


def test_new_user_is_the_closed_form_minimiser():
    model = ALS(factors=4, regularization=0.5, alpha=3.0, iterations=5).fit(_blocks())
    history = Interactions(users=[0, 0, 1], items=[1, 3, 12], n_users=2, n_items=20)
    y = model.item_factors_.double().numpy()
    expected = []
    for items in ([1, 3], [12]):
        # x = (YᵀY + λI + Σ (c − 1) y yᵀ)⁻¹ Σ c y with c = α on the history
        lhs = y.T @ y + 0.5 * np.eye(4) + (3.0 - 1) * y[items].T @ y[items]
        expected.append(np.linalg.solve(lhs, 3.0 * y[items].sum(0)))
    scores = model.score_histories(history).double().numpy()
    np.testing.assert_allclose(scores, np.array(expected) @ y.T, rtol=1e-4, atol=1e-5)


def test_training_separates_the_blocks_and_is_seeded():
    data = _blocks()
    a = ALS(factors=4, regularization=0.1, alpha=5.0, seed=3).fit(data)
    b = ALS(factors=4, regularization=0.1, alpha=5.0, seed=3).fit(data)
    torch.testing.assert_close(a.score(np.arange(6)), b.score(np.arange(6)), rtol=0, atol=0)
    top = a.recommend(np.arange(40), k=3).numpy()
    assert ((top // 10) == (np.arange(40) % 2)[:, None]).mean() > 0.9  # the own block first


def test_threads_default_to_the_budget():
    model = ALS(factors=2, iterations=1).fit(_blocks())
    with use_threads(1):
        assert ALS()._threads() == 1
    assert ALS(threads=2)._threads() == 2
    assert model.model_.num_threads >= 1


@pytest.mark.parametrize("params", [{"factors": 0}, {"iterations": 1.5}, {"alpha": 0}, {"regularization": -1},
                                    {"threads": 0}])
def test_bad_parameters_raise_config_error(params):
    with pytest.raises(ConfigError, match="ALS"):
        ALS(**params)
