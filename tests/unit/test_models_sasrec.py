"""SASRec: padding layout, causal attention, padding invariance, negative sampling, the
Recommender contract, seeding, and learning a planted "item i is followed by item i+1" pattern."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from recprivacy.data.interactions import Interactions
from recprivacy.errors import ConfigError, DataError
from recprivacy.metrics.ranking import evaluate
from recprivacy.models.popularity import Popularity
from recprivacy.models.sasrec import SASRec, SASRecNet, left_pad, sample_negatives
from recprivacy.models.training import NegativeSampler

N_ITEMS = 60


def test_left_pad_keeps_the_most_recent_items_right_aligned() -> None:
    out = left_pad([np.array([1, 2, 3]), np.array([4]), np.array([], dtype=np.int64)], width=2, pad=9)
    assert out.tolist() == [[2, 3], [9, 4], [9, 9]]


def test_left_pad_rejects_ids_outside_the_catalogue() -> None:
    with pytest.raises(DataError, match=r"\[0, 9\)"):
        left_pad([np.array([1, 9])], width=3, pad=9)


@pytest.fixture()
def net() -> SASRecNet:
    torch.manual_seed(0)
    return SASRecNet(n_items=20, hidden=16, n_blocks=2, n_heads=2, max_len=6, dropout=0.2).eval()


def test_causal_attention_later_items_do_not_change_earlier_states(net: SASRecNet) -> None:
    seqs = torch.tensor([[20, 20, 3, 7, 1, 5]])
    changed = seqs.clone()
    changed[0, -1] = 11
    with torch.no_grad():
        a, b = net(seqs), net(changed)
    assert torch.allclose(a[:, :-1], b[:, :-1], atol=1e-6)
    assert not torch.allclose(a[:, -1], b[:, -1])


def test_padding_never_reaches_real_positions(net: SASRecNet) -> None:
    seqs = torch.tensor([[20, 20, 20, 3, 7, 1]])
    with torch.no_grad():
        before = net(seqs)[:, -1]
        net.pos_emb.weight[:3] += 3 * torch.randn(3, 16)  # the padded slots' inputs change
        after = net(seqs)[:, -1]
    assert torch.allclose(before, after, atol=1e-6)


def test_sample_negatives_avoid_the_users_sequence() -> None:
    rng = np.random.default_rng(0)
    seqs = [np.arange(0, 8), np.arange(5, 10), np.array([1, 2])]
    csr = Interactions(
        users=np.repeat(np.arange(3), [len(s) for s in seqs]), items=np.concatenate(seqs), n_users=3, n_items=10
    ).to_csr()
    has_target = np.array([[True] * 6, [False, False, True, True, True, True], [False] * 5 + [True]])
    for _ in range(20):
        neg = sample_negatives(has_target, NegativeSampler(csr, rng), pad=10)
        assert (neg[~has_target] == 10).all()
        for u in range(3):
            assert not set(neg[u][has_target[u]]) & set(seqs[u])


def _chains(n_users: int = 200, length: int = 10, seed: int = 0) -> Interactions:
    """Each user walks item s, s+1, s+2, ... (mod N_ITEMS) from a random start s."""
    rng = np.random.default_rng(seed)
    start = rng.integers(0, N_ITEMS, size=n_users)
    users = np.repeat(np.arange(n_users), length)
    steps = np.tile(np.arange(length), n_users)
    items = (start[users] + steps) % N_ITEMS
    return Interactions(users=users, items=items, n_users=n_users, n_items=N_ITEMS, timestamps=steps)


@pytest.fixture(scope="module")
def planted() -> tuple[Interactions, Interactions]:
    data = _chains()
    last = data.timestamps == data.timestamps.max()
    return data.select(~last), data.select(last)


@pytest.fixture(scope="module")
def fitted(planted) -> SASRec:
    train, _ = planted
    return SASRec(hidden=32, max_len=12, lr=5e-3, n_epochs=30, batch_size=64, seed=0).fit(train)


def test_sasrec_learns_the_next_item(planted, fitted: SASRec) -> None:
    train, test = planted
    sas = evaluate(fitted, test, ks=(10,))["recall@10"]
    pop = evaluate(Popularity().fit(train), test, ks=(10,))["recall@10"]
    # Popularity is nearly flat over the 51 unseen items (about 10/51 = 0.2); the next item is
    # fully determined by the last one.
    assert pop < 0.35
    assert sas > 0.9


def test_score_equals_score_sequences_of_the_training_history(planted, fitted: SASRec) -> None:
    train, _ = planted
    users = np.array([4, 0, 9])
    history = [train.sequences()[u] for u in users]
    assert torch.allclose(fitted.score(users), fitted.score_sequences(history), atol=1e-5)


def test_score_sequences_is_independent_of_batch_and_padding(fitted: SASRec) -> None:
    short, long = np.array([5, 6, 7]), np.arange(20, 40)
    alone = fitted.score_sequences([short])
    batched = fitted.score_sequences([long, short])
    padded = fitted.score_sequences(torch.tensor([[N_ITEMS, N_ITEMS, 5, 6, 7]]))
    assert alone.shape == (1, N_ITEMS)
    assert torch.allclose(alone, batched[1:], atol=1e-5)
    assert torch.allclose(alone, padded, atol=1e-5)
    # only the last max_len = 12 items are read
    full, window = fitted.score_sequences([np.arange(0, 40)]), fitted.score_sequences([np.arange(28, 40)])
    assert torch.allclose(full, window, atol=1e-5)


def test_scores_are_last_state_dot_item_embeddings(fitted: SASRec) -> None:
    emb = fitted.item_embeddings()
    assert emb.shape == (N_ITEMS, 32)
    seqs = torch.as_tensor(left_pad([np.array([1, 2, 3])], 12, N_ITEMS))
    with torch.no_grad():
        last = fitted.net_(seqs)[:, -1]
    assert torch.allclose(fitted.score_sequences([np.array([1, 2, 3])]), last @ emb.T, atol=1e-5)


def test_score_sequences_rejects_unknown_items(fitted: SASRec) -> None:
    with pytest.raises(DataError, match="item ids"):
        fitted.score_sequences([np.array([3, N_ITEMS])])


def test_recommend_excludes_seen(planted, fitted: SASRec) -> None:
    train, _ = planted
    users = np.arange(20)
    recs = fitted.recommend(users, k=N_ITEMS - 9)
    for row, seq in zip(recs.numpy(), train.sequences()[:20]):
        assert not set(row) & set(seq)


def test_same_seed_same_scores_other_seed_differs(planted) -> None:
    train, _ = planted
    users = np.arange(10)
    a = SASRec(hidden=16, max_len=12, n_epochs=1, seed=1).fit(train).score(users)
    b = SASRec(hidden=16, max_len=12, n_epochs=1, seed=1).fit(train).score(users)
    c = SASRec(hidden=16, max_len=12, n_epochs=1, seed=2).fit(train).score(users)
    assert torch.equal(a, b)
    assert not torch.allclose(a, c)


def test_early_stopping_keeps_the_best_validation_weights(planted) -> None:
    train, test = planted
    model = SASRec(hidden=16, max_len=12, lr=5e-3, n_epochs=6, eval_every=2, patience=1, seed=0).fit(train, test)
    assert [epoch for epoch, _ in model.history_.valid][:2] == [1, 3]
    assert evaluate(model, test, ks=(20,))["recall@20"] == pytest.approx(model.history_.best_score)


@pytest.mark.parametrize(
    "kwargs, field",
    [({"hidden": 10, "n_heads": 3}, "hidden"), ({"dropout": 1.0}, "dropout"), ({"max_len": 0}, "max_len")],
)
def test_bad_hyperparameters_name_the_field(kwargs: dict, field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        SASRec(**kwargs)
