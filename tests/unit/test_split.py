"""Splits: per-user sizes by the rounding rule, disjoint covers, time order, seeds, partitions."""

from __future__ import annotations

import numpy as np
import pytest

from recprivacy.data.interactions import Interactions
from recprivacy.data.split import part_names, random_split, temporal_split, user_partition
from recprivacy.errors import ConfigError, DataError

COUNTS = [1, 2, 5, 10, 15]  # interactions per user 0..4


def make_data(counts=COUNTS, n_items: int = 20) -> Interactions:
    """User u has counts[u] rows on items 0..n-1 with timestamps in *descending* row order,
    so time order differs from row order; each row's timestamp is unique."""
    users = np.repeat(np.arange(len(counts)), counts)
    items = np.concatenate([np.arange(n) for n in counts])
    timestamps = 1000 - np.arange(len(users))
    return Interactions(users=users, items=items, n_users=len(counts) + 1, n_items=n_items, timestamps=timestamps)


def per_user(parts: tuple[Interactions, ...], n_users: int) -> np.ndarray:
    return np.stack([np.bincount(p.users, minlength=n_users) for p in parts], axis=1)


def assert_disjoint_cover(data: Interactions, parts: tuple[Interactions, ...]) -> None:
    stamps = np.concatenate([p.timestamps for p in parts])
    assert len(stamps) == len(data) and set(stamps.tolist()) == set(data.timestamps.tolist())
    for p in parts:
        assert (p.n_users, p.n_items) == (data.n_users, data.n_items)
        assert p.user_ids is data.user_ids


def test_random_split_sizes_follow_rounding_rule():
    data = make_data()
    parts = random_split(data, (0.8, 0.1, 0.1), seed=0)
    # n=1 -> train keeps it; n=2 -> bounds floor(1.6)=1, floor(1.8)=1; n=5 -> 4, floor(4.5)=4;
    # n=10 -> 8, 9; n=15 -> 12, floor(13.5)=13. User 5 has no rows.
    expected = [[1, 0, 0], [1, 0, 1], [4, 0, 1], [8, 1, 1], [12, 1, 2], [0, 0, 0]]
    assert per_user(parts, data.n_users).tolist() == expected
    assert_disjoint_cover(data, parts)
    assert [p.provenance[-1]["part"] for p in parts] == ["train", "valid", "test"]
    assert parts[0].provenance[-1] == {
        "step": "split", "method": "random", "ratios": [0.8, 0.1, 0.1], "seed": 0, "part": "train"
    }  # fmt: skip


def test_random_split_two_parts_and_roundoff():
    data = make_data()
    assert per_user(random_split(data, (0.7, 0.3)), data.n_users)[3].tolist() == [7, 3]
    # 0.7 + 0.1 = 0.7999999999999999 in floating point: the second cut for n=10 must still be 8
    assert per_user(random_split(data, (0.7, 0.1, 0.2)), data.n_users)[3].tolist() == [7, 1, 2]


def test_random_split_is_seeded():
    data = make_data()
    a = random_split(data, seed=1)
    b = random_split(data, seed=1)
    c = random_split(data, seed=2)
    assert all(np.array_equal(x.timestamps, y.timestamps) for x, y in zip(a, b))
    assert not all(np.array_equal(x.timestamps, y.timestamps) for x, y in zip(a, c))


def test_random_split_shuffles_within_users():
    data = make_data([40] * 50, n_items=40)
    train = random_split(data, (0.5, 0.5), seed=0)[0]
    # A shuffle, not a prefix: half of each user's items, but not always items 0..19.
    assert np.all(np.bincount(train.users) == 20)
    assert (train.items >= 20).mean() == pytest.approx(0.5, abs=0.05)


@pytest.mark.parametrize("ratios", [(0.8, 0.1), (1.0,), (0.0, 1.0), (0.9, -0.1, 0.2), (0.5, float("nan"))])
def test_bad_ratios(ratios):
    with pytest.raises(ConfigError, match="ratios"):
        random_split(make_data(), ratios)


