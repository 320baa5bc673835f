"""Preprocessing filters on hand-checkable tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recprivacy.data.interactions import Interactions
from recprivacy.data.preprocess import deduplicate, kcore, min_user_interactions, preprocess, to_implicit
from recprivacy.errors import ConfigError, DataError


def table(rows: list[tuple], n_users: int | None = None, n_items: int | None = None) -> Interactions:
    """Interactions from (user, item[, rating[, timestamp]]) tuples with internal ids."""
    cols = list(zip(*rows))
    users, items = np.array(cols[0]), np.array(cols[1])
    return Interactions(
        users=users,
        items=items,
        n_users=n_users or int(users.max()) + 1,
        n_items=n_items or int(items.max()) + 1,
        ratings=np.array(cols[2], dtype=float) if len(cols) > 2 else None,
        timestamps=np.array(cols[3]) if len(cols) > 3 else None,
        name="tiny",
    )


def pairs(data: Interactions) -> set[tuple[int, int]]:
    return set(zip(data.users.tolist(), data.items.tolist()))


DUPES = table([(0, 0, 1, 5), (0, 0, 5, 3), (0, 1, 2, 1), (1, 0, 3, 2), (1, 0, 4, 2)])


def test_deduplicate_keeps_latest_by_timestamp_then_row_order():
    out = deduplicate(DUPES)
    # (0,0): t=5 beats t=3; (1,0): tie at t=2 -> later row wins.
    assert out.ratings.tolist() == [1.0, 2.0, 4.0]
    assert out.timestamps.tolist() == [5, 1, 2]
    assert out.provenance[-1] == {"step": "deduplicate", "keep": "last", "removed": 2}


def test_deduplicate_keep_first_and_input_untouched():
    before = DUPES.ratings.copy()
    out = deduplicate(DUPES, keep="first")
    assert out.ratings.tolist() == [5.0, 2.0, 3.0]
    assert np.array_equal(DUPES.ratings, before) and len(DUPES) == 5
    with pytest.raises(ConfigError, match="keep"):
        deduplicate(DUPES, keep="middle")


def test_deduplicate_without_timestamps_uses_row_order():
    out = deduplicate(table([(0, 1, 3), (0, 1, 5), (1, 1, 2)]))
    assert out.ratings.tolist() == [5.0, 2.0]


def test_to_implicit_threshold_and_binary_ratings():
    out = to_implicit(table([(0, 0, 5), (0, 1, 3), (1, 0, 4), (1, 1, 1)]), threshold=4.0)
    assert pairs(out) == {(0, 0), (1, 0)}
    assert out.ratings.tolist() == [1.0, 1.0]
    assert out.provenance[-1] == {"step": "to_implicit", "threshold": 4.0, "removed": 2}


def test_to_implicit_errors():
    with pytest.raises(DataError, match="empty after to_implicit"):
        to_implicit(table([(0, 0, 3)]), threshold=4.0)
    with pytest.raises(DataError, match="needs ratings"):
        to_implicit(table([(0, 0)]))


# u0, u1: {i0, i1}; u2: {i1, i2}; u3: {i3}. With k=2, round 1 drops i2 and i3 (one row each)
# and u3; that leaves u2 with a single row, which round 2 drops. A single pass would keep (2,1).
KCORE = table([(0, 0), (0, 1), (1, 0), (1, 1), (2, 1), (2, 2), (3, 3)])


def test_kcore_iterates_until_stable():
    out = kcore(KCORE, user_k=2, item_k=2)
    assert pairs(out) == {(0, 0), (0, 1), (1, 0), (1, 1)}
    assert out.provenance[-1] == {"step": "kcore", "user_k": 2, "item_k": 2, "rounds": 2, "removed": 3}
    assert out.n_users == 4 and out.n_items == 4  # id spaces unchanged until reindex


def test_kcore_separate_thresholds_and_errors():
    assert pairs(kcore(KCORE, user_k=1, item_k=2)) == {(0, 0), (0, 1), (1, 0), (1, 1), (2, 1)}
    with pytest.raises(DataError, match="empty after kcore"):
        kcore(KCORE, user_k=3, item_k=1)
    with pytest.raises(ConfigError):
        kcore(KCORE, user_k=-1)


def test_min_user_interactions_single_pass():
    out = min_user_interactions(KCORE, 2)
    assert pairs(out) == {(0, 0), (0, 1), (1, 0), (1, 1), (2, 1), (2, 2)}
    with pytest.raises(DataError, match="empty after min_user_interactions"):
        min_user_interactions(KCORE, 3)


def test_preprocess_pipeline_order_and_reindex():
    data = table(
        [(0, 0, 5, 1), (0, 0, 2, 9), (0, 1, 5, 2), (1, 0, 4, 1), (1, 1, 4, 2), (2, 1, 5, 1), (2, 2, 1, 2)],
        n_users=4,
        n_items=4,
    ).with_changes(user_features=pd.DataFrame({"gender": ["M", "F", "M", "F"]}))
    # dedup keeps (0,0) rated 2 at t=9, which implicit then drops; left: (0,1) (1,0) (1,1) (2,1);
    # kcore(user_k=2, item_k=1) keeps user 1 only; reindex renumbers it to 0.
    out = preprocess(data, implicit_threshold=4, kcore=(2, 1))
    assert [p["step"] for p in out.provenance] == ["deduplicate", "to_implicit", "kcore", "reindex"]
    assert (out.n_users, out.n_items, len(out)) == (1, 2, 2)
    assert out.user_features["gender"].tolist() == ["F"]
    assert out.user_ids.tolist() == [1]
    # Without dedup the early 5-star (0,0) survives, so user 0 keeps two rows.
    assert preprocess(data, implicit_threshold=4, kcore=(2, 1), dedup=False).user_ids.tolist() == [0, 1]
    # kcore=2 also needs two rows per item: item 0 has one, and the cascade empties the table.
    with pytest.raises(DataError, match="empty after kcore"):
        preprocess(data, implicit_threshold=4, kcore=2)
    assert len(preprocess(data, reindex=False)) == 6


def test_preprocess_rejects_bad_kcore_spec():
    with pytest.raises(ConfigError, match="kcore"):
        preprocess(KCORE, kcore=(1, 2, 3))
