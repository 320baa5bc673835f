"""BPR-MF: the loss and the LearnBPR step by hand, learning a planted structure, early stopping,
determinism."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from recprivacy.data.interactions import Interactions
from recprivacy.data.split import random_split
from recprivacy.errors import ConfigError
from recprivacy.metrics.ranking import evaluate
from recprivacy.models.bpr import BPRMF, bpr_loss, bpr_sgd_step
from recprivacy.models.lfm import FactorTables


def test_bpr_loss_value():
    loss = bpr_loss(torch.tensor([2.0, 0.0]), torch.tensor([0.5, 1.0]))
    expected = (math.log(1 + math.exp(-1.5)) + math.log(1 + math.exp(1.0))) / 2
    assert float(loss) == pytest.approx(expected, rel=1e-6)


def test_batch_loss_on_fixed_embeddings_by_hand():
    model = BPRMF(n_factors=2, reg=0.1)
    model.module_ = FactorTables(2, 3, 2, 0.1, torch.Generator().manual_seed(0))
    with torch.no_grad():
        model.module_.user.copy_(torch.tensor([[1.0, 0.0], [0.0, 1.0]]))
        model.module_.item.copy_(torch.tensor([[1.0, 1.0], [0.0, 2.0], [-1.0, 0.0]]))
    loss = model._batch_loss(torch.tensor([0, 1]), torch.tensor([0, 1]), torch.tensor([2, 0]))
    # s_pos = (1, 2), s_neg = (-1, 1); ego L2 = 1/2 (1 + 1 + 2 + 4 + 1 + 2) = 5.5 over B = 2
    bpr = (math.log(1 + math.exp(-2.0)) + math.log(1 + math.exp(-1.0))) / 2
    assert loss.item() == pytest.approx(bpr + 0.1 * 5.5 / 2, rel=1e-6)


def test_sgd_step_by_hand():
    """One triple, d = 2: x = p·(q_i − q_j) = 1·(1 − (−1)) = 2, σ(−2) = 0.1192."""
    user, item = torch.tensor([[1.0, 0.0]]), torch.tensor([[1.0, 1.0], [-1.0, 0.0]])
    loss = bpr_sgd_step(user, item, torch.tensor([0]), torch.tensor([0]), torch.tensor([1]), lr=0.5, reg=0.1)
    s = 1 / (1 + math.exp(2.0))
    assert loss == pytest.approx(math.log(1 + math.exp(-2.0)) + 0.05 * (1 + 2 + 1), rel=1e-6)
    # p ← p + α(σ(−x)(q_i − q_j) − λp); q_i ← q_i + α(σ(−x)p − λq_i); q_j ← q_j + α(−σ(−x)p − λq_j)
    torch.testing.assert_close(user, torch.tensor([[1 + 0.5 * (2 * s - 0.1), 0.5 * s]]))
    torch.testing.assert_close(item, torch.tensor([[1 + 0.5 * (s - 0.1), 1 - 0.05], [-1 + 0.5 * (-s + 0.1), 0.0]]))


def test_sgd_step_is_gradient_descent_on_the_batch_loss_with_repeated_rows():
    """Summing LearnBPR's per-triple updates, a row drawn twice moving twice, is one gradient
    step of size α·B on the mean batch loss ``L`` (module docstring)."""
    model = BPRMF(n_factors=3, reg=0.1)
    model.module_ = FactorTables(2, 4, 3, 0.5, torch.Generator().manual_seed(1))
    users, pos, neg = torch.tensor([0, 1, 0]), torch.tensor([1, 1, 2]), torch.tensor([3, 2, 1])
    loss = model._batch_loss(users, pos, neg)
    loss.backward()
    tables = model.module_
    user, item = tables.user.detach().clone(), tables.item.detach().clone()
    value = bpr_sgd_step(user, item, users, pos, neg, lr=0.2, reg=0.1)
    assert value == pytest.approx(loss.item(), rel=1e-6)
    torch.testing.assert_close(user, tables.user.detach() - 0.2 * 3 * tables.user.grad)
    torch.testing.assert_close(item, tables.item.detach() - 0.2 * 3 * tables.item.grad)


def _groups(n_users: int = 60, n_items: int = 30, per_user: int = 8) -> Interactions:
    """Three user groups, each drawing its items from its own block of 10 items."""
    rng = np.random.default_rng(1)
    users = np.repeat(np.arange(n_users), per_user)
    items = np.concatenate([rng.choice(10, per_user, replace=False) + 10 * (u % 3) for u in range(n_users)])
    return Interactions(users=users, items=items, n_users=n_users, n_items=n_items)


def test_defaults_recover_the_planted_blocks():
    """Each user has seen 8 of its block's 10 items: the two it has not are its top two."""
    data = _groups()
    model = BPRMF(n_factors=8, n_epochs=40).fit(data)
    top = model.recommend(np.arange(data.n_users), k=2).numpy()
    own_block = top // 10 == (np.arange(data.n_users) % 3)[:, None]
    assert own_block.mean() >= 0.95


def test_early_stopping_restores_the_best_validation_weights():
    train, valid = random_split(_groups(), ratios=(0.75, 0.25), seed=0)
    model = BPRMF(n_factors=8, n_epochs=30, batch_size=64, eval_every=2, patience=3).fit(train, valid)
    history = model.history_
    assert history.best_score == max(score for _, score in history.valid)
    assert evaluate(model, valid, ks=(20,))["recall@20"] == pytest.approx(history.best_score)
    assert history.best_score > 0.5  # 10-item blocks: the block's unseen items rank first


def test_same_seed_same_scores():
    data = _groups()
    a = BPRMF(n_factors=4, n_epochs=3, batch_size=32, seed=7).fit(data).score(np.arange(5))
    b = BPRMF(n_factors=4, n_epochs=3, batch_size=32, seed=7).fit(data).score(np.arange(5))
    c = BPRMF(n_factors=4, n_epochs=3, batch_size=32, seed=8).fit(data).score(np.arange(5))
    assert torch.equal(a, b)
    assert not torch.equal(a, c)


def test_training_keeps_the_thread_setting():
    before = torch.get_num_threads()
    BPRMF(n_factors=2, n_epochs=1).fit(_groups())
    assert torch.get_num_threads() == before


@pytest.mark.parametrize("params", [{"n_epochs": 0}, {"patience": 0}, {"init_std": 0.0}, {"lr": "fast"}])
def test_bad_parameters_raise_config_error(params):
    with pytest.raises(ConfigError, match="BPRMF"):
        BPRMF(**params)
