"""BPR-MF: the loss on fixed embeddings by hand, early stopping, determinism."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from recprivacy.data.interactions import Interactions
from recprivacy.data.split import random_split
from recprivacy.errors import ConfigError
from recprivacy.metrics.ranking import evaluate
from recprivacy.models.bpr import BPRMF, bpr_gradients, bpr_loss
from recprivacy.models.lfm import FactorTables
from recprivacy.models.rowwise import RowAdam, row_sums


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


def test_closed_form_gradients_equal_autograd_with_repeated_rows():
    model = BPRMF(n_factors=3, reg=0.1)
    model.module_ = FactorTables(2, 4, 3, 0.5, torch.Generator().manual_seed(1))
    users, pos, neg = torch.tensor([0, 1, 0]), torch.tensor([1, 1, 2]), torch.tensor([3, 2, 1])
    loss = model._batch_loss(users, pos, neg)
    loss.backward()
    items = torch.cat([pos, neg])
    with torch.no_grad():
        value, grad_u, grad_q = bpr_gradients(model.module_.user[users], model.module_.item[items], 0.1)
    assert value == pytest.approx(loss.item(), rel=1e-6)
    torch.testing.assert_close(model.module_.user.grad, torch.zeros(2, 3).index_add_(0, users, grad_u))
    torch.testing.assert_close(model.module_.item.grad, torch.zeros(4, 3).index_add_(0, items, grad_q))


def test_row_sums_add_the_repeats():
    rows, sums = row_sums(torch.tensor([2, 0, 2]), torch.tensor([[1.0], [2.0], [3.0]]))
    assert rows.tolist() == [0, 2] and sums.tolist() == [[2.0], [4.0]]


def test_row_adam_is_adam_on_the_touched_rows_only():
    table = torch.tensor([[1.0, -1.0], [0.5, 2.0], [3.0, 0.0]])
    reference = torch.nn.Parameter(table[:2].clone())
    dense = torch.optim.Adam([reference], lr=0.1)
    rowwise = RowAdam([table], lr=0.1)
    for grad in (torch.tensor([[0.3, -0.2], [1.0, 0.5]]), torch.tensor([[-0.1, 0.4], [0.2, 0.2]])):
        reference.grad = grad.clone()
        dense.step()
        # rows 0 and 1 each get half of their gradient twice (repeats are summed); row 2 none
        rowwise.step([(torch.tensor([1, 0, 1, 0]), torch.cat([grad[[1, 0]] / 2, grad[[1, 0]] / 2]))])
    torch.testing.assert_close(table[:2], reference.detach())
    assert table[2].tolist() == [3.0, 0.0]


def _groups(n_users: int = 60, n_items: int = 30, per_user: int = 8) -> Interactions:
    """Three user groups, each drawing its items from its own block of 10 items."""
    rng = np.random.default_rng(1)
    users = np.repeat(np.arange(n_users), per_user)
    items = np.concatenate([rng.choice(10, per_user, replace=False) + 10 * (u % 3) for u in range(n_users)])
    return Interactions(users=users, items=items, n_users=n_users, n_items=n_items)


def test_early_stopping_restores_the_best_validation_weights():
    train, valid = random_split(_groups(), ratios=(0.75, 0.25), seed=0)
    model = BPRMF(n_factors=8, lr=0.01, n_epochs=30, batch_size=64, eval_every=2, patience=3).fit(train, valid)
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
