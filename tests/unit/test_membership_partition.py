"""Data partition, item vectors and top-k lists of the membership attack (paper 001 §2.2-2.3)."""

import numpy as np
import pytest

from recprivacy.attacks.membership.item_vectors import fit_item_vectors, load_item_vectors, save_item_vectors
from recprivacy.attacks.membership.lists import check_list_length, hit_rate, popular_lists, popularity_ranking
from recprivacy.attacks.membership.partition import holdout_rows, partition_dataset
from recprivacy.data.interactions import Interactions
from recprivacy.data.synthetic import make_synthetic
from recprivacy.errors import ConfigError, DataError


@pytest.fixture(scope="module")
def data():
    return make_synthetic(n_users=150, n_items=120, n_interactions=6000, seed=0)


def _pairs(d: Interactions) -> set:
    return set(zip(d.users.tolist(), d.items.tolist()))


def test_user_mode_groups_are_disjoint_balanced_and_long(data):
    part = partition_dataset(data, seed=0)
    shadow, target = part.shadow, part.target
    users = [set(shadow.users), set(target.users), set(np.unique(part.vector.users))]
    assert not (users[0] & users[1]) and not (users[0] & users[2]) and not (users[1] & users[2])
    for group in (shadow, target):
        assert abs(len(group.members) - len(group.nonmembers)) <= 1
        assert not set(group.members) & set(group.nonmembers)
        assert group.data.user_counts()[group.users].min() >= 20
        # the recommender learns from members only, minus one held-out row each
        assert set(np.unique(group.train.users)) == set(group.members)
        assert len(group.heldout) == len(group.users)
        assert not _pairs(group.train) & _pairs(group.heldout)
        np.testing.assert_array_equal(group.labels, np.r_[np.ones(len(group.members)), np.zeros(len(group.nonmembers))])


def test_restrict_mode_leaves_only_items_with_vectors(data):
    part = partition_dataset(data, seed=1, item_coverage="restrict")
    covered = part.vector.item_counts() > 0
    assert covered.all()  # the catalogue is renumbered to the covered items
    assert part.coverage["catalogue"] == part.vector.n_items == part.target.data.n_items
    for group in (part.shadow, part.target):
        assert group.data.items.max() < part.vector.n_items


def test_record_mode_splits_rows_not_users(data):
    part = partition_dataset(data, seed=0, split_mode="record", min_interactions=10, item_coverage="init")
    shared = set(part.shadow.users) & set(part.target.users)
    assert shared  # the same users appear in both parts ...
    assert not _pairs(part.shadow.data) & _pairs(part.target.data)  # ... with disjoint records
    assert not _pairs(part.shadow.data) & _pairs(part.vector)
    assert part.shadow.data.user_counts()[part.shadow.users].min() >= 10


def test_same_seed_same_partition(data):
    a, b = partition_dataset(data, seed=5), partition_dataset(data, seed=5)
    np.testing.assert_array_equal(a.target.members, b.target.members)
    np.testing.assert_array_equal(a.shadow.heldout.items, b.shadow.heldout.items)
    c = partition_dataset(data, seed=6)
    assert not np.array_equal(a.target.members, c.target.members)


def test_no_user_with_twenty_interactions_is_a_clear_error():
    short = Interactions(users=np.repeat(np.arange(30), 5), items=np.tile(np.arange(5), 30), n_users=30, n_items=5, name="short")
    with pytest.raises(DataError, match=r"short: 0 users have at least 20 interactions \(the longest history has 5\)"):
        partition_dataset(short)


def test_subsample_is_stratified(data):
    group = partition_dataset(data, seed=0).shadow
    half = group.subsample(0.5, seed=0)
    assert len(half.members) == len(group.members) // 2
    assert len(half.nonmembers) == len(group.nonmembers) // 2
    assert set(half.members) <= set(group.members)
    assert set(np.unique(half.train.users)) == set(half.members)


def test_holdout_latest_takes_the_newest_row():
    d = Interactions(users=[0, 0, 0, 1, 1], items=[0, 1, 2, 0, 3], n_users=2, n_items=4, timestamps=[5, 9, 1, 2, 1])
    mask = holdout_rows(d, "latest", np.random.default_rng(0))
    assert mask.tolist() == [False, True, False, True, False]


