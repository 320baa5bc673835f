"""MovieLens 100K and 1M in their original GroupLens files.

ml-100k: ``u.data`` (tab: user, item, rating, timestamp), ``u.user`` (``|``: user, age,
gender, occupation, zip), ``u.item`` (``|``, latin-1: item, title, release date, video
release date, IMDb URL, 19 genre flags in the order of ``u.genre``).
ml-1m: ``ratings.dat`` (``::``: user, item, rating, timestamp), ``users.dat`` (``::``: user,
gender, age, occupation, zip), ``movies.dat`` (``::``, latin-1: item, title, genres).

User features keep the source's values: ml-100k ``age`` is in years and ``occupation`` a word;
ml-1m ``age`` is the lower bound of the age band (1, 18, 25, 35, 45, 50, 56) and
``occupation`` the code 0-20 listed in its README. Thresholds such as ``age < 35`` therefore
mean the same on both. Item features: ``title``, ``genres`` (``|``-joined names) and, for
ml-100k, ``release_date``.

When ``ratings.dat`` is absent but the partial head ``ratings_PARTIAL_first_487650_lines.dat.gz``
of the shared datasets is present, it is read with a warning: it holds only users 1-2999.
"""

from __future__ import annotations

import operator
import warnings
from functools import reduce
from pathlib import Path

import numpy as np
import pandas as pd

from recprivacy.data.interactions import Interactions
from recprivacy.data.loaders.download import data_hint
from recprivacy.data.loaders.tabular import FieldKind, build_interactions, indexed_by, read_delimited
from recprivacy.errors import DataError

ML100K_GENRES = (
    "unknown", "Action", "Adventure", "Animation", "Children's", "Comedy", "Crime", "Documentary", "Drama",
    "Fantasy", "Film-Noir", "Horror", "Musical", "Mystery", "Romance", "Sci-Fi", "Thriller", "War", "Western",
)  # fmt: skip
"""Genre flag order of ``u.item`` (as listed in ``u.genre``)."""

ML1M_PARTIAL_RATINGS = "ratings_PARTIAL_first_487650_lines.dat.gz"
ML1M_FULL_RATINGS = 1_000_209

_RATINGS: dict[str, FieldKind] = {"user_id": "int", "item_id": "int", "rating": "float", "timestamp": "int"}
_USER_COLUMNS = ["gender", "age", "occupation", "zip_code"]


def load_ml100k(path: str | Path) -> Interactions:
    """MovieLens 100K from its folder (``u.data``, ``u.user``, ``u.item``)."""
    folder = Path(path)
    ratings = read_delimited(folder / "u.data", "\t", _RATINGS)
    return build_interactions(
        ratings,
        name="ml-100k",
        source=folder / "u.data",
        fmt="ml-100k",
        rating_col="rating",
        time_col="timestamp",
        user_features=load_ml100k_users(folder),
        item_features=_ml100k_items(folder),
        features_source={"user": folder / "u.user", "item": folder / "u.item"},
    )


def load_ml100k_users(path: str | Path) -> pd.DataFrame:
    """All users of ``u.user``, indexed by user id: gender, age (years), occupation, zip_code."""
    file = Path(path) / "u.user"
    kinds: dict[str, FieldKind] = {
        "user_id": "int",
        "age": "int",
        "gender": "str",
        "occupation": "str",
        "zip_code": "str",
    }
    return indexed_by(read_delimited(file, "|", kinds), "user_id", file)[_USER_COLUMNS]


def _ml100k_items(folder: Path) -> pd.DataFrame:
    file = folder / "u.item"
    kinds: dict[str, FieldKind] = {
        "item_id": "int", "title": "str", "release_date": "str", "video_release_date": "str", "url": "str",
        **{f"genre_{i}": "int" for i in range(len(ML100K_GENRES))},
    }  # fmt: skip
    table = indexed_by(read_delimited(file, "|", kinds, encoding="latin-1"), "item_id", file)
    flags = table[[f"genre_{i}" for i in range(len(ML100K_GENRES))]].to_numpy() == 1
    table["genres"] = _join_flags(flags, ML100K_GENRES)
    return table[["title", "release_date", "genres"]]


def _join_flags(flags: np.ndarray, names: tuple[str, ...]) -> np.ndarray:
    """Row-wise ``'|'``-join of the names whose flag is set (vectorised over rows)."""
    parts = [pd.Series(np.where(flags[:, j], name + "|", ""), dtype=str) for j, name in enumerate(names)]
    return reduce(operator.add, parts).str.removesuffix("|").to_numpy()


def load_ml1m(path: str | Path) -> Interactions:
    """MovieLens 1M from its folder (``ratings.dat``, ``users.dat``, ``movies.dat``).

    Without ``ratings.dat`` the partial ``ratings_PARTIAL_first_487650_lines.dat.gz`` is read
    and a warning names the users it covers.
    """
    folder = Path(path)
    file, partial = _ml1m_ratings_file(folder)
    ratings = read_delimited(file, "::", _RATINGS)
    extra = {}
    if partial:
        low, high = int(ratings["user_id"].min()), int(ratings["user_id"].max())
        warnings.warn(
            f"{file}: ml-1m ratings.dat is absent; reading this partial file instead, so only users "
            f"{low}-{high} are present ({len(ratings):,} of {ML1M_FULL_RATINGS:,} ratings)",
            UserWarning,
            stacklevel=2,
        )
        extra = {"partial": f"users {low}-{high}, {len(ratings)} of {ML1M_FULL_RATINGS} ratings"}
    return build_interactions(
        ratings,
        name="ml-1m",
        source=file,
        fmt="ml-1m",
        rating_col="rating",
        time_col="timestamp",
        user_features=load_ml1m_users(folder),
        item_features=_ml1m_items(folder),
        features_source={"user": folder / "users.dat", "item": folder / "movies.dat"},
        **extra,
    )


def _ml1m_ratings_file(folder: Path) -> tuple[Path, bool]:
    """(ratings file, whether it is the partial head)."""
    full = folder / "ratings.dat"
    if full.is_file():
        return full, False
    if (folder / ML1M_PARTIAL_RATINGS).is_file():
        return folder / ML1M_PARTIAL_RATINGS, True
    raise DataError(f"ml-1m ratings file not found; {data_hint('the unpacked ml-1m folder')}", full)


def load_ml1m_users(path: str | Path) -> pd.DataFrame:
    """All 6,040 users of ``users.dat``, indexed by user id: gender, age (band lower bound),
    occupation (code 0-20), zip_code."""
    file = Path(path) / "users.dat"
    kinds: dict[str, FieldKind] = {
        "user_id": "int",
        "gender": "str",
        "age": "int",
        "occupation": "int",
        "zip_code": "str",
    }
    return indexed_by(read_delimited(file, "::", kinds), "user_id", file)[_USER_COLUMNS]


def _ml1m_items(folder: Path) -> pd.DataFrame:
    file = folder / "movies.dat"
    kinds: dict[str, FieldKind] = {"item_id": "int", "title": "str", "genres": "str"}
    return indexed_by(read_delimited(file, "::", kinds, encoding="latin-1"), "item_id", file)
