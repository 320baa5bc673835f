"""The Coat loader (a third dataset with gender and age for paper 004) on hand-made files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from recprivacy.data.loaders.coat import load_coat
from recprivacy.data.registry import load_dataset
from recprivacy.errors import ConfigError, DataError
from recprivacy.federated.features import attribute_labels

MAP = "gender:men\ngender:women\nage:20-30\nage:30-40\nage:over 60\nage:under 20\nlocation:urban\nlocation:rural\n"
USERS = "1 0 1 0 0 0 1 0\n0 1 0 0 1 0 0 1\n0 1 0 1 0 0 1 0\n"
TRAIN = "0 3 0 5\n1 0 0 0\n0 0 2 4\n"


def _write(folder: Path, train: str = TRAIN, users: str = USERS, mapping: str = MAP) -> Path:
    (folder / "user_item_features").mkdir(parents=True, exist_ok=True)
    (folder / "train.ascii").write_text(train)
    (folder / "test.ascii").write_text("1 0 0 0\n0 0 0 2\n0 5 0 0\n")
    (folder / "user_item_features" / "user_features.ascii").write_text(users)
    (folder / "user_item_features" / "user_features_map.txt").write_text(mapping)
    return folder


def test_coat_files_parse_to_ratings_and_user_attributes(tmp_path):
    data = load_coat(_write(tmp_path / "coat"))
    assert (data.n_users, data.n_items, len(data)) == (3, 4, 5)
    assert data.users.tolist() == [0, 0, 1, 2, 2] and data.items.tolist() == [1, 3, 0, 2, 3]
    assert data.ratings.tolist() == [3, 5, 1, 2, 4] and data.timestamps is None
    table = data.user_features
    assert table["gender"].tolist() == ["M", "F", "F"]
    assert table["age"].tolist() == [20, 60, 30] and table["age_band"].tolist() == ["20-30", "over 60", "30-40"]
    assert table["location"].tolist() == ["urban", "rural", "urban"]
    assert attribute_labels(data, "gender")[0].tolist() == [0, 1, 1]
    assert attribute_labels(data, "age")[0].tolist() == [0, 2, 0]  # 20 and 30 are < 35, 60 >= 45
    test = load_coat(tmp_path / "coat", ratings="test")
    assert len(test) == 3 and test.ratings.tolist() == [1, 2, 5]
    # by name through the registry, with data_dir the parent folder
    assert len(load_dataset("coat", tmp_path)) == 5


@pytest.mark.parametrize(
    ("train", "users", "match", "line"),
    [
        ("0 3 0 5\n1 0 0\n0 0 2 4\n", USERS, "expected 4 values like the first line, found 3", 2),
        ("0 3 0 5\n1 0 x 0\n0 0 2 4\n", USERS, "value 'x' is not an integer", 2),
        ("0 3 0 5\n1 0 0 0\n0 0 7 4\n", USERS, "value 7 is outside 0-5", 3),
        ("0 3 0 5\n\n0 0 2 4\n", USERS, "blank line", 2),
        (TRAIN, "1 0 1 0 0 0 1 0\n1 1 0 0 1 0 0 1\n0 1 0 1 0 0 1 0\n", "gender block has 2 ones", 2),
        (TRAIN, "1 0 1 0 0 0 1 0\n0 1 0 0 0 0 0 1\n0 1 0 1 0 0 1 0\n", "age block has 0 ones", 2),
    ],
)
def test_malformed_lines_are_one_line_errors_naming_the_line(tmp_path, train, users, match, line):
    _write(tmp_path, train=train, users=users)
    with pytest.raises(DataError, match=match) as err:
        load_coat(tmp_path)
    assert "\n" not in str(err.value) and err.value.line == line


def test_mismatched_files_and_options_are_errors(tmp_path):
    _write(tmp_path, train="0 3 0 5\n1 0 0 0\n")
    with pytest.raises(DataError, match="2 users in train.ascii but 3"):
        load_coat(tmp_path)
    _write(tmp_path, mapping=MAP.replace("age:over 60", "age:sixties"))
    with pytest.raises(DataError, match="age band 'sixties'"):
        load_coat(tmp_path)
    _write(tmp_path)
    with pytest.raises(ConfigError, match="coat ratings"):
        load_coat(tmp_path, ratings="valid")
    assert np.isfinite(load_coat(tmp_path).ratings).all()