# ---------------------------------------------------------------------------- lists


def test_popular_list_counts_members_only(data):
    part = partition_dataset(data, seed=0)
    target = part.target
    ranking = popularity_ranking(target.train)
    counts = target.train.item_counts()
    assert np.all(np.diff(counts[ranking]) <= 0)
    # items only non-members touched never beat an item members interacted with
    member_items = set(np.unique(target.train.items))
    nonmember_only = set(np.unique(target.data.subset_users(target.nonmembers).items)) - member_items
    top = set(ranking[: len(member_items)].tolist())
    assert not (nonmember_only & top)
    lists = popular_lists(ranking, 3, 5)
    assert (lists == ranking[:5]).all()


def test_popularity_ties_break_by_item_id():
    d = Interactions(users=[0, 0, 1, 1], items=[3, 1, 3, 2], n_users=2, n_items=4)
    assert popularity_ranking(d).tolist() == [3, 1, 2, 0]


def test_hit_rate_by_hand():
    heldout = Interactions(users=[0, 1, 2], items=[4, 0, 2], n_users=3, n_items=5)
    lists = np.array([[4, 1], [2, 3], [2, 0]])
    assert hit_rate(lists, np.array([0, 1, 2]), heldout) == pytest.approx(2 / 3)
    assert hit_rate(lists[[1]], np.array([1]), heldout) == 0.0


def test_k_larger_than_the_catalogue_is_a_clear_error():
    d = Interactions(users=[0, 0, 1], items=[0, 1, 2], n_users=2, n_items=10, name="tiny")
    with pytest.raises(ConfigError, match=r"k=11 is larger than the catalogue of tiny \(10 items\)"):
        check_list_length(11, d)
    with pytest.raises(ConfigError, match="expected k <= 8"):
        check_list_length(9, d)
    check_list_length(8, d)


# ---------------------------------------------------------------------------- item vectors


def test_item_vectors_shape_and_unseen_items(data):
    part = partition_dataset(data, seed=0, item_coverage="init")
    for mode in ("rating", "implicit", "svd"):
        v = fit_item_vectors(part.vector, n_factors=8, mode=mode, seed=0)
        assert v.shape == (part.vector.n_items, 8) and np.isfinite(v).all()
    implicit = part.vector.with_changes(ratings=None)
    assert fit_item_vectors(implicit, n_factors=4, seed=0).shape == (part.vector.n_items, 4)


def test_item_vectors_are_seeded(data):
    part = partition_dataset(data, seed=0)
    a = fit_item_vectors(part.vector, n_factors=6, seed=3)
    np.testing.assert_array_equal(a, fit_item_vectors(part.vector, n_factors=6, seed=3))
    assert not np.array_equal(a, fit_item_vectors(part.vector, n_factors=6, seed=4))
    with pytest.raises(ConfigError, match="item vector mode"):
        fit_item_vectors(part.vector, mode="pca")


def test_vector_file_round_trip_and_missing_items(tmp_path):
    vectors = np.arange(12, dtype=np.float32).reshape(4, 3) / 7
    path = save_item_vectors(tmp_path / "vectors.tsv", vectors, ["a", "b", "c", "d"])
    np.testing.assert_allclose(load_item_vectors(path, ["c", "a"]), vectors[[2, 0]], rtol=1e-6)
    with pytest.raises(DataError, match=r"vectors.tsv: no vector for 2 of the 3 catalogue items \(first: e, f\)"):
        load_item_vectors(path, ["a", "e", "f"])
    bad = tmp_path / "bad.tsv"
    bad.write_text("a\t1\t2\nb\t1\n")
    with pytest.raises(DataError, match=r"bad.tsv:2: 1 numbers, but earlier lines have 2"):
        load_item_vectors(bad, ["a", "b"])
    bad.write_text("a\t1\tx\n")
    with pytest.raises(DataError, match=r"bad.tsv:1: expected an item id followed by numbers"):
        load_item_vectors(bad, ["a"])
    with pytest.raises(DataError, match="not found"):
        load_item_vectors(tmp_path / "missing.tsv", ["a"])
