"""Paper 004's user features and labels on the real MovieLens files."""

from __future__ import annotations

import numpy as np
import pytest

from recprivacy.data.loaders.movielens import load_ml100k
from recprivacy.data.split import temporal_split
from recprivacy.federated.features import attribute_labels, user_features


@pytest.mark.realdata
def test_ml100k_features_and_labels_match_table_1_and_the_digest(dataset_dir):
    data = load_ml100k(dataset_dir("ml-100k"))
    train, test = temporal_split(data, leave_last=1)
    assert len(test) == 943
    feats = user_features(train)
    assert feats.dim == 44
    gender, names = attribute_labels(data, "gender")
    assert names == ("M", "F") and np.bincount(gender).tolist() == [670, 273]
    age, _ = attribute_labels(data, "age")
    assert np.bincount(age, minlength=3).sum() == 943 and set(np.unique(age)) == {0, 1, 2}
    x = feats.x
    for attribute, cols in feats.blocks.items():
        assert np.allclose(x[:, cols].sum(axis=1), 1.0), attribute
    assert np.allclose(x[:, 6:11].sum(axis=1), 1.0)  # rating-level shares
    assert (x[:, 13] >= 0).all()  # entropy


@pytest.mark.realdata
def test_coat_counts_and_attributes(dataset_dir):
    from recprivacy.data.registry import load_dataset

    data = load_dataset("coat", dataset_dir("coat"))
    assert (data.n_users, data.n_items, len(data)) == (290, 300, 6960)
    assert np.array_equal(data.user_counts(), np.full(290, 24))
    gender, _ = attribute_labels(data, "gender")
    assert np.bincount(gender).tolist() == [162, 128]
    age, _ = attribute_labels(data, "age")
    assert np.bincount(age, minlength=3).tolist() == [214, 43, 33]  # band lower bounds vs 35 / 45
    assert user_features(data).dim == 18 + 2 + 3
    shown = load_dataset("coat", dataset_dir("coat"), ratings="test")
    assert (shown.n_users, shown.n_items, len(shown)) == (290, 300, 4640)
