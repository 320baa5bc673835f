"""Coat shopping (Schnabel et al., ICML 2016) in its original dense ASCII files.

``train.ascii`` / ``test.ascii``: one line per user, one whitespace-separated rating 0-5 per
coat (0 = not rated); 290 users x 300 coats. ``train.ascii`` holds the ratings of the coats
each user *chose* to rate (self-selected, 24 per user); ``test.ascii`` those of 16 coats
*shown at random* (``ratings="test"``). Neither file has times, so rows come in (user, item)
order; hold out by a seeded random rule, not "latest".

``user_item_features/user_features.ascii`` has one 0/1 line of 14 per user, named by
``user_features_map.txt`` (``attribute:value`` per line: gender men/women, six age bands,
location, fashion interest). Each attribute block must be one-hot. The user table has
``gender`` (``M`` / ``F``), ``age`` (the band's lower bound: under 20 -> 0, 20-30 -> 20, ...,
over 60 -> 60, as ml-1m's ``age`` is the lower bound of its band), ``age_band`` (the band as
written), ``location`` and ``fashion_interest``. Coat's bands are ten years wide, so the 35 / 45
thresholds of paper 004's age groups fall inside the 30-40 and 40-50 bands: by lower bound the
30-40 band counts as "<35" and the 40-50 band as "35-44".

Users and items are numbered from 0 in file order (the files carry no ids). Malformed lines
raise a one-line ``DataError`` naming the file and line.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from recprivacy.data.interactions import Interactions
from recprivacy.data.loaders.tabular import decode, read_bytes, require_file
from recprivacy.errors import ConfigError, DataError

COAT_FILES = {"train": "train.ascii", "test": "test.ascii"}
USER_FEATURES = Path("user_item_features") / "user_features.ascii"
USER_FEATURES_MAP = Path("user_item_features") / "user_features_map.txt"
_GENDER = {"men": "M", "women": "F", "male": "M", "female": "F"}
_COLUMNS = {"user": "line - 1", "item": "position on the line - 1", "rating": "value > 0", "timestamp": None}
"""Where each role of the interactions comes from in a matrix file (recorded like table columns)."""


def read_matrix(path: Path, max_value: int | None = 5) -> np.ndarray:
    """The dense integer matrix of an ASCII file: one row per non-blank line, every line with
    as many values as the first; values must be integers in [0, max_value]."""
    text = decode(read_bytes(require_file(path, "Coat file")), path, "utf-8")
    rows: list[list[int]] = []
    width = None
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields:
            if line.strip() == "" and number == len(text.splitlines()):
                continue
            raise DataError("blank line; expected one row of whitespace-separated integers", path, number)
        if width is None:
            width = len(fields)
        elif len(fields) != width:
            raise DataError(f"expected {width} values like the first line, found {len(fields)}", path, number)
        try:
            values = [int(f) for f in fields]
        except ValueError:
            bad = next(f for f in fields if not re.fullmatch(r"[+-]?\d+", f))
            raise DataError(f"value {bad!r} is not an integer", path, number) from None
        if max_value is not None:
            out = [v for v in values if not 0 <= v <= max_value]
            if out:
                raise DataError(f"value {out[0]} is outside 0-{max_value}", path, number)
        rows.append(values)
    if not rows:
        raise DataError("the file is empty", path)
    return np.asarray(rows, dtype=np.int64)


def _age_lower_bound(band: str) -> int:
    """``20-30`` -> 20, ``over 60`` -> 60, ``under 20`` -> 0."""
    found = re.fullmatch(r"\s*(\d+)\s*-\s*\d+\s*", band)
    if found:
        return int(found.group(1))
    found = re.fullmatch(r"\s*(over|under)\s*(\d+)\s*", band)
    if found:
        return int(found.group(2)) if found.group(1) == "over" else 0
    raise ValueError(band)


def read_user_features(folder: Path) -> pd.DataFrame:
    """The user table (module docstring) from ``user_features.ascii`` and its map."""
    map_file = require_file(folder / USER_FEATURES_MAP, "Coat user feature map")
    columns = []
    for number, line in enumerate(decode(read_bytes(map_file), map_file, "utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        if ":" not in line:
            raise DataError(f"expected 'attribute:value', got {line.strip()!r}", map_file, number)
        attribute, value = (part.strip() for part in line.split(":", 1))
        columns.append((attribute, value, number))
    matrix = read_matrix(folder / USER_FEATURES, max_value=1)
    file = folder / USER_FEATURES
    if matrix.shape[1] != len(columns):
        raise DataError(f"{matrix.shape[1]} columns but the map {map_file.name} names {len(columns)}", file, 1)
    table: dict[str, list] = {}
    for attribute in dict.fromkeys(a for a, _, _ in columns):
        idx = [j for j, (a, _, _) in enumerate(columns) if a == attribute]
        counts = matrix[:, idx].sum(axis=1)
        if (counts != 1).any():
            row = int(np.flatnonzero(counts != 1)[0])
            raise DataError(f"{attribute} block has {int(counts[row])} ones; expected exactly one", file, row + 1)
        table[attribute] = [columns[idx[k]][1] for k in matrix[:, idx].argmax(axis=1)]
    missing = [a for a in ("gender", "age") if a not in table]
    if missing:
        raise DataError(f"the map names no {missing} columns", map_file)
    frame = pd.DataFrame({"gender_raw": table["gender"], "age_band": table["age"]})
    unknown = ~frame["gender_raw"].str.lower().isin(list(_GENDER))
    if unknown.any():
        raise DataError(f"gender value {frame['gender_raw'][unknown].iloc[0]!r}; expected one of {sorted(_GENDER)}", map_file)
    out = pd.DataFrame({"gender": frame["gender_raw"].str.lower().map(_GENDER)})
    try:
        out["age"] = [_age_lower_bound(b) for b in table["age"]]
    except ValueError as err:
        raise DataError(f"age band {err.args[0]!r}; expected 'A-B', 'over N' or 'under N'", map_file) from None
    out["age_band"] = table["age"]
    for attribute, values in table.items():
        if attribute not in ("gender", "age"):
            out[attribute.replace(" ", "_").replace("fashioninterest", "fashion_interest")] = values
    return out


def load_coat(path: str | Path, ratings: str = "train") -> Interactions:
    """Coat from its folder: the self-selected ``train`` ratings (default) or the randomly
    shown ``test`` ratings as interactions (rating > 0), with the user table."""
    if ratings not in COAT_FILES:
        raise ConfigError(f"coat ratings: expected one of {sorted(COAT_FILES)}, got {ratings!r}")
    folder = Path(path)
    file = folder / COAT_FILES[ratings]
    matrix = read_matrix(file)
    users_table = read_user_features(folder)
    if len(users_table) != matrix.shape[0]:
        raise DataError(f"{matrix.shape[0]} users in {file.name} but {len(users_table)} in {USER_FEATURES}", folder / USER_FEATURES)
    users, items = np.nonzero(matrix)
    n_users, n_items = matrix.shape
    return Interactions(
        users=users, items=items, n_users=n_users, n_items=n_items, ratings=matrix[users, items].astype(np.float64),
        user_ids=np.arange(n_users), item_ids=np.arange(n_items), user_features=users_table, name="coat",
        provenance=(
            {"step": "load", "format": "coat", "source": str(file), "ratings": ratings, "columns": dict(_COLUMNS)},
        ),
    )  # fmt: skip
