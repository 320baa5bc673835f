"""Loaders on the real datasets in ../shared/datasets (found through RECPRIVACY_DATA)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recprivacy.data.loaders import load_amazon, load_mind, load_ml1m, load_ml1m_users, load_ml100k, load_s3rec
from recprivacy.data.loaders.recbole import load_recbole, write_recbole
from recprivacy.data.loaders.s3rec import S3REC_FILES

pytestmark = pytest.mark.realdata


def test_ml100k_counts_and_demographics(dataset_dir):
    data = load_ml100k(dataset_dir("ml-100k"))
    assert (data.n_users, data.n_items, len(data)) == (943, 1682, 100_000)
    assert list(data.user_features.columns[:3]) == ["gender", "age", "occupation"]
    assert data.user_features["gender"].value_counts().to_dict() == {"M": 670, "F": 273}
    assert data.user_features["age"].between(7, 73).all()
    assert set(np.unique(data.ratings)) == {1.0, 2.0, 3.0, 4.0, 5.0}
    assert data.item_features.loc[0, "title"] == "Toy Story (1995)"


def test_ml1m_users_table_and_partial_ratings(dataset_dir):
    folder = dataset_dir("ml-1m")
    users = load_ml1m_users(folder)
    assert len(users) == 6040
    assert users["gender"].value_counts().to_dict() == {"M": 4331, "F": 1709}
    with pytest.warns(UserWarning, match="only users 1-2999 are present"):
        data = load_ml1m(folder)
    assert len(data) == 487_650
    assert data.user_ids.max() <= 2999 and data.n_users == 2999
    assert data.user_features.shape == (2999, 4)
    pd.testing.assert_frame_equal(data.user_features, users.loc[data.user_ids].reset_index(drop=True))


def test_amazon_musical_instruments(dataset_dir):
    data = load_amazon(dataset_dir("amazon-5core-musical-instruments"), "musical-instruments")
    assert (data.n_users, data.n_items, len(data)) == (1429, 900, 10_261)
    assert data.user_counts().min() >= 5 and data.item_counts().min() >= 5


@pytest.mark.parametrize("key", sorted(S3REC_FILES))
def test_s3rec_counts_match_the_files(dataset_dir, key):
    folder = dataset_dir("s3rec-sequences")
    lines = (folder / f"{S3REC_FILES[key]}.txt").read_text().splitlines()
    data = load_s3rec(folder, key)
    assert data.n_users == len(lines)
    assert len(data) == sum(len(line.split()) - 1 for line in lines)
    first = lines[0].split()
    assert list(data.item_ids[data.sequences()[np.searchsorted(data.user_ids, int(first[0]))]]) == [
        int(i) for i in first[1:]
    ]
    assert data.item_features is not None and len(data.item_features) == data.n_items


def test_mind_subset(dataset_dir):
    log = load_mind(dataset_dir("mind-small-subset"))
    assert len(log) == 5000
    assert len(np.unique(log.users)) == 4637
    assert len(log.slate_items) == 189_359 and int(log.clicked.sum()) == 7542
    assert int((np.diff(log.history_offsets) == 0).sum()) == 107


def test_recbole_round_trip_of_ml100k(dataset_dir, tmp_path):
    data = load_ml100k(dataset_dir("ml-100k"))
    write_recbole(data, tmp_path / "ml-100k")
    back = load_recbole(tmp_path / "ml-100k")
    for field in ("users", "items", "ratings", "timestamps", "user_ids", "item_ids"):
        np.testing.assert_array_equal(getattr(back, field), getattr(data, field))
    pd.testing.assert_frame_equal(back.user_features, data.user_features)
    pd.testing.assert_frame_equal(back.item_features, data.item_features)
