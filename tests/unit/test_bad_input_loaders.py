"""Bad inputs to the table loaders (issue 29, "no silent wrong results"), one row per case.

Every failing case asserts the exact ``file:line: `` (or ``file: ``) prefix of a one-line
DataError, the words saying what was expected, that no raw bytes or traceback leak into the
message, that the folder gains no file, and that the input is unchanged byte for byte. The
loading cases check which columns were used, as ``describe()`` (and so the run's dataset
fingerprint and report) shows them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from typer.testing import CliRunner

from recprivacy.cli import app
from recprivacy.data.registry import load_dataset
from recprivacy.errors import ConfigError, DataError
from recprivacy.report.markdown import appendix

ELF_HEAD = b"\x7fELF\x02\x01\x01\x00\x00\x00\xff\xfe" + bytes(range(256))
PNG_HEAD = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
GOOD = "user_id,item_id,rating\n1,10,4\n"


@dataclass(frozen=True)
class Bad:
    """A file that must be refused: the error's line (None: the file as a whole) and text."""

    name: str
    content: bytes | str
    line: int | None
    expected: str
    options: dict[str, Any] = field(default_factory=dict)


BAD_CSV = [
    Bad("rating_nan.csv", "user_id,item_id,rating\n1,10,4\n2,10,NaN\n", 3, "field 'rating': 'NaN' is not a finite number"),
    Bad("rating_inf.csv", "user_id,item_id,rating\n1,10,4\n2,10,inf\n", 3, "field 'rating': 'inf' is not a finite number"),
    Bad("rating_neg.csv", "user_id,item_id,rating\n1,10,4\n2,10,-1\n", 3, "field 'rating': -1.0 is negative; expected a rating >= 0"),
    Bad("rating_text.csv", "user_id,item_id,rating\n1,10,4\n2,10,good\n", 3, "field 'rating': 'good' is not a finite number"),
    Bad("rating_empty.csv", "user_id,item_id,rating\n1,10,4\n2,10,\n", 3, "field 'rating': '' is not a finite number"),
    Bad("stars_synonym.csv", "userId,movieId,Stars\n1,10,4\n2,10,x\n", 3, "field 'Stars': 'x' is not a finite number"),
    Bad("after_blank.csv", "user_id,item_id,rating\n1,10,4\n\n2,10,NaN\n", 4, "'NaN' is not a finite number"),
    Bad("multiline_neg.csv", 'user_id,item_id,note,rating\n1,10,"two\nlines",4\n2,10,plain,-1\n', 4, "field 'rating': -1.0 is negative"),
    Bad("multiline_text.csv", 'user_id,item_id,note,rating\n1,10,"two\nlines",4\n2,10,plain,x\n', 4, "field 'rating': 'x' is not"),
    Bad("crlf.csv", "user_id,item_id,rating\r\n1,10,4\r\n2,10,NaN\r\n", 3, "'NaN' is not a finite number"),
    Bad("bom_bad.csv", "\ufeffuser_id,item_id,rating\n1,10,4\n2,10,-2\n", 3, "field 'rating': -2.0 is negative"),
    Bad("time_text.csv", "user_id,item_id,timestamp\n1,10,100\n2,10,soon\n", 3, "field 'timestamp': 'soon' is neither a number nor an ISO 8601 time"),
    Bad("time_nan.csv", "user_id,item_id,ts\n1,10,100\n2,10,NaN\n", 3, "field 'ts': 'NaN' is neither a number nor an ISO 8601 time"),
    Bad("time_fraction.csv", "user_id,item_id,time\n1,10,100\n2,10,100.5\n", 3, "field 'time': 100.5 is not a whole number of seconds"),
    Bad("time_mixed.csv", "user_id,item_id,time\n1,10,2020-01-01\n2,10,100\n", 3, "field 'time': '100' is a number unlike the first value; expected one kind of time"),
    Bad("time_inf.csv", "user_id,item_id,time\n1,10,100\n2,10,inf\n", 3, "field 'time': inf is not a number of seconds"),
    Bad("user_empty.csv", "user_id,item_id\n1,10\n,11\n", 3, "field 'user_id': '' is empty; expected an id"),
    Bad("extra_field.csv", "user_id,item_id\n1,10\n2,10,5\n", 3, "wrong number of fields: found 3"),
    Bad("open_quote.csv", 'user_id,item_id\n"1\n2",10\n3,"11\n4,12\n', 4, "a quoted field opens here and is never closed"),
    Bad("binary.csv", ELF_HEAD, None, "binary content at byte 7; expected a text file"),
    Bad("png.csv", PNG_HEAD, 1, "byte 0 is not valid utf-8 text; expected a utf-8 text file"),
    Bad("latin1.csv", "user_id,item_id\n1,caf\xe9\n".encode("latin-1"), 2, "byte 21 is not valid utf-8 text"),
    Bad("empty.csv", "", None, "the file is empty; expected a header line naming the columns"),
    Bad("blank.csv", "\n\n", None, "the file is empty; expected a header line naming the columns"),
    Bad("blank_header.csv", "\nuser_id,item_id\n1,10\n", 1, "blank line; expected a header line naming the columns"),
    Bad("header_only.csv", "user_id,item_id,rating\n", None, "no data lines after the header line"),
    Bad("header_blank_lines.csv", "user_id,item_id\n\n\n", None, "no data lines after the header line"),
    Bad("dup_header.csv", "user_id,item_id,item_id\n1,10,11\n", 1, "column 'item_id' appears twice in the header"),
    Bad("no_user.csv", "who,item_id\n1,10\n", 1, "no user column: the header has ['who', 'item_id']; name it with user_col="),
    Bad("user_option.csv", GOOD, 1, "user_col='uid' names no column; the header has ['user_id', 'item_id', 'rating']", {"user_col": "uid"}),
    Bad("item_option.csv", GOOD, 1, "item_col='movie' names no column", {"item_col": "movie"}),
    Bad("rating_option.csv", GOOD, 1, "rating_col='stars' names no column", {"rating_col": "stars"}),
    Bad("two_roles.csv", GOOD, 1, "one column is named for two roles", {"user_col": "user_id", "item_col": "user_id"}),
    Bad("ambiguous.csv", "user_id,item_id,Rating,rating\n1,10,4,5\n", 1, "columns 'Rating' and 'rating' could both be the rating column"),
    Bad("t.csv.gz", b"not gzip at all", None, "not a readable gzip file"),
]  # fmt: skip


