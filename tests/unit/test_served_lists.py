"""Logged served lists: reading, checking (file:line errors) and serving through a Target."""

from __future__ import annotations

import numpy as np
import pytest

from recprivacy.data.interactions import Interactions
from recprivacy.data.served_lists import read_served_lists
from recprivacy.errors import DataError
from recprivacy.experiments.target import Target


def write(tmp_path, text: str):
    path = tmp_path / "lists.csv"
    path.write_text(text)
    return path


def test_lists_are_served_in_rank_order_as_internal_ids(tmp_path):
    path = write(tmp_path, "user_id,rank,item_id\n7,2,b\n7,1,c\n9,1,a\n9,2,c\n")
    data = Interactions(users=[0, 1], items=[0, 1], n_users=2, n_items=3, user_ids=np.array([7, 9]),
                        item_ids=np.array(["a", "b", "c"]))  # fmt: skip
    served = Target.from_lists(path).serve(np.array([1, 0]), 2, data, trained=True)
    np.testing.assert_array_equal(served, [[0, 2], [2, 1]])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("user_id,rank,item\n1,1,a\n", r"lists.csv: missing item column 'item_id'; columns present"),
        ("user_id,rank,item_id\n1,1,a\n1,x,b\n", r"lists.csv:3: rank 'x' is not a positive integer rank"),
        ("user_id,rank,item_id\n1,1,a\n1,1,b\n", r"lists.csv:3: user 1 has this rank twice"),
        ("user_id,rank,item_id\n1,1,a\n1,3,b\n", r"lists.csv: the list of user 1 skips rank 2"),
        ("user_id,rank,item_id\n1,1,a\n2,1,a\n1,2,a\n", r"lists.csv:4: the list of user 1 holds item 'a' twice \(ranks 1 and 2\)"),
    ],
)
def test_bad_lists_name_the_file_line_and_what_was_expected(tmp_path, text, message):
    with pytest.raises(DataError, match=message):
        read_served_lists(write(tmp_path, text))


def test_missing_or_short_lists_are_refused_when_served(tmp_path):
    lists = read_served_lists(write(tmp_path, "user_id,rank,item_id\n1,1,0\n"))
    with pytest.raises(DataError, match=r"no served list for user 2 \(1 users without one\)"):
        lists.top(np.array([2]), 1, np.arange(3))
    with pytest.raises(DataError, match=r"user 1 has a served list of 1 items; expected at least k = 2"):
        lists.top(np.array([1]), 2, np.arange(3))
    with pytest.raises(DataError, match=r"served item id 0 is not in the interactions' catalogue"):
        lists.top(np.array([1]), 1, np.arange(1, 3))
