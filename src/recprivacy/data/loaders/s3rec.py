"""S3-Rec preprocessed sequences (Zhou et al., CIKM 2020, ``RUCAIBox/CIKM2020-S3Rec`` ``data/``).

``NAME.txt`` holds one user per line: ``user item1 item2 ...``, items in time order. The data
are implicit (no ratings) and carry no times, so each interaction's timestamp is its
0-based position in the user's sequence; ``Interactions.sequences()`` then returns the
original order. ``NAME_item2attributes.json`` (item -> attribute ids) becomes the item
feature ``attributes`` (a tuple of attribute ids, empty for items it does not list).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from recprivacy.data.interactions import Interactions
from recprivacy.data.loaders.tabular import as_canonical_ints, build_interactions, decode, read_bytes, require_file
from recprivacy.errors import DataError

S3REC_FILES = {
    "beauty": "Beauty",
    "sports": "Sports_and_Outdoors",
    "toys": "Toys_and_Games",
    "yelp": "Yelp",
    "lastfm": "LastFM",
}
"""Short name -> file stem in the S3-Rec data folder."""


def load_s3rec(path: str | Path, dataset: str | None = None, attributes: bool = True) -> Interactions:
    """S3-Rec sequences from ``NAME.txt``, or from the data folder and a short ``dataset`` name
    (``beauty``, ``sports``, ``toys``, ``yelp``, ``lastfm``)."""
    file = _sequence_file(Path(path), dataset)
    frame = read_user_lines(file)
    key = next((k for k, stem in S3REC_FILES.items() if stem == file.stem), file.stem.lower())
    attr_file = file.with_name(f"{file.stem}_item2attributes.json")
    features = _attributes(attr_file, frame["item_id"].unique()) if attributes and attr_file.is_file() else None
    return build_interactions(
        frame,
        name=f"s3rec-{key}",
        source=file,
        fmt="s3rec",
        time_col="timestamp",
        item_features=features,
        features_source={"item": attr_file},
    )


def _sequence_file(path: Path, dataset: str | None) -> Path:
    if not path.is_dir():
        return require_file(path, "S3-Rec sequence file")
    if dataset not in S3REC_FILES:
        raise DataError(f"name the S3-Rec dataset: one of {sorted(S3REC_FILES)}, got {dataset!r}", path)
    return require_file(path / f"{S3REC_FILES[dataset]}.txt", "S3-Rec sequence file")


def read_user_lines(file: Path, min_items: int = 1) -> pd.DataFrame:
    """Lines ``user item1 item2 ...`` as one row per (user, item, position) with the item's
    0-based position on its line as ``timestamp``, indexed by the 1-based line of the user.

    A line needs at least ``min_items`` items (LightGCN files allow a bare user id: 0); a user
    id may appear on one line only; blank lines are ignored."""
    lines = pd.Series(decode(read_bytes(file), file, "utf-8").split("\n"), dtype=str)
    lines.index = pd.RangeIndex(1, len(lines) + 1, name="line")
    tokens = lines.str.split()
    lengths = tokens.str.len()
    tokens, lengths = tokens[lengths > 0], lengths[lengths > 0]
    if tokens.empty:
        raise DataError("no sequences (the file is empty)", file)
    short = (lengths < 1 + min_items).to_numpy()
    if short.any():
        line = int(lengths.index[np.argmax(short)])
        items = "one item id" if min_items == 1 else f"{min_items} item ids"
        raise DataError(f"expected a user id followed by at least {items}", file, line)
    flat = tokens.explode()
    position = flat.groupby(level=0).cumcount().to_numpy()
    users = flat[position == 0]
    repeated = users.duplicated().to_numpy()
    if repeated.any():
        line = int(users.index[np.argmax(repeated)])
        raise DataError(
            f"user {users.iloc[np.argmax(repeated)]!r} already has a sequence on an earlier line", file, line
        )
    is_item = position > 0
    frame = pd.DataFrame(
        {
            "user_id": as_canonical_ints(users.reindex(flat.index[is_item])),
            "item_id": as_canonical_ints(flat[is_item]),
            "timestamp": position[is_item] - 1,
        }
    )
    return frame


def _attributes(file: Path, items: np.ndarray) -> pd.DataFrame:
    """``attributes`` tuple per item in ``items`` (indexed by item id)."""
    try:
        table = json.loads(decode(read_bytes(file), file, "utf-8"))
    except json.JSONDecodeError as err:
        raise DataError(f"not valid JSON ({err.msg} at column {err.colno})", file, err.lineno) from err
    if not isinstance(table, dict):
        raise DataError("expected a JSON object mapping item id to a list of attribute ids", file)
    return pd.DataFrame({"attributes": [tuple(table.get(str(i), ())) for i in items]}, index=items)