def _write(folder: Path, name: str, content: bytes | str) -> Path:
    path = folder / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


def _refused(call: Callable[[], object], path: Path, line: int | None, expected: str) -> str:
    """The one-line message of the DataError ``call`` raises, checked; the folder and file are unchanged."""
    before = {p.name: p.read_bytes() for p in path.parent.iterdir()}
    with pytest.raises(DataError) as err:
        call()
    message = str(err.value)
    prefix = f"{path}:{line}: " if line is not None else f"{path}: "
    assert message.startswith(prefix), message
    assert expected in message, message
    assert (err.value.path, err.value.line) == (path, line)
    assert "\n" not in message and "Traceback" not in message
    assert message.isprintable() and "\\x" not in message and "b'" not in message, message
    assert {p.name: p.read_bytes() for p in path.parent.iterdir()} == before
    return message


@pytest.mark.parametrize("case", BAD_CSV, ids=lambda c: c.name)
def test_bad_table_file_is_refused_at_its_line(tmp_path, case):
    path = _write(tmp_path, case.name, case.content)
    _refused(lambda: load_dataset(path, **case.options), path, case.line, case.expected)


BAD_PARQUET = [
    ("rating_nan", {"user_id": [1, 2], "item_id": [10, 10], "rating": [4.0, float("nan")]}, "row 2: field 'rating': '' is not a finite number"),
    ("rating_inf", {"user_id": [1, 2], "item_id": [10, 10], "score": [4.0, float("inf")]}, "row 2: field 'score': 'inf' is not a finite number"),
    ("rating_neg", {"user_id": [1, 2, 3], "item_id": [10, 10, 10], "rating": [4, 5, -1]}, "row 3: field 'rating': -1.0 is negative"),
    ("rating_text", {"user_id": [1, 2], "item_id": [10, 10], "rating": ["4", "five"]}, "row 2: field 'rating': 'five' is not a finite number"),
    ("time_text", {"userId": [1, 2], "itemId": [10, 10], "timestamp": ["2020-01-01", "later"]}, "row 2: field 'timestamp': 'later' is neither"),
    ("user_null", {"user_id": ["a", None], "item_id": [10, 10]}, "row 2: field 'user_id': '' is empty; expected an id"),
    ("no_rows", {"user_id": pd.Series([], dtype="int64"), "item_id": pd.Series([], dtype="int64")}, "the table has no rows"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "columns", "expected"), BAD_PARQUET, ids=[c[0] for c in BAD_PARQUET])
def test_bad_parquet_is_refused_at_its_row(tmp_path, name, columns, expected):
    path = tmp_path / f"{name}.parquet"
    pd.DataFrame(columns).to_parquet(path)
    _refused(lambda: load_dataset(path), path, None, expected)


def test_unreadable_parquet_echoes_no_bytes(tmp_path):
    path = _write(tmp_path, "x.parquet", ELF_HEAD)
    _refused(lambda: load_dataset(path), path, None, "not a readable Parquet file")


LOADS = [
    ("bom.csv", "\ufeffuser_id,item_id,rating\n1,10,4\n", {}, ("user_id", "item_id", "rating", "none")),
    ("movielens.csv", "userId,movieId,rating,timestamp\n1,10,4.5,964982703\n", {}, ("userId", "movieId", "rating", "timestamp")),
    ("spaced.tsv", "User ID\tItem ID\tScore\tDate\n1\t10\t4\t2020-01-01\n", {}, ("User ID", "Item ID", "Score", "Date")),
    ("no_rating.csv", GOOD, {"rating_col": ""}, ("user_id", "item_id", "none", "none")),
    ("item_is_score.csv", "user_id,score\n1,10\n", {"item_col": "score"}, ("user_id", "score", "none", "none")),
    ("renamed.csv", "a,b,c\n1,10,2\n", {"user_col": "a", "item_col": "b", "rating_col": "c"}, ("a", "b", "c", "none")),
]  # fmt: skip


