"""Ranking metrics: hand-computed values on tiny lists, a cross-check with scikit-learn's NDCG,
and the full-ranking evaluate() protocol with masking of training / excluded items."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import torch
from sklearn.metrics import ndcg_score

from recprivacy.data.interactions import Interactions
from recprivacy.metrics.ranking import evaluate, hit_matrix, ranking_metrics

L3 = 1 / np.log2(3)  # discount at rank 2
L4 = 1 / np.log2(4)  # discount at rank 3 (= 0.5)


def csr(rows: list[list[int]], n_items: int) -> sp.csr_matrix:
    """Binary user x item matrix with the given relevant items per row."""
    r = [i for i, items in enumerate(rows) for _ in items]
    c = [j for items in rows for j in items]
    return sp.csr_matrix((np.ones(len(c)), (r, c)), shape=(len(rows), n_items))


TOPK = np.array([[0, 1, 2, 3], [5, 4, 3, 2], [0, 1, 2, 3], [4, 0, 2, 3]])
TRUTH = csr([[0, 2], [3], [], [1, 4, 5]], n_items=6)


def test_hand_computed_metrics_at_2_and_4() -> None:
    out = ranking_metrics(TOPK, TRUTH, ks=(2, 4))
    # row 0: relevant {0, 2}, hits at ranks 1 and 3
    #   @2: recall 1/2, precision 1/2, hit 1, ndcg 1 / (1 + L3), mrr 1
    #   @4: recall 1, precision 2/4, hit 1, ndcg (1 + 1/log2 4) / (1 + 1/log2 3), mrr 1
    # row 1: relevant {3}, hit at rank 3
    #   @2: all 0;  @4: recall 1, precision 1/4, hit 1, ndcg (1/log2 4) / 1 = 0.5, mrr 1/3
    # row 2: no relevant items -> left out of the averages
    # row 3: relevant {1, 4, 5}, hit at rank 1 only
    #   @2: recall 1/3, precision 1/2, hit 1, ndcg 1 / (1 + L3) (IDCG over min(3, 2) = 2), mrr 1
    #   @4: recall 1/3, precision 1/4, hit 1, ndcg 1 / (1 + L3 + L4) (IDCG over 3), mrr 1
    assert out["n_users"] == 3
    assert out["recall@2"] == pytest.approx((1 / 2 + 0 + 1 / 3) / 3)
    assert out["precision@2"] == pytest.approx((1 / 2 + 0 + 1 / 2) / 3)
    assert out["hit@2"] == pytest.approx(2 / 3)
    assert out["ndcg@2"] == pytest.approx((1 / (1 + L3) + 0 + 1 / (1 + L3)) / 3)
    assert out["mrr@2"] == pytest.approx(2 / 3)
    assert out["recall@4"] == pytest.approx((1 + 1 + 1 / 3) / 3)
    assert out["precision@4"] == pytest.approx((2 / 4 + 1 / 4 + 1 / 4) / 3)
    assert out["hit@4"] == pytest.approx(1.0)
    assert out["ndcg@4"] == pytest.approx(((1 + L4) / (1 + L3) + 0.5 + 1 / (1 + L3 + L4)) / 3)
    assert out["mrr@4"] == pytest.approx((1 + 1 / 3 + 1) / 3)


def test_ndcg_two_relevant_at_ranks_1_and_3() -> None:
    # DCG = 1 + 1/log2(4); IDCG = 1 + 1/log2(3)
    out = ranking_metrics(np.array([[7, 1, 9]]), csr([[7, 9]], 10), ks=(3,))
    assert out["ndcg@3"] == pytest.approx((1 + 1 / np.log2(4)) / (1 + 1 / np.log2(3)))


def test_per_user_arrays_mark_rows_without_relevant_items_nan() -> None:
    out = ranking_metrics(torch.as_tensor(TOPK), TRUTH, ks=(4,), per_user=True)
    np.testing.assert_allclose(out["mrr@4"], [1, 1 / 3, np.nan, 1])
    np.testing.assert_allclose(out["recall@4"], [1, 1, np.nan, 1 / 3])
    np.testing.assert_array_equal(out["n_relevant"], [2, 1, 0, 3])


def test_ndcg_matches_scikit_learn_on_random_rankings() -> None:
    rng = np.random.default_rng(0)
    scores = rng.random((50, 30))
    relevance = (rng.random((50, 30)) < 0.15).astype(float)
    keep = relevance.sum(axis=1) > 0
    topk = np.argsort(-scores, axis=1)[:, :10]
    ours = ranking_metrics(topk, sp.csr_matrix(relevance), ks=(5, 10))
    for k in (5, 10):
        expected = ndcg_score(relevance[keep], scores[keep], k=k)
        assert ours[f"ndcg@{k}"] == pytest.approx(expected)
    assert ours["n_users"] == keep.sum()


def test_hit_matrix_ignores_explicit_zeros_and_counts_duplicates_once() -> None:
    # row 0 stores item 1 twice (non-canonical CSR) and item 2 as an explicit zero
    truth = sp.csr_matrix((np.array([1.0, 1.0, 0.0]), np.array([1, 1, 2]), np.array([0, 3])), shape=(1, 4))
    hits, n_rel = hit_matrix(np.array([[2, 1, 0]]), truth)
    np.testing.assert_array_equal(hits, [[False, True, False]])
    np.testing.assert_array_equal(n_rel, [1])


def test_short_list_allowed_when_catalogue_is_smaller_than_k() -> None:
    # 3 items, K asked = 5: precision@5 = hits / 5 = 2/5
    out = ranking_metrics(np.array([[2, 0, 1]]), csr([[0, 1]], 3), ks=(5,))
    assert out["precision@5"] == pytest.approx(2 / 5)
    assert out["recall@5"] == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("topk", "match"),
    [
        (np.array([[0, 0, 1, 2]] * 4), "same item twice"),
        (np.array([[0, 1, 2, 3]] * 3), "rows but truth has 4"),
        (np.array([[0, 1, 2, 6]] * 4), r"\[0, 6\)"),
        (np.array([[0, 1]] * 4), "at least max"),
        (np.array([0, 1, 2, 3]), "2-D"),
    ],
)
def test_bad_topk_is_rejected_with_a_clear_message(topk: np.ndarray, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        ranking_metrics(topk, TRUTH, ks=(4,))


class FixedScoreModel:
    """A recommender with a fixed score table; returns its own tensor (not a copy), so the test
    also proves that evaluate() does not write into the model's scores."""

    def __init__(self, scores: torch.Tensor, train: Interactions) -> None:
        self.table = scores
        self.train_csr_ = train.to_csr()

    def score(self, users: np.ndarray) -> torch.Tensor:
        return self.table[torch.as_tensor(users)]


