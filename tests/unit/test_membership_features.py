"""User features of the membership attack (paper 001 §2.4, §3.5) on hand-made examples."""

import numpy as np
import pytest

from recprivacy.attacks.membership.features import (
    first_interactions,
    origin_features,
    recommendation_weights,
    user_features,
)
from recprivacy.data.interactions import Interactions
from recprivacy.errors import ConfigError

# items 0..3 in two dimensions
VECTORS = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 2.0], [-1.0, 1.0]])


def _data(users, items, timestamps=None):
    return Interactions(users=users, items=items, n_users=max(users) + 1, n_items=4, timestamps=timestamps)


def test_rank_weights_follow_the_paper_and_sum_to_one():
    w = recommendation_weights(100, "rank")
    assert w[0] == pytest.approx(100 / 5050)
    assert w[-1] == pytest.approx(1 / 5050)
    assert w.sum() == pytest.approx(1.0)
    assert recommendation_weights(4, "uniform").tolist() == [0.25] * 4


def test_origin_feature_by_hand_both_weightings():
    # user 0 interacted with items 0 and 1: centre (0.5, 0.5); list [2, 3]
    data = _data([0, 0], [0, 1])
    lists = np.array([[2, 3]])
    # rank-linear, k = 2: w = (2/3, 1/3) -> (4/3 - 1/3, 4/3 + 1/3) = (1, 5/3)
    rank = origin_features(data, np.array([0]), lists, VECTORS, "rank")
    np.testing.assert_allclose(rank, [[0.5 - 1.0, 0.5 - 5 / 3]])
    # uniform: ((2 - 1) / 2, (2 + 1) / 2) = (0.5, 1.5)
    uniform = origin_features(data, np.array([0]), lists, VECTORS, "uniform")
    np.testing.assert_allclose(uniform, [[0.0, -1.0]])


def test_list_order_matters_only_for_rank_weights():
    data = _data([0, 0], [0, 1])
    a = origin_features(data, np.array([0]), np.array([[2, 3]]), VECTORS, "rank")
    b = origin_features(data, np.array([0]), np.array([[3, 2]]), VECTORS, "rank")
    assert not np.allclose(a, b)
    a = origin_features(data, np.array([0]), np.array([[2, 3]]), VECTORS, "uniform")
    b = origin_features(data, np.array([0]), np.array([[3, 2]]), VECTORS, "uniform")
    np.testing.assert_allclose(a, b)


def test_rows_follow_the_order_of_users():
    data = _data([0, 0, 1], [0, 1, 3])
    lists = np.array([[2], [0]])
    out = origin_features(data, np.array([1, 0]), lists, VECTORS, "uniform")
    np.testing.assert_allclose(out, [[-1 - 2, 1 - 2], [0.5 - 1, 0.5 - 0]])


def test_other_feature_methods_by_hand_and_shape():
    data = _data([0, 0], [0, 1])
    lists = np.array([[2, 3]])
    users = np.array([0])
    # similarity: each recommendation's dot product with the centre (0.5, 0.5)
    np.testing.assert_allclose(user_features("similarity", data, users, lists, VECTORS), [[2.0, 0.0]])
    # hadamard: (1,0)*(0,1) - (2,2)*(-1,1) = (0,0) - (-2,2)
    np.testing.assert_allclose(user_features("hadamard", data, users, lists, VECTORS), [[2.0, -2.0]])


def test_concat_dimensions_and_chronological_order():
    rng = np.random.default_rng(0)
    n_items, l = 150, 3
    vectors = rng.normal(size=(n_items, l))
    users = np.repeat([0, 1], 25)
    items = np.concatenate([rng.permutation(n_items)[:25], rng.permutation(n_items)[:25]])
    data = Interactions(users=users, items=items, n_users=2, n_items=n_items, timestamps=np.arange(50)[::-1])
    lists = np.tile(np.arange(100), (2, 1))
    for method, dim in (("concat10", 20 * l), ("concat20", 40 * l), ("concat100", 120 * l)):
        assert user_features(method, data, np.array([0, 1]), lists, vectors).shape == (2, dim)
    # timestamps run backwards, so the first interactions are the last rows of each user
    np.testing.assert_array_equal(first_interactions(data, np.array([1]), 2), [items[[49, 48]]])
    undated = data.with_changes(timestamps=None)
    np.testing.assert_array_equal(first_interactions(undated, np.array([0]), 3), [np.sort(items[:25])[:3]])


def test_unknown_method_and_weighting_are_config_errors():
    data = _data([0], [0])
    with pytest.raises(ConfigError, match="feature method"):
        user_features("cosine", data, np.array([0]), np.array([[1]]), VECTORS)
    with pytest.raises(ConfigError, match="weighting"):
        recommendation_weights(3, "linear")
