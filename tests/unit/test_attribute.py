"""Attribute inference: the ζ split, per-component inputs, attackers and the zero-column rule."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from recprivacy.attacks.attribute import (
    ATTACKERS,
    BLIND,
    SCALE_FREE,
    AttributeAttacker,
    attack_report,
    component_matrix,
    recommendation_matrix,
    zero_column_attack,
    zero_updates,
    zeta_split,
)
from recprivacy.errors import ConfigError, DataError


def _separable(n: int = 200, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    x = rng.normal(size=(n, 30)).astype(np.float32)
    x[:, :5] += 2.5 * y[:, None]
    return x, y


def test_zeta_split_is_seeded_disjoint_and_sized():
    known, unknown = zeta_split(100, 0.1, seed=4)
    assert len(known) == 10 and len(unknown) == 90
    assert not set(known) & set(unknown)
    assert np.array_equal(known, zeta_split(100, 0.1, seed=4)[0])


@pytest.mark.parametrize("zeta", [0, 1, 1.5, -0.2])
def test_zeta_outside_the_open_unit_interval_is_rejected(zeta):
    with pytest.raises(ConfigError, match="zeta"):
        zeta_split(100, zeta, seed=0)


def test_attacked_clients_of_one_class_are_a_one_line_error():
    x, y = _separable(n=4)
    known, unknown = zeta_split(4, 0.5, seed=0)
    y[unknown] = 1
    with pytest.raises(DataError, match=r"^attribute attack: the 2 clients attacked \(zeta 0.5, split seed 0\) all have "
                                        r"class 'b'; expected two classes or more"):
        attack_report(x, y, ("a", "b"), 0.5, seed=0, kind="knn")
    y[known] = 1  # the known clients may have one class: the attack runs
    y[unknown[0]] = 0
    assert attack_report(x, y, ("a", "b"), 0.5, seed=0, kind="knn")["n_attacked"] == 2


def test_attacker_never_trains_on_a_client_outside_the_zeta_share():
    x, y = _separable()
    known, unknown = zeta_split(len(y), 0.2, seed=1)
    flipped = y.copy()
    flipped[unknown] = 1 - flipped[unknown]
    a = attack_report(x, y, ("a", "b"), 0.2, seed=1, kind="dnn")
    # the same report as if the unknown users' labels had been anything else during training
    b_model = AttributeAttacker("dnn", 2, seed=1).fit(x[known], flipped[known])
    assert AttributeAttacker("dnn", 2, seed=1).fit(x[known], y[known]).fitted_rows_ == len(known)
    assert a["n_known"] == len(known) and a["n_attacked"] == len(unknown)
    np.testing.assert_allclose(
        AttributeAttacker("dnn", 2, seed=1).fit(x[known], y[known]).score(x[unknown]), b_model.score(x[unknown])
    )


@pytest.mark.parametrize("kind", ["dnn", "tree", "svc", "knn"])
def test_learned_attackers_find_a_planted_signal(kind):
    x, y = _separable()
    report = attack_report(x, y, ("a", "b"), 0.3, seed=0, kind=kind)
    assert report["weighted_f1"] > 0.85


def test_fused_adam_dnn_is_the_same_attacker_up_to_rounding():
    x, y = _separable()
    known, unknown = zeta_split(len(y), 0.3, seed=0)
    plain = AttributeAttacker("dnn", 2, seed=0).fit(x[known], y[known]).score(x[unknown])
    fused = AttributeAttacker("dnn", 2, seed=0, fused_adam=True).fit(x[known], y[known]).score(x[unknown])
    np.testing.assert_allclose(fused, plain, atol=1e-4)
    assert attack_report(x, y, ("a", "b"), 0.3, seed=0, kind="dnn", fused_adam=True)["weighted_f1"] > 0.85


def test_raw_inputs_skip_the_column_scaling():
    # a weak signal column next to an uninformative column 1000x larger: kNN finds the signal
    # only after z-scoring, since raw distances are the large column's
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 400)
    x = np.stack([3.0 * y + rng.normal(size=400), 1000.0 * rng.normal(size=400)], axis=1).astype(np.float32)
    raw = AttributeAttacker("knn", 2, seed=0, standardize=False).fit(x[:200], y[:200])
    assert np.array_equal(raw.mean_, [0, 0]) and np.array_equal(raw.std_, [1, 1])
    assert attack_report(x, y, ("a", "b"), 0.5, seed=0, kind="knn")["weighted_f1"] > 0.85
    assert attack_report(x, y, ("a", "b"), 0.5, seed=0, kind="knn", standardize=False)["weighted_f1"] < 0.65


@pytest.mark.parametrize("kind", ["random", "stratified", "majority"])
def test_blind_attackers_stay_near_chance(kind):
    x, y = _separable()
    report = attack_report(x, y, ("a", "b"), 0.3, seed=0, kind=kind)
    assert report["weighted_f1"] < 0.65
    assert kind in ATTACKERS


@pytest.mark.parametrize("kind", BLIND)
def test_blind_attackers_never_read_a_feature(kind, monkeypatch):
    """A blind guess is the same whatever the features hold, even NaN, and computes no column
    moments and no standardised copy of them."""
    import recprivacy.attacks.attribute as attribute

    def never(*args):
        raise AssertionError("a blind guess read its features")

    monkeypatch.setattr(attribute, "_column_moments", never)
    monkeypatch.setattr(AttributeAttacker, "_standard", never)
    x, y = _separable()
    nan = np.full_like(x, np.nan)
    real = AttributeAttacker(kind, 2, seed=0).fit(x[:20], y[:20]).score(x[20:])
    assert np.array_equal(AttributeAttacker(kind, 2, seed=0).fit(nan[:20], y[:20]).score(nan[20:]), real)
    assert np.allclose(real.sum(axis=1), 1.0)


def test_the_tree_on_raw_rows_decides_as_a_tree_on_z_scored_rows(monkeypatch):
    """The tree reads the raw rows and computes no moments: its probabilities equal those of
    the same scikit-learn tree fitted on the explicitly z-scored rows (columns of very
    different scales and one constant column, where the z-score is only a shift)."""
    from sklearn.tree import DecisionTreeClassifier

    import recprivacy.attacks.attribute as attribute

    x, y = _separable()
    x = x * np.geomspace(1e-3, 1e3, x.shape[1], dtype=np.float32) + 7.0
    x[:, 7] = 4.0
    known, unknown = zeta_split(len(y), 0.3, seed=0)
    mean, std = x[known].mean(axis=0), x[known].std(axis=0)
    std[std == 0] = 1.0
    reference = DecisionTreeClassifier(random_state=0).fit((x[known] - mean) / std, y[known])

    def never(*args):
        raise AssertionError("the tree standardised its input")

    monkeypatch.setattr(attribute, "_column_moments", never)
    monkeypatch.setattr(AttributeAttacker, "_standard", never)
    assert "tree" in SCALE_FREE
    tree = AttributeAttacker("tree", 2, seed=0).fit(x[known], y[known])
    assert tree.model_.tree_.node_count == reference.tree_.node_count > 1
    assert np.array_equal(tree.model_.tree_.feature, reference.tree_.feature)
    assert np.array_equal(tree.score(x[unknown]), reference.predict_proba((x[unknown] - mean) / std))


def test_component_matrix_slices_and_orders_parameters():
    deltas = {"E_U": torch.ones(2, 2, 3), "item": torch.full((2, 4, 2), 2.0), "mlp1.user": torch.full((2, 1), 3.0)}
    comps = {"E_U": "user", "item": "item", "mlp1.user": "mlp1"}
    full = component_matrix(deltas, comps, "all")
    assert full.shape == (2, 6 + 8 + 1)
    assert np.array_equal(component_matrix(deltas, comps, "mlp")[0], [3.0])
    assert np.array_equal(component_matrix(deltas, comps, "user"), np.ones((2, 6)))
    with pytest.raises(ConfigError, match="no such parameters"):
        component_matrix(deltas, comps, "mlp2")


def test_zero_column_rule_reads_the_one_hot_block():
    delta = torch.zeros(3, 4, 6)
    delta[0, :, 4] = 1.0
    delta[1, :, 3] = 0.5
    delta[2, :, 4] = 0.1
    delta[:, :, 0] = 9.0  # a statistic column outside the block
    assert list(zero_column_attack(delta, np.array([3, 4]))) == [1, 0, 1]


def test_zero_updates_are_the_clients_with_an_all_zero_user_table_update():
    delta = torch.zeros(3, 4, 6)
    delta[0, 2, 5] = 1e-30  # one tiny value is an update
    delta[2, :, 4] = -0.5
    assert list(zero_updates(delta)) == [False, True, False]
    assert zero_column_attack(delta, np.array([3, 4]))[1] == 0  # nothing to read: class 0


def test_recommendation_matrix_is_multi_hot():
    m = recommendation_matrix(np.array([[0, 2], [1, 2]]), 4)
    assert np.array_equal(m.toarray(), [[1, 0, 1, 0], [0, 1, 1, 0]])


def _lists(n: int = 300, n_items: int = 60, k: int = 8, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Top-k lists whose items depend on a binary attribute (class 1 prefers the first 20 items)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    weight = np.ones((n, n_items))
    weight[y == 1, :20] = 10.0
    keys = np.log(weight) + rng.gumbel(size=weight.shape)
    return np.argsort(-keys, axis=1)[:, :k], y


def test_recommendation_matrix_is_sparse_and_never_counts_an_item_twice():
    m = recommendation_matrix(np.array([[0, 2], [1, 2]]), 4)
    assert sp.issparse(m) and m.nnz == 4 and m.dtype == np.float32
    assert np.array_equal(recommendation_matrix(np.array([[3, 3]]), 4).toarray(), [[0, 0, 0, 1]])


@pytest.mark.parametrize("kind", ["dnn", "tree", "svc", "knn", "stratified"])
def test_sparse_input_gives_the_dense_attackers_result(kind):
    topk, y = _lists()
    x = recommendation_matrix(topk, 60)
    dense, sparse = (attack_report(v, y, ("a", "b"), 0.3, seed=0, kind=kind) for v in (x.toarray(), x))
    assert sparse["weighted_f1"] == pytest.approx(dense["weighted_f1"], abs=0.01)
    known, unknown = zeta_split(len(y), 0.3, seed=0)
    a = AttributeAttacker(kind, 2, seed=0).fit(x[known], y[known])
    b = AttributeAttacker(kind, 2, seed=0).fit(x[known].toarray(), y[known])
    if kind not in BLIND + SCALE_FREE:  # a blind guess and a tree have no column moments
        np.testing.assert_allclose(a.mean_, b.mean_, atol=1e-6)
        np.testing.assert_allclose(a.std_, b.std_, atol=1e-5)
    atol = 1e-3 if kind == "dnn" else 0.0
    np.testing.assert_allclose(a.score(x[unknown]), b.score(x[unknown].toarray()), atol=atol)


def test_sparse_dnn_finds_the_signal_in_lists():
    topk, y = _lists()
    assert attack_report(recommendation_matrix(topk, 60), y, ("a", "b"), 0.3, seed=0, kind="dnn")["weighted_f1"] > 0.8
