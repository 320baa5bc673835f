"""LightGCN text splits (train.txt / valid.txt / test.txt, optional id lists) on hand-made folders."""

from __future__ import annotations

import pytest

from recprivacy.data.loaders.lightgcn import load_lightgcn, load_lightgcn_parts
from recprivacy.data.registry import load_dataset
from recprivacy.errors import DataError


def _folder(tmp_path, **files):
    folder = tmp_path / "toy"
    folder.mkdir()
    for name, text in files.items():
        (folder / f"{name}.txt").write_text(text)
    return folder


def _pairs(data):
    return sorted(zip(data.user_ids[data.users].tolist(), data.item_ids[data.items].tolist()))


def test_parts_share_one_id_space_and_keep_the_files_split(tmp_path):
    folder = _folder(tmp_path, train="0 0 2\n1 1\n2\n", test="0 1\n2 3\n")
    parts = load_lightgcn_parts(folder)
    assert list(parts) == ["train", "test"]
    train, test = parts["train"], parts["test"]
    assert train.n_users == test.n_users == 3 and train.n_items == test.n_items == 4
    assert _pairs(train) == [(0, 0), (0, 2), (1, 1)]
    assert _pairs(test) == [(0, 1), (2, 3)]  # user 2 has no training items (a bare id line)
    assert train.provenance[-1] == {"step": "split", "method": "given", "part": "train"}
    assert _pairs(load_lightgcn(folder)) == sorted(_pairs(train) + _pairs(test))


def test_id_lists_map_back_to_original_ids(tmp_path):
    folder = _folder(tmp_path, train="0 1\n1 0 1\n", user_list="org_id remap_id\nA9 0\nB7 1\n",
                     item_list="org_id remap_id\n501 0\n77 1\n")  # fmt: skip
    data = load_dataset(folder)  # a folder with train.txt is read as LightGCN
    assert _pairs(data) == [("A9", 77), ("B7", 77), ("B7", 501)]


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"train": "0 1 1\n"}, r"train.txt:1: item 1 is listed twice for user 0"),
        ({"train": "0 1\n0 2\n"}, r"train.txt:2: user '0' already has a sequence on an earlier line"),
        ({"test": "0 1\n"}, r"LightGCN train.txt not found"),
        ({"train": "0 1\n", "item_list": "org_id remap_id\n501 0\n"}, r"item id 1 is not listed in item_list.txt"),
    ],
)
def test_bad_folders_are_clear_errors(tmp_path, files, message):
    with pytest.raises(DataError, match=message):
        load_lightgcn_parts(_folder(tmp_path, **files))
