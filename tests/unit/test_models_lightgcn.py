"""LightGCN: normalised adjacency and propagation by hand, the custom backward, training."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from recprivacy.data.interactions import Interactions
from recprivacy.errors import ConfigError
from recprivacy.models.bpr import bpr_sgd_step
from recprivacy.models.lightgcn import (
    Constant,
    LightGCN,
    LightGCNModule,
    SymmetricPropagation,
    normalized_adjacency,
    to_torch_csr,
)

# 2 users x 4 items: user 0 <- {0, 1}, user 1 <- {1, 2}; item 3 has no interaction
R = sp.csr_matrix(np.array([[1, 1, 0, 0], [0, 1, 1, 0]], dtype=float))
# degrees: users 2, 2; items 1, 2, 1, 0. Nodes: users 0-1, then items at 2 + i.
A_U0_I0, A_U0_I1 = 1 / math.sqrt(2 * 1), 1 / math.sqrt(2 * 2)
A_U1_I1, A_U1_I2 = 1 / math.sqrt(2 * 2), 1 / math.sqrt(2 * 1)


def test_normalized_adjacency_entries_are_one_over_sqrt_of_degrees():
    a = normalized_adjacency(R).toarray()
    expected = np.zeros((6, 6))
    for u, i, value in ((0, 0, A_U0_I0), (0, 1, A_U0_I1), (1, 1, A_U1_I1), (1, 2, A_U1_I2)):
        expected[u, 2 + i] = expected[2 + i, u] = value
    np.testing.assert_allclose(a, expected, rtol=1e-12)


def test_one_propagation_step_by_hand():
    module = LightGCNModule(2, 4, 2, 0.1, torch.Generator().manual_seed(0),
                            adjacency=to_torch_csr(normalized_adjacency(R)), n_layers=1)
    users = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    items = torch.tensor([[1.0, 1.0], [0.0, 2.0], [2.0, 0.0], [5.0, 5.0]])
    with torch.no_grad():
        module.user.copy_(users)
        module.item.copy_(items)
    user_out, item_out = module.embeddings()
    # layer 1: e_u0 = a00 q0 + a01 q1; e_u1 = a11 q1 + a12 q2; e_i0 = a00 p0; e_i1 = a01 p0 + a11 p1;
    # e_i2 = a12 p1; e_i3 = 0 (isolated). Output = (layer 0 + layer 1) / 2.
    layer1_users = torch.tensor([[A_U0_I0, A_U0_I0 + 2 * A_U0_I1], [2 * A_U1_I2, 2 * A_U1_I1]])
    layer1_items = torch.tensor([[A_U0_I0, 0.0], [A_U0_I1, A_U1_I1], [0.0, A_U1_I2], [0.0, 0.0]])
    torch.testing.assert_close(user_out, (users + layer1_users) / 2)
    torch.testing.assert_close(item_out, (items + layer1_items) / 2)


def test_symmetric_backward_equals_dense_autograd():
    adjacency = normalized_adjacency(R)
    x = torch.randn(6, 3, generator=torch.Generator().manual_seed(0), requires_grad=True)
    weights = torch.randn(6, 3, generator=torch.Generator().manual_seed(1))
    (SymmetricPropagation.apply(Constant(to_torch_csr(adjacency)), x) * weights).sum().backward()
    sparse_grad = x.grad.clone()
    x.grad = None
    (torch.tensor(adjacency.toarray(), dtype=torch.float32) @ x * weights).sum().backward()
    torch.testing.assert_close(sparse_grad, x.grad)


def test_vmapped_propagation_and_its_gradient_equal_one_input_at_a_time():
    adjacency = Constant(to_torch_csr(normalized_adjacency(R)))
    x = torch.randn(6, 3, generator=torch.Generator().manual_seed(0))
    weights = torch.randn(4, 6, 3, generator=torch.Generator().manual_seed(1))

    def loss(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return (SymmetricPropagation.apply(adjacency, SymmetricPropagation.apply(adjacency, x)) * w).sum()

    batched = torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0))(x, weights)
    dense = torch.tensor(normalized_adjacency(R).toarray(), dtype=torch.float32)
    torch.testing.assert_close(batched, torch.stack([dense @ dense @ w for w in weights]))


def _groups() -> Interactions:
    rng = np.random.default_rng(2)
    users = np.repeat(np.arange(40), 6)
    items = np.concatenate([rng.choice(8, 6, replace=False) + 8 * (u % 2) for u in range(40)])
    return Interactions(users=users, items=items, n_users=40, n_items=20)


def test_zero_layers_is_bpr_mf():
    """With K = 0 the representations are the ego embeddings, so a gradient step of size α·B on
    LightGCN's batch loss is BPR-MF's LearnBPR step (``bpr_sgd_step``) on the same tables."""
    model = LightGCN(n_layers=0, n_factors=4)
    model.n_users_, model.n_items_ = 3, 5
    model.train_csr_ = sp.csr_matrix(np.ones((3, 5)))
    model.module_ = model._build()
    users, pos, neg = torch.tensor([0, 2, 2]), torch.tensor([1, 0, 4]), torch.tensor([3, 3, 1])
    model._batch_loss(users, pos, neg).backward()
    tables = model.module_
    user, item = tables.user.detach().clone(), tables.item.detach().clone()
    bpr_sgd_step(user, item, users, pos, neg, lr=0.5, reg=model.reg)
    torch.testing.assert_close(user, tables.user.detach() - 0.5 * 3 * tables.user.grad)
    torch.testing.assert_close(item, tables.item.detach() - 0.5 * 3 * tables.item.grad)


def test_cached_factors_are_the_propagated_embeddings():
    model = LightGCN(n_factors=4, n_epochs=2, batch_size=32).fit(_groups())
    with torch.no_grad():
        users, items = model.module_.embeddings()
    torch.testing.assert_close(model.score(np.arange(3)), users[:3] @ items.T)
    assert not torch.allclose(users, model.module_.user)


@pytest.mark.parametrize("params", [{"n_layers": -1}, {"n_layers": 1.5}, {"batch_size": 0}])
def test_bad_parameters_raise_config_error(params):
    with pytest.raises(ConfigError, match="LightGCN"):
        LightGCN(**params)
