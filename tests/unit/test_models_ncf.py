"""NCF (GMF / MLP / NeuMF): hand-computed forward passes, vectorised grid scoring, the
Recommender contract, seeding, and learning a planted block structure."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from recprivacy.data.interactions import Interactions
from recprivacy.errors import ConfigError
from recprivacy.metrics.ranking import evaluate
from recprivacy.models.ncf import NCF, NeuMFNet
from recprivacy.models.popularity import Popularity


def _set(param: torch.nn.Parameter, values: list) -> None:
    with torch.no_grad():
        param.copy_(torch.tensor(values, dtype=torch.float32))


def test_gmf_forward_equals_hand_formula() -> None:
    net = NeuMFNet(n_users=2, n_items=3, variant="gmf", gmf_dim=2, mlp_layers=())
    _set(net.user_gmf.weight, [[1.0, 2.0], [0.0, -1.0]])
    _set(net.item_gmf.weight, [[1.0, 0.0], [2.0, 1.0], [-1.0, 3.0]])
    _set(net.out.weight, [[0.5, -1.0]])
    _set(net.out.bias, [0.25])
    # h^T (p_u ⊙ q_i) + b:  (0,1): 0.5*1*2 - 1*2*1 + 0.25 = -0.75;  (1,2): 0.5*0*(-1) - 1*(-1)*3 + 0.25 = 3.25
    logits = net(torch.tensor([0, 1, 0]), torch.tensor([1, 2, 0]))
    assert torch.allclose(logits, torch.tensor([-0.75, 3.25, 0.75]))


def test_mlp_forward_equals_hand_formula() -> None:
    net = NeuMFNet(n_users=1, n_items=2, variant="mlp", gmf_dim=1, mlp_layers=(2, 1))
    _set(net.user_mlp.weight, [[1.0]])
    _set(net.item_mlp.weight, [[2.0], [-3.0]])
    _set(net.tower[0].weight, [[1.0, 1.0], [1.0, -1.0]])
    _set(net.tower[0].bias, [0.0, 0.0])
    _set(net.tower[1].weight, [[1.0, 2.0]])
    _set(net.tower[1].bias, [-1.0])
    _set(net.out.weight, [[3.0]])
    _set(net.out.bias, [0.5])
    # item 0: z1 = [1; 2] -> relu([3, -1]) = [3, 0] -> relu(3 - 1) = 2 -> 3*2 + 0.5 = 6.5
    # item 1: z1 = [1; -3] -> relu([-2, 4]) = [0, 4] -> relu(8 - 1) = 7 -> 3*7 + 0.5 = 21.5
    assert torch.allclose(net(torch.tensor([0, 0]), torch.tensor([0, 1])), torch.tensor([6.5, 21.5]))


def test_neumf_architecture_and_output_shape() -> None:
    net = NeuMFNet(n_users=5, n_items=7, variant="neumf", gmf_dim=8, mlp_layers=(64, 32, 16))
    assert net.user_mlp.embedding_dim == 32
    assert [(layer.in_features, layer.out_features) for layer in net.tower] == [(64, 64), (64, 32), (32, 16)]
    assert (net.out.in_features, net.out.out_features) == (8 + 16, 1)
    assert net(torch.tensor([0, 4, 2]), torch.tensor([6, 0, 3])).shape == (3,)


@pytest.mark.parametrize("variant", ["neumf", "gmf", "mlp"])
def test_grid_scoring_matches_pairwise_forward(variant: str) -> None:
    torch.manual_seed(0)
    net = NeuMFNet(n_users=6, n_items=9, variant=variant, gmf_dim=4, mlp_layers=(8, 4))
    for p in net.parameters():  # move away from the near-zero initialisation
        torch.nn.init.normal_(p)
    users = torch.tensor([5, 0, 3, 3, 1])
    grid = net.score_grid(users, chunk_pairs=20)  # 2 users per chunk: several chunks
    pairs = net(users.repeat_interleave(9), torch.arange(9).repeat(len(users))).reshape(len(users), 9)
    assert torch.allclose(grid, pairs, atol=1e-5)


def _blocks(n_users: int = 120, n_groups: int = 4, block: int = 30, per_user: int = 16, seed: int = 0) -> Interactions:
    """``n_groups`` user groups, each interacting only with its own block of ``block`` items."""
    rng = np.random.default_rng(seed)
    users = np.repeat(np.arange(n_users), per_user)
    items = np.concatenate([rng.choice(block, per_user, replace=False) for _ in range(n_users)])
    items = items + (users % n_groups) * block
    return Interactions(users=users, items=items, n_users=n_users, n_items=n_groups * block)


def _holdout(data: Interactions, n_test: int, seed: int = 0) -> tuple[Interactions, Interactions]:
    """The last ``n_test`` interactions of each user (after a seeded shuffle) become the test."""
    rng = np.random.default_rng(seed)
    order = np.lexsort((rng.random(len(data)), data.users))
    rank = np.arange(len(order)) - np.searchsorted(data.users[order], data.users[order])
    per_user = np.bincount(data.users, minlength=data.n_users)[data.users[order]]
    test = rank >= per_user - n_test
    return data.select(order[~test]), data.select(order[test])


@pytest.fixture(scope="module")
def planted() -> tuple[Interactions, Interactions]:
    return _holdout(_blocks(), n_test=4)


@pytest.fixture(scope="module")
def fitted(planted) -> NCF:
    train, _ = planted
    return NCF(lr=1e-2, n_epochs=5, batch_size=256, seed=0).fit(train)


def test_ncf_beats_popularity_on_planted_blocks(planted, fitted: NCF) -> None:
    train, test = planted
    ncf = evaluate(fitted, test, ks=(10,))["recall@10"]
    pop = evaluate(Popularity().fit(train), test, ks=(10,))["recall@10"]
    # Each user has 12 training and 4 test items in a block of 30, so 18 unseen block items.
    # Ranking the own block first but randomly inside it gives Recall@10 = 10/18 = 0.56;
    # popularity ignores the blocks (about 10 of 108 unseen items, 0.09).
    assert pop < 0.2
    assert ncf > 0.4


def test_score_shape_and_recommend_excludes_seen(planted, fitted: NCF) -> None:
    train, _ = planted
    users = np.array([0, 7, 3])
    assert fitted.score(users).shape == (3, train.n_items)
    n_seen = train.user_counts().max()
    recs = fitted.recommend(users, k=train.n_items - n_seen)
    seen = train.to_csr()
    for row, u in zip(recs.numpy(), users):
        assert not set(row) & set(seen[u].indices)


def test_same_seed_same_scores_other_seed_differs(planted) -> None:
    train, _ = planted
    users = np.arange(10)
    a = NCF(n_epochs=1, seed=3).fit(train).score(users)
    b = NCF(n_epochs=1, seed=3).fit(train).score(users)
    c = NCF(n_epochs=1, seed=4).fit(train).score(users)
    assert torch.equal(a, b)
    assert not torch.allclose(a, c)


def test_early_stopping_restores_best_validation_weights(planted) -> None:
    train, test = planted
    model = NCF(lr=1e-2, n_epochs=6, batch_size=256, patience=2, seed=0).fit(train, valid=test)
    history = model.history_
    assert history.valid and history.best_epoch >= 0
    assert history.best_score == max(score for _, score in history.valid)
    assert evaluate(model, test, ks=(20,))["recall@20"] == pytest.approx(history.best_score)


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"variant": "deep"}, "variant"),
        ({"mlp_layers": ()}, "mlp_layers"),
        ({"n_neg": -1}, "n_neg"),
        ({"batch_size": 0}, "batch_size"),
    ],
)
def test_bad_hyperparameters_name_the_field(kwargs: dict, field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        NCF(**kwargs)