@pytest.mark.parametrize(("name", "text", "options", "columns"), LOADS, ids=[c[0] for c in LOADS])
def test_columns_used_are_recognised_and_described(tmp_path, name, text, options, columns):
    path = _write(tmp_path, name, text)
    before = path.read_bytes()
    info = load_dataset(path, **options).describe()
    used = tuple(info[f"{role}_column"] for role in ("user", "item", "rating", "timestamp"))
    assert used == columns
    assert info["ratings"] == (columns[2] != "none") and info["timestamps"] == (columns[3] != "none")
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == [name]


def test_bom_header_keeps_ids_and_ratings(tmp_path):
    data = load_dataset(_write(tmp_path, "bom.csv", "\ufeffuser_id,item_id,rating\n7,10,4\n8,11,5\n"))
    assert list(data.user_ids) == [7, 8] and list(data.ratings) == [4.0, 5.0]


def test_parquet_columns_are_recognised(tmp_path):
    path = tmp_path / "x.parquet"
    times = pd.to_datetime(["2020-01-01T00:00:10Z", "2020-01-01T00:00:00Z"])
    pd.DataFrame({"user_id": [3, 1], "item_id": ["a", "b"], "rating": [1.5, 2.0], "timestamp": times}).to_parquet(path)
    data = load_dataset(path)
    assert data.source_columns() == {"user": "user_id", "item": "item_id", "rating": "rating", "timestamp": "timestamp"}
    assert list(data.user_ids) == [1, 3] and list(data.ratings) == [1.5, 2.0]
    assert list(data.timestamps) == [1577836810, 1577836800]


def test_fingerprint_and_report_show_the_columns(tmp_path):
    fingerprint = load_dataset(_write(tmp_path, "t.csv", GOOD)).fingerprint()
    assert (fingerprint["rating_column"], fingerprint["timestamp_column"]) == ("rating", "none")
    assert fingerprint["provenance"][0]["columns"]["rating"] == "rating"
    dataset_section = appendix({"dataset": fingerprint})[0]
    rows = dataset_section["tables"][0]["rows"]
    assert ["rating_column", "rating"] in rows and ["timestamp_column", "none"] in rows


def test_missing_dataset_names_the_cli_and_python_ways(tmp_path, monkeypatch):
    monkeypatch.delenv("RECPRIVACY_DATA", raising=False)
    monkeypatch.setenv("RECPRIVACY_CACHE", str(tmp_path / "cache"))
    with pytest.raises(DataError) as err:
        load_dataset("ml-100k", data_dir=tmp_path)
    message = str(err.value)
    assert message.startswith("dataset 'ml-100k' not found") and "\n" not in message
    for fragment in (
        "`recprivacy datasets download ml-100k`",
        "load_dataset('ml-100k', download=True)",
        "put a folder ml-100k/ holding u.data, u.user, u.item",
        "--data-dir (Python: data_dir=)",
        "$RECPRIVACY_DATA",
        str(tmp_path / "cache"),
    ):
        assert fragment in message, message
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("name", "options", "expected"),
    [
        ("t.csv", {"rating_column": "r"}, "['rating_column'] not understood: a CSV/Parquet table takes options user_col,"),
        ("ml-100k", {"rating_col": "r"}, "['rating_col'] not understood: dataset 'ml-100k' takes no options"),
    ],
)
def test_unknown_dataset_option_is_a_config_error(tmp_path, name, options, expected):
    _write(tmp_path, "t.csv", GOOD)
    (tmp_path / "ml-100k").mkdir()
    _write(tmp_path / "ml-100k", "u.data", "1\t10\t4\t100\n")
    with pytest.raises(ConfigError, match=re.escape(expected)):
        load_dataset(tmp_path / name if name.endswith(".csv") else name, tmp_path, **options)


CLI_CASES = [c for c in BAD_CSV if c.name in ("rating_nan.csv", "binary.csv")]


@pytest.mark.parametrize("case", CLI_CASES, ids=lambda c: c.name)
def test_cli_prints_one_error_line_and_exits_2(tmp_path, case):
    path = _write(tmp_path, case.name, case.content)
    before = path.read_bytes()
    result = CliRunner().invoke(app, ["datasets", "describe", str(path)])
    where = f"{path}:{case.line}: " if case.line is not None else f"{path}: "
    assert result.exit_code == 2
    assert result.stderr == f"error: {where}{case.expected}\n"
    assert result.stdout == ""
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == [case.name]


def test_cli_describe_shows_the_columns_used(tmp_path):
    path = _write(tmp_path, "bom.csv", "\ufeffuser_id,item_id,rating\n1,10,4\n")
    result = CliRunner().invoke(app, ["datasets", "describe", str(path)])
    assert result.exit_code == 0, result.output
    rows = {line.split()[1]: line.split()[3] for line in result.stdout.splitlines() if "_column" in line}
    assert rows == {"user_column": "user_id", "item_column": "item_id", "rating_column": "rating", "timestamp_column": "none"}
