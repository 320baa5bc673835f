"""Amazon JSON lines, S3-Rec sequences, MIND impressions and generic tables on hand-made files."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime

import numpy as np
import pandas as pd

from recprivacy.data.loaders.amazon import category_slug, load_amazon
from recprivacy.data.loaders.mind import load_mind
from recprivacy.data.loaders.s3rec import load_s3rec
from recprivacy.data.loaders.tabular import load_table

REVIEWS = [
    {
        "reviewerID": "B2",
        "asin": "X9",
        "overall": 5.0,
        "unixReviewTime": 1393545600,
        "reviewText": "fine",
        "helpful": [0, 0],
    },
    {"reviewerID": "A1", "asin": "0001", "overall": 3.0, "unixReviewTime": 1363392000, "summary": "ok"},
    {"reviewerID": "A1", "asin": "X9", "overall": 4.0, "unixReviewTime": 1377648000},
]


def test_amazon_reads_the_four_fields_and_names_the_category(tmp_path):
    file = tmp_path / "reviews_Musical_Instruments_5.json"
    file.write_text("\n".join(json.dumps(r) for r in REVIEWS) + "\n\n")
    data = load_amazon(file)
    assert data.name == "amazon-musical-instruments"
    assert list(data.user_ids) == ["A1", "B2"] and list(data.item_ids) == ["0001", "X9"]
    frame = data.to_frame()
    assert frame[["user_id", "item_id"]].values.tolist() == [["B2", "X9"], ["A1", "0001"], ["A1", "X9"]]
    assert list(frame["rating"]) == [5.0, 3.0, 4.0]
    assert list(frame["timestamp"]) == [1393545600, 1363392000, 1377648000]
    assert data.provenance[0]["format"] == "amazon-json"


def test_amazon_gzip_and_folder_lookup_by_category(tmp_path):
    with gzip.open(tmp_path / "Musical_Instruments.json.gz", "wt") as fh:
        fh.write("\n".join(json.dumps(r) for r in REVIEWS))
    (tmp_path / "Office_Products.json").write_text(json.dumps(REVIEWS[0]))
    data = load_amazon(tmp_path, "musical-instruments")
    assert len(data) == 3 and data.n_users == 2
    assert category_slug("Musical_Instruments.json.gz") == "musical-instruments"


def test_s3rec_keeps_sequence_order_and_attributes(tmp_path):
    (tmp_path / "Beauty.txt").write_text("2 12 10 11\n1 11 13\n")
    (tmp_path / "Beauty_item2attributes.json").write_text(json.dumps({"10": [1, 2], "13": [3], "99": [4]}))
    data = load_s3rec(tmp_path, "beauty")
    assert data.name == "s3rec-beauty" and data.ratings is None
    assert list(data.user_ids) == [1, 2] and list(data.item_ids) == [10, 11, 12, 13]
    sequences = [list(data.item_ids[s]) for s in data.sequences()]
    assert sequences == [[11, 13], [12, 10, 11]]
    np.testing.assert_array_equal(data.timestamps, [0, 1, 2, 0, 1])
    assert list(data.item_features["attributes"]) == [(1, 2), (), (), (3,)]


def test_s3rec_file_path_without_attributes(tmp_path):
    file = tmp_path / "Custom.txt"
    file.write_text("5 a b\n")
    data = load_s3rec(file)
    assert data.name == "s3rec-custom" and data.item_features is None
    assert list(data.item_ids) == ["a", "b"]


MIND_LINES = "7\tU2\t11/11/2019 9:05:58 AM\tN1 N2\tN3-1 N4-0 N5-0\n3\tU1\t11/12/2019 1:00:00 PM\t\tN4-0 N3-1 N5-1\n"


def _unix(*args: int) -> int:
    return int(datetime(*args, tzinfo=UTC).timestamp())


def test_mind_impressions_become_slates_clicks_and_histories(tmp_path):
    folder = tmp_path / "MINDsmall_train"
    folder.mkdir()
    (folder / "behaviors.tsv").write_text(MIND_LINES)
    log = load_mind(tmp_path)
    assert len(log) == 2 and list(log.user_ids) == ["U1", "U2"]
    assert list(log.item_ids) == ["N1", "N2", "N3", "N4", "N5"]
    np.testing.assert_array_equal(log.users, [1, 0])
    np.testing.assert_array_equal(log.times, [_unix(2019, 11, 11, 9, 5, 58), _unix(2019, 11, 12, 13, 0, 0)])
    assert list(log.slate(0)) == [2, 3, 4] and list(log.clicks(0)) == [2]
    assert list(log.slate(1)) == [3, 2, 4] and list(log.clicks(1)) == [2, 4]
    assert list(log.history(0)) == [0, 1] and list(log.history(1)) == []
    assert log.provenance[0]["source"] == str(folder / "behaviors.tsv")


def test_table_csv_with_quotes_and_iso_times(tmp_path):
    file = tmp_path / "clicks.csv"
    file.write_text(
        'uid,note,iid,stars,when\nu1,"hello, world",i2,4.5,2020-01-01T00:00:10Z\nu0,plain,i1,1,2020-01-01T00:00:00Z\n'
    )
    data = load_table(file, "uid", "iid", rating_col="stars", time_col="when")
    assert data.name == "clicks"
    assert list(data.user_ids) == ["u0", "u1"]
    np.testing.assert_array_equal(data.ratings, [4.5, 1.0])
    np.testing.assert_array_equal(data.timestamps, [1577836810, 1577836800])
    columns = {"user": "uid", "item": "iid", "rating": "stars", "timestamp": "when"}
    assert data.provenance[0] == {"step": "load", "format": "csv", "source": str(file), "columns": columns}


def test_table_separator_is_sniffed_and_integer_ids_stay_integers(tmp_path):
    file = tmp_path / "log.txt"
    file.write_text("user;item;t\n10;3;100\n2;3;50\n")
    data = load_table(file, "user", "item", time_col="t")
    assert list(data.user_ids) == [2, 10] and data.user_ids.dtype == np.int64
    np.testing.assert_array_equal(data.timestamps, [100, 50])


def test_table_parquet(tmp_path):
    file = tmp_path / "x.parquet"
    pd.DataFrame({"u": [3, 1, 3], "i": ["a", "b", "b"], "r": [1.0, 2.0, 3.0], "other": [0, 0, 0]}).to_parquet(file)
    data = load_table(file, "u", "i", rating_col="r")
    assert list(data.user_ids) == [1, 3] and list(data.item_ids) == ["a", "b"]
    np.testing.assert_array_equal(data.ratings, [1.0, 2.0, 3.0])
    assert data.provenance[0]["format"] == "parquet"
