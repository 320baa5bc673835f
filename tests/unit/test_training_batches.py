"""Negative sampling (dense and sorted-key lookups) and the shuffled batches of one epoch."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from recprivacy.models.training import NegativeSampler, minibatches, shuffled_batches


def _positives() -> sp.csr_matrix:
    # user 0 has items {0, 1, 2}, user 1 has {3}, user 2 has every item but 4
    rows = [0, 0, 0, 1, 2, 2, 2, 2]
    cols = [0, 1, 2, 3, 0, 1, 2, 3]
    return sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(3, 5))


@pytest.mark.parametrize("dense_cells", [15, 14])  # 3 x 5 cells: dense matrix, then sorted keys
def test_negatives_avoid_positives_by_either_lookup(dense_cells):
    sampler = NegativeSampler(_positives(), np.random.default_rng(0), dense_cells=dense_cells)
    assert (sampler._dense is not None) == (dense_cells == 15)
    users = np.array([0, 1, 2])
    cells = sampler.is_positive(np.repeat(users, 5), np.tile(np.arange(5), 3))
    np.testing.assert_array_equal(cells.reshape(3, 5), _positives().toarray() > 0)
    negatives = sampler.sample(np.repeat(users, 200), n_neg=2).reshape(3, 400)
    assert set(negatives[0]) == {3, 4} and set(negatives[1]) == {0, 1, 2, 4} and set(negatives[2]) == {4}


def test_both_lookups_draw_the_same_negatives():
    csr = _positives()
    draws = [NegativeSampler(csr, np.random.default_rng(5), dense_cells=cells).sample(np.arange(3).repeat(50), 3)
             for cells in (15, 0)]  # fmt: skip
    np.testing.assert_array_equal(*draws)


def test_a_user_with_every_item_has_no_negative():
    full = sp.csr_matrix(np.ones((2, 3)))
    with pytest.raises(ValueError, match="every item"):
        NegativeSampler(full, np.random.default_rng(0)).sample(np.array([1]))


def test_shuffled_batches_are_minibatches_gathered_once():
    values = torch.arange(10) * 10
    batches = list(shuffled_batches([values, -values], 4, np.random.default_rng(3)))
    expected = list(minibatches(10, 4, np.random.default_rng(3)))
    assert [len(b[0]) for b in batches] == [4, 4, 2]
    for (a, b), idx in zip(batches, expected):
        assert a.tolist() == (values[idx]).tolist() and b.tolist() == (-values[idx]).tolist()