def test_temporal_split_by_ratio_respects_time():
    data = make_data()
    train, test = temporal_split(data, ratios=(0.8, 0.2))
    assert per_user((train, test), data.n_users)[:5].tolist() == [[1, 0], [1, 1], [4, 1], [8, 2], [12, 3]]
    for u in range(5):
        if (test.users == u).any():
            assert train.timestamps[train.users == u].max() < test.timestamps[test.users == u].min()
    # timestamps fall with row order, so each user's test rows are their *first* rows
    assert sorted(test.items[test.users == 4].tolist()) == [0, 1, 2]
    assert_disjoint_cover(data, (train, test))


def test_temporal_split_leave_last():
    data = make_data()
    train, valid, test = temporal_split(data, leave_last=1, n_parts=3)
    assert per_user((train, valid, test), data.n_users)[:5].tolist() == [
        [1, 0, 0], [1, 0, 1], [3, 1, 1], [8, 1, 1], [13, 1, 1]
    ]  # fmt: skip
    ts = data.timestamps
    assert test.timestamps[test.users == 4].tolist() == [ts[data.users == 4].max()]
    assert valid.timestamps[valid.users == 4].tolist() == [np.sort(ts[data.users == 4])[-2]]
    train2, test2 = temporal_split(data, leave_last=2)
    assert per_user((train2, test2), data.n_users)[:5].tolist() == [[1, 0], [1, 1], [3, 2], [8, 2], [13, 2]]
    assert test2.provenance[-1] == {
        "step": "split", "method": "temporal", "leave_last": 2, "n_parts": 2, "part": "test"
    }  # fmt: skip


def test_temporal_split_argument_errors():
    data = make_data()
    with pytest.raises(ConfigError, match="exactly one"):
        temporal_split(data)
    with pytest.raises(ConfigError, match="exactly one"):
        temporal_split(data, ratios=(0.5, 0.5), leave_last=1)
    with pytest.raises(ConfigError, match="n_parts"):
        temporal_split(data, leave_last=1, n_parts=4)


def test_part_names():
    assert part_names(2) == ("train", "test")
    assert part_names(4) == ("part0", "part1", "part2", "part3")


def test_user_partition_sizes_disjoint_and_seeded():
    data = make_data([3] * 10 + [1] * 5)
    groups = user_partition(data, {"a": 0.2, "b": 0.3, "c": 0.5}, seed=0, min_interactions=2)
    # 10 eligible users (the 5 with one row are excluded): cut at floor(2), floor(5), floor(10).
    assert {k: len(v) for k, v in groups.items()} == {"a": 2, "b": 3, "c": 5}
    everyone = np.concatenate(list(groups.values()))
    assert sorted(everyone.tolist()) == list(range(10))
    again = user_partition(data, {"a": 0.2, "b": 0.3, "c": 0.5}, seed=0, min_interactions=2)
    assert all(np.array_equal(groups[k], again[k]) for k in groups)
    other = user_partition(data, {"a": 0.2, "b": 0.3, "c": 0.5}, seed=1, min_interactions=2)
    assert any(not np.array_equal(groups[k], other[k]) for k in groups)


def test_user_partition_leftover_and_users_without_rows():
    data = make_data()  # user 5 has no rows and is never assigned
    groups = user_partition(data, {"x": 0.4, "y": 0.4})
    assert [len(v) for v in groups.values()] == [2, 2]
    assert 5 not in np.concatenate(list(groups.values()))


@pytest.mark.parametrize(
    "fractions, match",
    [({}, "at least one"), ({"a": 0.0}, r"fractions\['a'\]"), ({"a": -0.2}, "> 0"), ({"a": 0.6, "b": 0.5}, "sum")],
)
def test_user_partition_validation(fractions, match):
    with pytest.raises(ConfigError, match=match):
        user_partition(make_data(), fractions)


def test_user_partition_empty_group():
    with pytest.raises(DataError, match="group 'b' is empty"):
        user_partition(make_data(), {"a": 0.9, "b": 0.05})
