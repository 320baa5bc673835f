"""Logged exposures as a table: impressions, clicks and earlier-click histories; bad rows name
the file, the line and what was expected."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recprivacy.data.exposure_table import read_exposure_table
from recprivacy.errors import DataError


def test_impressions_are_ordered_per_user_and_carry_the_users_earlier_clicks():
    frame = pd.DataFrame({"user_id": ["u1"] * 6 + ["u2"] * 3, "time": ["2024-01-02"] * 3 + ["2024-01-01"] * 3 + ["2024-01-05"] * 3,
                          "item_id": list("abcdefabc"), "clicked": [1, 0, 0, 0, 1, 1, "false", "true", 0]})  # fmt: skip
    log = read_exposure_table(frame)
    ids = log.item_ids
    assert [list(log.user_ids[[log.users[r]]]) for r in range(len(log))] == [["u1"], ["u1"], ["u2"]]
    assert [list(ids[log.slate(r)]) for r in range(len(log))] == [list("def"), list("abc"), list("abc")]
    assert [list(ids[log.clicks(r)]) for r in range(len(log))] == [["e", "f"], ["a"], ["b"]]
    assert [list(ids[log.history(r)]) for r in range(len(log))] == [[], ["e", "f"], []]


def test_slate_ids_that_are_not_numbers_or_times_keep_file_order():
    frame = pd.DataFrame({"user_id": 1, "slate_id": ["x", "x", "a", "a"], "item_id": [3, 4, 5, 6], "clicked": [1, 0, 0, 1]})
    log = read_exposure_table(frame)
    np.testing.assert_array_equal(log.item_ids[log.slate(0)], [3, 4])
    np.testing.assert_array_equal(log.item_ids[log.history(1)], [3])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("user_id,slate_id,item\n1,1,a\n", r"exposures.csv: missing item column 'item_id'; columns present"),
        ("user_id,slate_id,item_id,clicked\n1,1,a,1\n1,1,b,yes\n", r"exposures.csv:3: clicked 'yes' is not a click flag; expected 0 or 1"),
        ("user_id,slate_id,item_id,clicked\n1,1,a,1\n,1,b,0\n", r"exposures.csv:3: empty 'user_id' value"),
        ("user_id,slate_id,item_id,clicked\n1,1,a,1\n1,1,a,0\n", r"exposures.csv:3: item 'a' is shown twice in the same slate"),
    ],
)
def test_bad_rows_name_the_file_line_and_what_was_expected(tmp_path, text, message):
    path = tmp_path / "exposures.csv"
    path.write_text(text)
    with pytest.raises(DataError, match=message):
        read_exposure_table(path)