def interactions(pairs: list[tuple[int, int]]) -> Interactions:
    u, i = zip(*pairs)
    return Interactions(users=np.array(u), items=np.array(i), n_users=3, n_items=5)


SCORES = torch.tensor(
    [[5.0, 4.0, 3.0, 2.0, 1.0], [1.0, 2.0, 3.0, 4.0, 5.0], [1.0, 1.5, 2.0, 2.5, 3.0]]
)
TRAIN = interactions([(0, 0), (1, 4), (2, 1)])
VALID = interactions([(1, 3)])
TEST = interactions([(0, 1), (0, 3), (1, 0)])


@pytest.mark.parametrize("batch_size", [1, 1024])
def test_evaluate_masks_training_and_excluded_items(batch_size: int) -> None:
    model = FixedScoreModel(SCORES, TRAIN)
    before = SCORES.clone()
    out = evaluate(model, TEST, ks=(2, 3), exclude=VALID, batch_size=batch_size)
    # user 0: train {0} masked -> ranking 1, 2, 3, 4; test {1, 3}: hits at ranks 1 and 3
    # user 1: train {4} and valid {3} masked -> ranking 2, 1, 0; test {0}: hit at rank 3
    # user 2: no test items -> not evaluated
    assert out["n_users"] == 2
    assert out["recall@2"] == pytest.approx((1 / 2 + 0) / 2)
    assert out["ndcg@2"] == pytest.approx((1 / (1 + L3) + 0) / 2)
    assert out["mrr@2"] == pytest.approx((1 + 0) / 2)
    assert out["recall@3"] == pytest.approx((1 + 1) / 2)
    assert out["precision@3"] == pytest.approx((2 / 3 + 1 / 3) / 2)
    assert out["ndcg@3"] == pytest.approx(((1 + L4) / (1 + L3) + L4) / 2)
    assert out["mrr@3"] == pytest.approx((1 + 1 / 3) / 2)
    assert torch.equal(SCORES, before)


def test_evaluate_without_exclude_can_recommend_validation_items() -> None:
    # user 1 unmasked valid item 3 takes rank 1 -> ranking 3, 2, 1; test item 0 is out of the top 3
    out = evaluate(FixedScoreModel(SCORES, TRAIN), TEST, ks=(3,), users=np.array([1]), per_user=True)
    np.testing.assert_array_equal(out["users"], [1])
    np.testing.assert_allclose(out["recall@3"], [0.0])


def test_evaluate_accepts_sparse_test_and_explicit_users() -> None:
    model = FixedScoreModel(SCORES, TRAIN)
    a = evaluate(model, TEST.to_csr(), ks=(3,), exclude=VALID.to_csr(), users=np.array([0, 1, 2]))
    b = evaluate(model, TEST, ks=(3,), exclude=VALID)
    assert a == b


def test_evaluate_rejects_unfitted_model_and_mismatched_shapes() -> None:
    with pytest.raises(ValueError, match="train_csr_"):
        evaluate(object(), TEST)
    wide = sp.csr_matrix((3, 6))
    with pytest.raises(ValueError, match="test has shape"):
        evaluate(FixedScoreModel(SCORES, TRAIN), wide)
    with pytest.raises(ValueError, match="exclude has shape"):
        evaluate(FixedScoreModel(SCORES, TRAIN), TEST, exclude=wide)
