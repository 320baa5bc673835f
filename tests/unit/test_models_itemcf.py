"""ItemCF: binary cosine similarity and neighbour truncation, checked by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from recprivacy.data.interactions import Interactions
from recprivacy.errors import ConfigError
from recprivacy.models.itemcf import ItemCF, cosine_similarity, top_k_per_row

# users x items: item 0 <- users {0, 1, 2}; item 1 <- {0, 2}; item 2 <- {1, 2}
R = sp.csr_matrix(np.array([[1, 1, 0], [1, 0, 1], [1, 1, 1]], dtype=float))
S01 = 2 / math.sqrt(3 * 2)  # |{0,2}| / sqrt(3 * 2)
S12 = 1 / math.sqrt(2 * 2)  # |{2}| / sqrt(2 * 2)


def test_cosine_on_a_3x3_example_by_hand():
    expected = np.array([[0, S01, S01], [S01, 0, S12], [S01, S12, 0]])
    np.testing.assert_allclose(cosine_similarity(R).toarray(), expected, rtol=1e-6)


def test_top_k_per_row_keeps_the_largest_nonzero_entries():
    m = sp.csr_matrix(np.array([[0, 0.5, 0.7, 0.2], [0.1, 0, 0.3, 0.9], [0, 0, 0, 0]]))
    expected = [[0, 0.5, 0.7, 0], [0, 0, 0.3, 0.9], [0, 0, 0, 0]]
    np.testing.assert_allclose(top_k_per_row(m, 2).toarray(), expected)
    np.testing.assert_allclose(top_k_per_row(m, 2, chunk_cells=4).toarray(), expected)  # one row per chunk
    np.testing.assert_allclose(top_k_per_row(m, 9).toarray(), m.toarray())
    assert top_k_per_row(m, 9).nnz == 6


def _four_items() -> Interactions:
    # users 0-2 as R above; user 3 has item 0 only; item 3 <- user 1 only
    users = [0, 0, 1, 1, 2, 2, 2, 3, 1]
    items = [0, 1, 0, 2, 0, 1, 2, 0, 3]
    return Interactions(users=users, items=items, n_users=4, n_items=4)


def test_scores_sum_similarities_of_the_history():
    model = ItemCF().fit(_four_items())
    # item 0 <- {0,1,2,3}, item 1 <- {0,2}, item 2 <- {1,2}, item 3 <- {1}
    s01, s02, s03 = 2 / math.sqrt(8), 2 / math.sqrt(8), 1 / math.sqrt(4)
    s12, s23 = 1 / math.sqrt(4), 1 / math.sqrt(2)
    expected_user0 = [s01, s01, s02 + s12, s03]  # history {0, 1}
    np.testing.assert_allclose(model.score(np.array([0]))[0].numpy(), expected_user0, atol=1e-5)
    assert model.weights_[2, 3] == pytest.approx(s23, rel=1e-6)


def test_neighbour_truncation_keeps_the_top_k_sources_per_target():
    model = ItemCF(n_neighbors=1).fit(_four_items())
    w = model.weights_.toarray()
    assert (np.count_nonzero(w, axis=0) == 1).all()
    # target 1: sources sim(0,1) = 0.707, sim(2,1) = 0.5 -> keeps item 0;
    # target 3: sources sim(0,3) = 0.5, sim(1,3) = 0, sim(2,3) = 0.707 -> keeps item 2
    assert np.flatnonzero(w[:, 1]).tolist() == [0]
    assert np.flatnonzero(w[:, 3]).tolist() == [2]


def test_recommend_excludes_seen_and_pads_with_popular_items():
    # item 0 (user 0's only item) co-occurs with nothing; counts: item 1: 3, 2: 2, 3: 1, 4: 0
    data = Interactions(users=[0, 1, 1, 2, 2, 2, 3], items=[0, 1, 2, 1, 2, 3, 1], n_users=4, n_items=5)
    model = ItemCF().fit(data)
    assert model.recommend(np.array([0]), k=4).tolist() == [[1, 2, 3, 4]]
    assert set(model.recommend(np.array([2]), k=2).tolist()[0]).isdisjoint({1, 2, 3})


@pytest.mark.parametrize("params", [{"n_neighbors": 0}, {"n_neighbors": 2.5}, {"similarity": "pearson"}])
def test_bad_parameters_raise_config_error(params):
    with pytest.raises(ConfigError, match="ItemCF"):
        ItemCF(**params)
