"""Amazon review data (McAuley lab, 2014/2018 releases): one JSON review per line.

Reads ``reviewerID`` (user), ``asin`` (item), ``overall`` (rating 1-5) and
``unixReviewTime`` (Unix seconds); other fields (text, summary, votes) are ignored. The
dataset name is ``amazon-<category>``, the category written in lower case with dashes
(``Musical_Instruments.json`` and ``reviews_Musical_Instruments_5.json.gz`` are both
``amazon-musical-instruments``).

Lines are decoded with the standard ``json`` module in one pass: faster than ``pandas.read_json``
(measured: docs/decisions.md, Foundation), and it names the line of a malformed record.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

from recprivacy.data.interactions import Interactions
from recprivacy.data.loaders.download import data_hint
from recprivacy.data.loaders.tabular import build_interactions, decode, read_bytes
from recprivacy.errors import DataError

_FIELDS = ("reviewerID", "asin", "overall", "unixReviewTime")


def category_slug(filename: str) -> str:
    """``reviews_Musical_Instruments_5.json.gz`` -> ``musical-instruments``."""
    stem = re.sub(r"(\.json)?(\.gz)?$", "", filename)
    stem = re.sub(r"^reviews_|_5$", "", stem)
    return stem.replace("_", "-").replace(" ", "-").lower()


def find_amazon_file(folder: Path, category: str | None = None) -> Path:
    """The review file in ``folder`` for ``category`` (any, if there is exactly one)."""
    files = sorted(p for p in folder.glob("*.json*") if p.name.endswith((".json", ".json.gz")))
    if category is not None:
        files = [p for p in files if category_slug(p.name) == category]
    if len(files) != 1:
        wanted = f"for category {category!r} " if category else ""
        found = f"found {[p.name for p in files]}" if files else f"none found; {data_hint()}"
        raise DataError(f"expected one Amazon review file {wanted}(*.json or *.json.gz); {found}", folder)
    return files[0]


def load_amazon(path: str | Path, category: str | None = None) -> Interactions:
    """Amazon reviews from a JSON-lines file, or from the folder holding it."""
    path = Path(path)
    file = find_amazon_file(path, category) if path.is_dir() else path
    frame = _read_reviews(file)
    return build_interactions(
        frame,
        name=f"amazon-{category_slug(file.name)}",
        source=file,
        fmt="amazon-json",
        user_col="reviewerID",
        item_col="asin",
        rating_col="overall",
        time_col="unixReviewTime",
    )


def _read_reviews(file: Path) -> pd.DataFrame:
    """The four fields of every review, indexed by 1-based line; malformed lines raise."""
    text = decode(read_bytes(file), file, "utf-8")
    rows, numbers = [], []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise DataError(f"not valid JSON ({err.msg} at column {err.colno})", file, number) from err
        if not isinstance(record, dict):
            raise DataError("expected one JSON object per line", file, number)
        rows.append(tuple(record.get(f) for f in _FIELDS))
        numbers.append(number)
    frame = pd.DataFrame(rows, columns=list(_FIELDS), index=pd.Index(numbers, name="line"))
    for field in _FIELDS:
        _require_values(frame, field, file)
    frame["overall"] = _numbers(frame, "overall", file)
    frame["unixReviewTime"] = _numbers(frame, "unixReviewTime", file).astype(np.int64)
    frame["reviewerID"] = frame["reviewerID"].astype(str)
    frame["asin"] = frame["asin"].astype(str)
    return frame


def _require_values(frame: pd.DataFrame, field: str, file: Path) -> None:
    empty = frame[field].isna().to_numpy() | (frame[field].astype(str).str.strip() == "").to_numpy()
    if empty.any():
        raise DataError(f"field {field!r} is missing or empty", file, int(frame.index[np.argmax(empty)]))


def _numbers(frame: pd.DataFrame, field: str, file: Path) -> pd.Series:
    values = pd.to_numeric(frame[field], errors="coerce").astype(np.float64)
    bad = ~np.isfinite(values.to_numpy())
    if bad.any():
        row = int(np.argmax(bad))
        raise DataError(
            f"field {field!r}: {frame[field].iloc[row]!r} is not a finite number", file, int(frame.index[row])
        )
    return values
