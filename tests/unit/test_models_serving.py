"""Serving users not seen in training: ``score_histories`` / ``recommend_histories``.

Hand-computed fold-in and propagation, equality with trained-user scoring where the model
reads nothing but the history, overlap with the trained-user lists for the learned models,
and the errors."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from recprivacy.data.interactions import Interactions
from recprivacy.data.synthetic import make_synthetic
from recprivacy.errors import ConfigError, DataError, NotFittedError
from recprivacy.models import make_model
from recprivacy.models.bpr import BPRFoldInLoss
from recprivacy.models.foldin import gradient_fold_in, history_gram, length_chunks, ridge_fold_in
from recprivacy.models.lightgcn import LightGCN

# 3 items in d = 2: q0 = (1, 0), q1 = (0, 1), q2 = (1, 1); the new user's history is {0, 2}
Q = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
HISTORY = sp.csr_matrix(np.array([[1.0, 0.0, 1.0]]))


def toy(users, items, n_users, n_items, timestamps=None) -> Interactions:
    return Interactions(users=np.array(users), items=np.array(items), n_users=n_users, n_items=n_items,
                        timestamps=None if timestamps is None else np.array(timestamps))


@pytest.fixture(scope="module")
def synthetic() -> Interactions:
    return make_synthetic(n_users=120, n_items=150, n_interactions=4000, seed=0)


# ---------------------------------------------------------------------------- fold-in by hand


def test_ridge_fold_in_equals_the_closed_form_by_hand():
    # Q_SᵀQ_S = [[2, 1], [1, 1]]; λ n = 0.5 * 2 = 1; Q_Sᵀ1 = (2, 1)
    # p = [[3, 1], [1, 2]]⁻¹ (2, 1) = 1/5 [[2, -1], [-1, 3]] (2, 1) = (3/5, 1/5)
    p = ridge_fold_in(Q, HISTORY, reg=0.5)
    torch.testing.assert_close(p, torch.tensor([[0.6, 0.2]]))


def test_ridge_fold_in_with_ratings_as_targets():
    # ratings 4 on item 0 and 2 on item 2: Q_Sᵀr = (6, 2); p = 1/5 [[2, -1], [-1, 3]] (6, 2) = (2, 0)
    ratings = sp.csr_matrix(np.array([[4.0, 0.0, 2.0]]))
    torch.testing.assert_close(ridge_fold_in(Q, ratings, reg=0.5), torch.tensor([[2.0, 0.0]]))


def test_ridge_fold_in_takes_sampled_negatives_in_expectation():
    # one negative per positive, always item 1 (the only item outside S): C_S = q1 q1ᵀ = [[0, 0], [0, 1]],
    # ρ n C_S = 2 C_S; λ n (1 + ρ) = 0.5 * 2 * 2 = 2: lhs = [[2, 1], [1, 1]] + [[0, 0], [0, 2]] + 2 I
    # = [[4, 1], [1, 5]], p = 1/19 [[5, -1], [-1, 4]] (2, 1) = (9/19, 2/19)
    p = ridge_fold_in(Q, HISTORY, reg=0.5, neg_ratio=1)
    torch.testing.assert_close(p, torch.tensor([[9 / 19, 2 / 19]]))


def test_ridge_fold_in_of_an_empty_history_is_zero():
    empty = sp.csr_matrix((2, 3))
    torch.testing.assert_close(ridge_fold_in(Q, empty, reg=0.5, neg_ratio=1), torch.zeros(2, 2))


def test_lfm_scores_histories_with_its_ridge_fold_in(synthetic):
    model = make_model("lfm", n_factors=8, n_epochs=2, seed=0).fit(synthetic)
    histories = synthetic.take_users([3, 5])
    p = ridge_fold_in(model.item_factors_, histories.to_csr(), model.reg, model.neg_ratio)
    torch.testing.assert_close(model.score_histories(histories), p @ model.item_factors_.T)


def test_gradient_fold_in_descends_the_loss_from_zero():
    # loss Σ (1 - pᵀq_i)² over the history: the rows start at 0 (loss 2) and move towards the ridge optimum
    users, items = torch.tensor([0, 0]), torch.tensor([0, 2])

    def loss(rows, u, i, negatives):
        return (1 - (rows[0][u] * Q[i]).sum(-1)).pow(2).sum()

    (p,) = gradient_fold_in([2], HISTORY, loss, n_neg=1, steps=200, lr=0.05, seed=0)
    assert float(loss([p], users, items, None)) < 0.01


def test_history_gram_equals_the_dense_definition_in_the_users_order():
    # G[u] = Σ_{i ∈ S_u} q_i q_iᵀ by loops; lengths 9, 1, 0, 4, 2, 12, 3 (an empty one, the longest not first)
    rng = np.random.default_rng(0)
    q = torch.from_numpy(rng.normal(size=(12, 3)))
    lengths = [9, 1, 0, 4, 2, 12, 3]
    history = sp.csr_matrix(np.array([np.isin(np.arange(12), rng.permutation(12)[:n]) for n in lengths], dtype=float))
    dense = torch.zeros(len(lengths), 3, 3, dtype=torch.float64)
    for u, row in enumerate(history.toarray()):
        for i in np.flatnonzero(row):
            dense[u] += torch.outer(q[i], q[i])
    for max_cells in (1, 3 * 12, 3 * 20, 1 << 24):  # a user per chunk, ..., one chunk per length class
        torch.testing.assert_close(history_gram(history, q, max_cells), dense, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("max_rows", [1, 20, 1000])
def test_history_gram_chunks_pad_each_user_to_its_own_chunk(max_rows):
    # non-increasing lengths: every non-empty entry in one chunk, each chunk's padded cells w·(hi − lo) within
    # max_rows (or one user) and under twice the chunk's own cells, the empty histories in none
    lengths = np.array([414, 300, 210, 150, 90, 90, 40, 21, 20, 3, 1, 0, 0])
    chunks = list(length_chunks(lengths, max_rows))
    assert [i for lo, hi in chunks for i in range(lo, hi)] == list(range(11))
    for lo, hi in chunks:
        width = lengths[lo]
        assert hi - lo == 1 or width * (hi - lo) <= max_rows
        assert width * (hi - lo) < 2 * lengths[lo:hi].sum()


def bpr_case(n_neg: int) -> tuple[BPRFoldInLoss, list[torch.Tensor], torch.Tensor, torch.Tensor, torch.Tensor]:
    """Random float64 BPR fold-in: 4 users (user 2 without pairs, user 0 with 3), 6 items in d = 3."""
    gen = torch.Generator().manual_seed(0)
    users, items = torch.tensor([0, 0, 0, 1, 3, 3]), torch.tensor([1, 4, 5, 0, 2, 1])
    negatives = torch.randint(0, 6, (len(users), n_neg), generator=gen)
    rows = [torch.randn(4, 3, dtype=torch.float64, generator=gen, requires_grad=True)]
    return BPRFoldInLoss(torch.randn(6, 3, dtype=torch.float64, generator=gen), reg=0.3), rows, users, items, negatives


@pytest.mark.parametrize("n_neg", [1, 3])
def test_bpr_fold_in_gradient_equals_autograd_of_its_loss(n_neg):
    loss, rows, users, items, negatives = bpr_case(n_neg)
    (expected,) = torch.autograd.grad(loss(rows, users, items, negatives), rows)
    (analytic,) = loss.gradient(users, items)(rows, negatives)
    assert not analytic.requires_grad
    torch.testing.assert_close(analytic, expected, rtol=1e-12, atol=1e-12)
    assert analytic[2].abs().max() == 0  # no pairs, no gradient


def test_gradient_fold_in_with_the_analytic_gradient_equals_the_autograd_path():
    # the same loss as a plain function has no gradient of its own and is differentiated by autograd
    loss = BPRFoldInLoss(torch.randn(40, 4, generator=torch.Generator().manual_seed(1)), reg=0.1)
    cells = np.random.default_rng(2).random((6, 40)) < 0.2
    cells[3] = False  # an empty history stays at zero
    history = sp.csr_matrix(cells.astype(float))
    (analytic,) = gradient_fold_in([4], history, loss, n_neg=2, steps=30, lr=0.05, seed=0)
    (autograd,) = gradient_fold_in([4], history, lambda *args: loss(*args), n_neg=2, steps=30, lr=0.05, seed=0)
    torch.testing.assert_close(analytic, autograd, rtol=1e-5, atol=1e-6)
    assert analytic[3].abs().max() == 0 and analytic.abs().max() > 0.1


# ---------------------------------------------------------------------------- LightGCN by hand


def test_lightgcn_propagates_a_new_user_through_the_trained_item_layers():
    # training graph: user 0 <- {0, 1}, user 1 <- {1, 2}; item degrees 1, 2, 1, 0
    train = toy([0, 0, 1, 1], [0, 1, 1, 2], 2, 4)
    model = LightGCN(n_factors=2, n_layers=2, n_epochs=1, seed=0).fit(train)
    with torch.no_grad():
        model.module_.user.copy_(torch.tensor([[1.0, 0.0], [0.0, 1.0]]))
        model.module_.item.copy_(torch.tensor([[1.0, 1.0], [0.0, 2.0], [2.0, 0.0], [5.0, 5.0]]))
    model._cache_factors()
    # new user history {1, 3}: |N_u| = 2; item 3 has training degree 0 and passes nothing.
    # e_u^(1) = e_1^(0) / sqrt(2 * 2) = (0, 1); e_1^(1) = p0 / sqrt(2 * 2) + p1 / sqrt(2 * 2) = (1/2, 1/2),
    # e_u^(2) = e_1^(1) / 2 = (1/4, 1/4); e_u = (0 + e_u^(1) + e_u^(2)) / 3 = (1/12, 5/12)
    histories = toy([0, 0], [1, 3], 1, 4)
    e_u = torch.tensor([[1 / 12, 5 / 12]])
    torch.testing.assert_close(model._fold_in(histories), e_u)
    torch.testing.assert_close(model.score_histories(histories), e_u @ model.item_factors_.T)


# ---------------------------------------------------------------------------- same history, same scores


@pytest.mark.parametrize("name", ["popularity", "itemcf"])
def test_history_models_score_a_history_as_its_trained_user(name, synthetic):
    model = make_model(name).fit(synthetic)
    users = np.array([4, 0, 17])
    torch.testing.assert_close(model.score_histories(synthetic.take_users(users)), model.score(users))


@pytest.mark.parametrize("name", ["sasrec", "srgnn"])
def test_sequence_models_encode_the_time_ordered_history(name, synthetic):
    model = make_model(name, n_epochs=1, seed=0).fit(synthetic)
    users = np.array([4, 0, 17])
    torch.testing.assert_close(model.score_histories(synthetic.take_users(users)), model.score(users))


def test_sasrec_reads_the_history_in_time_order():
    model = make_model("sasrec", n_epochs=1, hidden=8, max_len=5, seed=0).fit(toy([0, 0, 0], [0, 1, 2], 1, 6))
    shuffled = toy([0, 0, 0], [3, 1, 4], 1, 6, timestamps=[30, 10, 20])  # time order 1, 4, 3
    torch.testing.assert_close(model.score_histories(shuffled), model.score_sequences([np.array([1, 4, 3])]))


# ---------------------------------------------------------------------------- lists


#: least mean overlap@10 between the trained-user list and the list served from the same user's
#: own training history (40 users of ``synthetic``). Measured with these settings: popularity,
#: itemcf, sasrec and srgnn 1.0 (same computation), lightgcn 0.957, neumf 0.917, bpr 0.765, lfm
#: 0.642 (the fold-ins find the optimum for the user; training stops short of it from a random start).
OVERLAP = {"popularity": 1.0, "itemcf": 1.0, "sasrec": 1.0, "srgnn": 1.0,
           "lightgcn": 0.85, "neumf": 0.8, "bpr": 0.7, "lfm": 0.55}
FAST = {"lfm": {"n_epochs": 40}, "bpr": {"n_epochs": 30}, "lightgcn": {"n_epochs": 30},
        "neumf": {"n_epochs": 5}, "sasrec": {"n_epochs": 2}, "srgnn": {"n_epochs": 2}}


@pytest.mark.parametrize("name", sorted(OVERLAP))
def test_served_list_overlaps_the_trained_user_list(name, synthetic):
    model = make_model(name, seed=0, **FAST.get(name, {})).fit(synthetic)
    users = np.arange(0, 120, 3)
    trained = model.recommend(users, 10).numpy()
    served = model.recommend_histories(synthetic.take_users(users), 10).numpy()
    overlap = np.mean([len(np.intersect1d(a, b)) / 10 for a, b in zip(trained, served)])
    assert overlap >= OVERLAP[name], f"{name}: mean overlap@10 {overlap:.3f}"


def test_recommend_histories_masks_the_history_and_batches_alike(synthetic):
    model = make_model("lfm", n_factors=8, n_epochs=2, seed=0).fit(synthetic)
    histories = synthetic.take_users(np.arange(30))
    top = model.recommend_histories(histories, 15, batch_size=7)
    assert top.shape == (30, 15) and top.dtype == torch.long
    torch.testing.assert_close(top, model.recommend_histories(histories, 15))
    seen = histories.to_csr()
    assert not any(seen[r, top[r].numpy()].nnz for r in range(30))
    unmasked = model.recommend_histories(histories, 15, exclude_seen=False)
    assert any(seen[r, unmasked[r].numpy()].nnz for r in range(30))


# ---------------------------------------------------------------------------- errors


def test_serving_before_fit_raises_not_fitted():
    with pytest.raises(NotFittedError):
        make_model("itemcf").score_histories(toy([0], [1], 1, 3))
    with pytest.raises(NotFittedError):
        make_model("lfm").recommend_histories(toy([0], [1], 1, 3), 2)


def test_histories_over_another_item_space_raise_a_one_line_data_error(synthetic):
    model = make_model("popularity").fit(synthetic)
    with pytest.raises(DataError, match=r"n_items=7 .*n_items=150") as err:
        model.recommend_histories(toy([0], [1], 1, 7), 5)
    assert "\n" not in str(err.value)


def test_srgnn_with_user_vectors_refuses_new_users(synthetic):
    model = make_model("srgnn", user_mode="id", n_epochs=1, seed=0).fit(synthetic)
    with pytest.raises(ConfigError, match="user_mode='id'"):
        model.score_histories(synthetic.take_users([0]))


def test_take_users_renumbers_in_the_given_order(synthetic):
    part = synthetic.take_users([5, 2])
    assert part.n_users == 2 and part.n_items == synthetic.n_items
    np.testing.assert_array_equal(part.user_ids, synthetic.user_ids[[5, 2]])
    assert (part.to_csr()[0] != synthetic.to_csr()[5]).nnz == 0
    assert (part.to_csr()[1] != synthetic.to_csr()[2]).nnz == 0
    with pytest.raises(DataError):
        synthetic.take_users([1, 1])


def test_dpmf_folds_a_new_user_in_from_the_released_item_factors(synthetic):
    """Explicit DPMF: the projected ridge minimiser over scaled ratings; implicit: a BPR fold-in,
    also inside the unit ball the sensitivity assumes."""
    from recprivacy.defenses.dpmf import DPMF

    rated = synthetic  # ratings 1..5
    histories = rated.take_users([3, 5, 8])
    explicit = DPMF(feedback="explicit", epsilon=5.0, n_factors=8, n_epochs=2, noise="simulation", seed=0).fit(rated)
    p = ridge_fold_in(explicit.item_factors_, histories.to_csr("ratings") / explicit.rating_max, explicit.reg)
    p = p / p.norm(dim=1, keepdim=True).clamp(min=1.0)
    torch.testing.assert_close(explicit.score_histories(histories), p @ explicit.item_factors_.T)
    implicit = DPMF(feedback="implicit", epsilon=5.0, n_factors=8, n_epochs=2, noise="simulation", seed=0).fit(rated)
    assert implicit.serves_new_users and explicit.serves_new_users
    lists = implicit.recommend_histories(histories, 5).numpy()
    assert lists.shape == (3, 5)
    seen = histories.to_csr()
    assert all(seen[u, lists[u]].sum() == 0 for u in range(3))
