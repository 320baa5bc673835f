"""User features x_u and private attribute labels of paper 004 (Table I).

Each device holds one user and a dense feature vector ``x_u`` that enters the recommender
(``z_u = E_U x_u``). The statistical part is computed from the user's **training**
interactions only, with fixed, data-independent transforms, because a federated
server may not compute global statistics:

====  ===================================================  ======  ============================
 #    feature                                              dims    transform
====  ===================================================  ======  ============================
 1    number of interacted items                           1       log1p(n) / log1p(n_items)
 2    number of ratings at each level 1-5                  5       log1p(c) / log1p(n_items)
 2    percentage of ratings at each level 1-5              5       as is
 3    % low (1, 2) and % high (4, 5) ratings               2       as is
 4    entropy of the rating levels                         1       / log 5
 5    median, min, max, mean rating                        4       / 5
 6    gender one-hot (M, F)                                2
 7    occupation one-hot                                   21      (ml-100k words, ml-1m codes)
 8    age group one-hot (<35, 35-44, >=45)                 3       Table I's groups are garbled
====  ===================================================  ======  ============================

giving d1 = 44 on MovieLens. Datasets without ratings keep only feature 1; a demographic
block is present when the dataset has the column. ml-100k ``age`` is in years and ml-1m
``age`` is the lower bound of its band (1, 18, 25, 35, 45, 50, 56); the thresholds 35 and 45
are band bounds, so both map to the same three groups (ml-1m: 1/18/25 -> 0, 35 -> 1,
45/50/56 -> 2).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from recprivacy.data.interactions import Interactions
from recprivacy.errors import ConfigError, DataError

ATTRIBUTES = ("gender", "age", "occupation")
AGE_GROUPS = ("<35", "35-44", ">=45")
_AGE_BOUNDS = (35, 45)
_STAT_COLUMNS = (
    ["n_items"]
    + [f"count_{r}" for r in range(1, 6)]
    + [f"share_{r}" for r in range(1, 6)]
    + ["share_low", "share_high", "entropy", "median", "min", "max", "mean"]
)


@dataclass(frozen=True)
class UserFeatures:
    """The feature matrix ``x`` ``[n_users, d1]`` (float32) with its column names; ``blocks``
    maps each attribute present to its one-hot column indices (the columns the trivial
    zero-column attack, ``attacks.attribute.zero_column_attack``, reads)."""

    x: np.ndarray
    columns: tuple[str, ...]
    blocks: dict[str, np.ndarray]

    @property
    def dim(self) -> int:
        return self.x.shape[1]


def attribute_labels(data: Interactions, attribute: str) -> tuple[np.ndarray, tuple[str, ...]]:
    """Integer class of every user for ``attribute`` and the class names.

    ``gender``: 0 = M, 1 = F. ``age``: the three groups of ``AGE_GROUPS``. ``occupation``:
    codes of the sorted distinct values. A ``ConfigError`` names the attributes the dataset
    has when it lacks this one; a ``DataError`` names the first user with a missing value.
    """
    if attribute not in ATTRIBUTES:
        raise ConfigError(f"attribute: expected one of {list(ATTRIBUTES)}, got {attribute!r}")
    table = data.user_features
    have = [] if table is None else [a for a in ATTRIBUTES if a in table.columns]
    if attribute not in have:
        raise ConfigError(f"attribute {attribute!r}: dataset {data.name!r} has no such user feature; it has {have}")
    values = table[attribute]
    if values.isna().any():
        row = int(np.flatnonzero(values.isna().to_numpy())[0])
        raise DataError(f"{data.name}: user {data.user_ids[row]} has no {attribute} value")
    if attribute == "gender":
        g = values.astype(str).str.upper().str[0]
        bad = ~g.isin(["M", "F"])
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise DataError(f"{data.name}: user {data.user_ids[row]} has gender {values.iloc[row]!r}; expected M or F")
        return (g == "F").to_numpy(dtype=np.int64), ("M", "F")
    if attribute == "age":
        age = pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64)
        if np.isnan(age).any():
            row = int(np.flatnonzero(np.isnan(age))[0])
            raise DataError(f"{data.name}: user {data.user_ids[row]} has age {values.iloc[row]!r}; expected a number")
        return np.searchsorted(np.asarray(_AGE_BOUNDS), age, side="right").astype(np.int64), AGE_GROUPS
    codes, names = pd.factorize(values.astype(str), sort=True)
    return codes.astype(np.int64), tuple(str(n) for n in names)


def _one_hot(codes: np.ndarray, n: int) -> np.ndarray:
    out = np.zeros((len(codes), n), dtype=np.float64)
    out[np.arange(len(codes)), codes] = 1.0
    return out


def rating_statistics(train: Interactions) -> np.ndarray:
    """Table I features 1-5 of every user ``[n_users, 18]`` from ``train`` (see module table).

    Users without training interactions get zeros. Without ratings only column 0 is filled.
    """
    n_users, n_items = train.n_users, train.n_items
    counts = train.user_counts().astype(np.float64)
    out = np.zeros((n_users, len(_STAT_COLUMNS)), dtype=np.float64)
    scale = np.log1p(n_items)
    out[:, 0] = np.log1p(counts) / scale
    if train.ratings is None or len(train) == 0:
        return out
    level = np.clip(np.rint(train.ratings), 1, 5).astype(np.int64)
    per_level = np.zeros((n_users, 5))
    np.add.at(per_level, (train.users, level - 1), 1.0)
    share = per_level / np.maximum(counts, 1.0)[:, None]
    out[:, 1:6] = np.log1p(per_level) / scale
    out[:, 6:11] = share
    out[:, 11] = share[:, 0] + share[:, 1]
    out[:, 12] = share[:, 3] + share[:, 4]
    with np.errstate(divide="ignore", invalid="ignore"):
        out[:, 13] = -np.where(share > 0, share * np.log(share), 0.0).sum(axis=1) / np.log(5.0)
    frame = pd.DataFrame({"u": train.users, "r": train.ratings}).groupby("u")["r"]
    stats = frame.agg(["median", "min", "max", "mean"])
    out[stats.index.to_numpy(), 14:18] = stats.to_numpy() / 5.0
    return out


def user_features(train: Interactions) -> UserFeatures:
    """``x_u`` of every user (module table): statistics from ``train`` plus the demographic
    one-hot blocks the dataset has (gender, occupation, age group)."""
    parts = [rating_statistics(train)]
    columns = list(_STAT_COLUMNS)
    blocks: dict[str, np.ndarray] = {}
    have = [] if train.user_features is None else [a for a in ("gender", "occupation", "age") if a in train.user_features]
    for attribute in have:
        codes, names = attribute_labels(train, attribute)
        blocks[attribute] = np.arange(len(columns), len(columns) + len(names))
        parts.append(_one_hot(codes, len(names)))
        columns += [f"{attribute}={n}" for n in names]
    x = np.concatenate(parts, axis=1).astype(np.float32)
    return UserFeatures(x, tuple(columns), blocks)
