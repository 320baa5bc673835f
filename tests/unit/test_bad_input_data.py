"""Malformed, missing and empty inputs: one DataError naming the file and 1-based line;
inputs are never modified."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import pytest

from recprivacy.data.loaders.amazon import load_amazon
from recprivacy.data.loaders.mind import load_mind
from recprivacy.data.loaders.movielens import load_ml1m, load_ml100k
from recprivacy.data.loaders.recbole import load_recbole
from recprivacy.data.loaders.s3rec import load_s3rec
from recprivacy.data.loaders.tabular import load_table
from recprivacy.errors import DataError

GOOD_USERS = "1|30|F|other|00000\n2|40|M|writer|11111\n"
GOOD_ITEMS = "10|A (1990)|01-Jan-1990||u|" + "|".join(["0"] * 19) + "\n"


def _ml100k(folder: Path, data: str, users: str = GOOD_USERS, items: str = GOOD_ITEMS) -> Path:
    (folder / "u.data").write_text(data)
    (folder / "u.user").write_text(users)
    (folder / "u.item").write_text(items)
    return folder


def _fails_at(call, path: Path, line: int | None, *fragments: str) -> DataError:
    with pytest.raises(DataError) as err:
        call()
    message = str(err.value)
    assert err.value.path == path and err.value.line == line, message
    prefix = f"{path}:{line}: " if line is not None else f"{path}: "
    assert message.startswith(prefix) and "\n" not in message, message
    for fragment in fragments:
        assert fragment in message, message
    return err.value


@pytest.mark.parametrize(
    ("data", "line", "fragment"),
    [
        ("1\t10\t3\t100\n2\t10\t4\t200\t9\n", 2, "wrong number of fields: found 5"),
        ("1\t10\t3\t100\n1\t10\t4\t200\n2\t10\t4\n", 3, "expected 4 fields separated by '\\t', found 3"),
        ("1\t10\tabc\t100\n", 1, "field 'rating': 'abc' is not a finite number"),
        ("1\t10\t3\t100\n2\t10\tNaN\t200\n", 2, "'NaN' is not a finite number"),
        ("1\t10\t3\t100\n\n2\t10\tinf\t200\n", 3, "'inf' is not a finite number"),
        ("1\t10\t3\t100\nx\t10\t4\t200\n", 2, "field 'user_id': 'x' is not an integer"),
        ("1\t10\t3\t1.5\n", 1, "field 'timestamp': '1.5' is not an integer"),
    ],
)
def test_malformed_ratings_line(tmp_path, data, line, fragment):
    _ml100k(tmp_path, data)
    _fails_at(lambda: load_ml100k(tmp_path), tmp_path / "u.data", line, fragment)


def test_blank_lines_are_skipped_but_counted(tmp_path):
    _ml100k(tmp_path, "1\t10\t3\t100\n\n2\t10\t4\t200\n\n")
    assert len(load_ml100k(tmp_path)) == 2


def test_ml1m_short_line_names_the_double_colon(tmp_path):
    (tmp_path / "ratings.dat").write_text("1::10::5::978300760\n2::10::4\n")
    (tmp_path / "users.dat").write_text("1::F::1::10::48067\n2::M::56::16::70072\n")
    (tmp_path / "movies.dat").write_text("10::A (1990)::Drama\n")
    _fails_at(lambda: load_ml1m(tmp_path), tmp_path / "ratings.dat", 2, "expected 4 fields separated by '::', found 3")


def test_rating_of_a_user_missing_from_the_users_file(tmp_path):
    _ml100k(tmp_path, "1\t10\t3\t100\n7\t10\t4\t200\n")
    _fails_at(lambda: load_ml100k(tmp_path), tmp_path / "u.data", 2, "user 7 has no row in", str(tmp_path / "u.user"))


def test_rating_of_an_item_missing_from_the_items_file(tmp_path):
    _ml100k(tmp_path, "1\t10\t3\t100\n2\t11\t4\t200\n")
    _fails_at(lambda: load_ml100k(tmp_path), tmp_path / "u.data", 2, "item 11 has no row in", "u.item")


def test_user_listed_twice(tmp_path):
    _ml100k(tmp_path, "1\t10\t3\t100\n", users=GOOD_USERS + "1|31|F|other|00000\n")
    _fails_at(lambda: load_ml100k(tmp_path), tmp_path / "u.user", 3, "user_id 1 is listed twice")


def test_missing_file_says_where_data_belong(tmp_path):
    (tmp_path / "u.user").write_text(GOOD_USERS)
    _fails_at(lambda: load_ml100k(tmp_path), tmp_path / "u.data", None, "not found", "--data-dir", "RECPRIVACY_DATA")
    _fails_at(lambda: load_ml1m(tmp_path), tmp_path / "ratings.dat", None, "not found", "--data-dir")


def test_empty_files(tmp_path):
    _ml100k(tmp_path, "")
    _fails_at(lambda: load_ml100k(tmp_path), tmp_path / "u.data", None, "the file is empty")
    _ml100k(tmp_path, "\n\n")
    _fails_at(lambda: load_ml100k(tmp_path), tmp_path / "u.data", None, "the file is empty")
    inter = tmp_path / "x.inter"
    inter.write_text("user_id:token\titem_id:token\n")
    _fails_at(lambda: load_recbole(inter), inter, None, "no data lines after the header line")


def test_invalid_text_encoding_and_gzip(tmp_path):
    _ml100k(tmp_path, "1\t10\t3\t100\n")
    (tmp_path / "u.user").write_bytes(b"1|30|F|other|00000\n2|40|M|wr\xe9ter|11111\n")
    _fails_at(lambda: load_ml100k(tmp_path), tmp_path / "u.user", 2, "not valid utf-8")
    broken = tmp_path / "t.csv.gz"
    broken.write_bytes(b"not gzip at all")
    _fails_at(lambda: load_table(broken, "u", "i"), broken, None, "not a readable gzip file")


def test_amazon_bad_lines(tmp_path):
    file = tmp_path / "Toys.json"
    good = json.dumps({"reviewerID": "a", "asin": "b", "overall": 5.0, "unixReviewTime": 1})
    file.write_text(good + "\n" + '{"reviewerID": "a", "asin": \n')
    _fails_at(lambda: load_amazon(file), file, 2, "not valid JSON")
    file.write_text(good + "\n\n" + json.dumps({"reviewerID": "a", "asin": "c", "unixReviewTime": 1}) + "\n")
    _fails_at(lambda: load_amazon(file), file, 3, "field 'overall' is missing or empty")
    file.write_text(json.dumps({"reviewerID": "a", "asin": "b", "overall": "five", "unixReviewTime": 1}) + "\n")
    _fails_at(lambda: load_amazon(file), file, 1, "field 'overall': 'five' is not a finite number")


MIND_OK = "1\tU1\t11/11/2019 9:05:58 AM\tN1\tN2-1 N3-0\n"


@pytest.mark.parametrize(
    ("bad", "fragment"),
    [
        ("2\tU1\t11/11/2019 9:05:58 AM\tN1\tN2-1 N3\n", "impression 'N3' is not 'NewsID-0' or 'NewsID-1'"),
        ("2\tU1\t2019-11-11 09:05\tN1\tN2-1\n", "time '2019-11-11 09:05' is not like"),
        ("2\tU1\t11/11/2019 9:05:58 AM\tN2-1\n", "expected 5 fields separated by '\\t', found 4"),
        ("2\tU1\t11/11/2019 9:05:58 AM\tN1\t\n", "the impressions field is empty"),
    ],
)
def test_mind_bad_lines(tmp_path, bad, fragment):
    file = tmp_path / "behaviors.tsv"
    file.write_text(MIND_OK + bad)
    _fails_at(lambda: load_mind(file), file, 2, fragment)


def test_s3rec_bad_lines(tmp_path):
    file = tmp_path / "Beauty.txt"
    file.write_text("1 2 3\n\n2\n")
    _fails_at(lambda: load_s3rec(file), file, 3, "expected a user id followed by at least one item id")
    file.write_text("1 2 3\n2 4\n1 5\n")
    _fails_at(lambda: load_s3rec(file), file, 3, "user '1' already has a sequence")


def test_recbole_bad_header_and_values(tmp_path):
    file = tmp_path / "x.inter"
    file.write_text("user_id:token\titem_id:int\n1\t2\n")
    _fails_at(lambda: load_recbole(file), file, 1, "'item_id:int' is not 'name:type'")
    file.write_text("user_id:token\titem_id:token\trating:float\n1\t2\t3\n1\t3\tgood\n")
    _fails_at(lambda: load_recbole(file), file, 3, "field 'rating:float': 'good' is not a finite number")
    file.write_text("user_id:token\titem_id:token\ttimestamp:float\n1\t2\t3.5\n")
    _fails_at(lambda: load_recbole(file), file, 2, "field 'timestamp': 3.5 is not a whole number")
    file.write_text("user_id:token\tuser_id:token\n1\t2\n")
    _fails_at(lambda: load_recbole(file), file, 1, "'user_id' appears twice")


def test_table_bad_values_and_columns(tmp_path):
    file = tmp_path / "t.csv"
    file.write_text("u,i,r,t\n1,2,3,2020-01-01\n1,3,,2020-01-02\n")
    _fails_at(lambda: load_table(file, "u", "i", rating_col="r"), file, 3, "field 'r': '' is not a finite number")
    _fails_at(lambda: load_table(file, "user", "i"), file, 1, "user_col='user' names no column")
    file.write_text("u,i,t\n1,2,2020-01-01\n1,3,yesterday\n")
    _fails_at(
        lambda: load_table(file, "u", "i", time_col="t"),
        file,
        3,
        "'yesterday' is neither a number nor an ISO 8601 time",
    )
    file.write_text("u,i\n1,2\n,3\n")
    _fails_at(lambda: load_table(file, "u", "i"), file, 3, "field 'u': '' is empty")


def _fingerprints(folder: Path) -> dict[str, tuple[str, int]]:
    return {
        p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns) for p in sorted(folder.iterdir())
    }


def test_inputs_are_never_modified(tmp_path):
    _ml100k(tmp_path, "1\t10\t3\t100\n2\t10\t4\t200\n")
    with gzip.open(tmp_path / "ratings.csv.gz", "wt") as fh:
        fh.write("user_id,item_id\n1,2\n")
    before = _fingerprints(tmp_path)
    load_ml100k(tmp_path)
    load_table(tmp_path / "ratings.csv.gz", "user_id", "item_id")
    (tmp_path / "u.data").write_text("1\t10\t3\t100\n2\t10\tbad\t200\n")
    before["u.data"] = _fingerprints(tmp_path)["u.data"]
    with pytest.raises(DataError):
        load_ml100k(tmp_path)
    assert _fingerprints(tmp_path) == before
