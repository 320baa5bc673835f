"""What ``recprivacy audit --target / --members / --interactions`` read: the user's target
named ``module:attribute``, and user ids and interactions from CSV/Parquet files (a
``DataError`` names the file, the column and, for an empty id, the line).
"""

from __future__ import annotations

import sys
from importlib import import_module
from pathlib import Path

import numpy as np
import pandas as pd

from recprivacy.data.tables import read_table
from recprivacy.errors import ConfigError, DataError
from recprivacy.experiments.target import Target


def load_target(spec: str, training: bool = False) -> Target:
    """The target named ``module:attribute`` (the current folder is importable).

    Parameters
    ----------
    spec:
        ``module:attribute`` of a fitted model, a callable ``(histories, k)`` or, with
        ``training``, a training function ``frame -> model``.
    training:
        Whether the attribute is a training function.

    Returns
    -------
    Target
    """
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ConfigError(f"--target {spec!r}: expected module:attribute, e.g. mymodels:svd")
    if "" not in sys.path:
        sys.path.insert(0, "")
    try:
        obj = getattr(import_module(module_name), attribute)
    except ImportError as err:
        raise ConfigError(f"--target {spec!r}: cannot import module {module_name!r} ({err})") from None
    except AttributeError:
        raise ConfigError(f"--target {spec!r}: module {module_name!r} has no attribute {attribute!r}") from None
    return Target.from_training(obj) if training else Target.from_model(obj)


def read_users(path: str | Path, column: str) -> np.ndarray:
    """The user ids in column ``column`` of a CSV/Parquet file (``--members``).

    Parameters
    ----------
    path:
        The file.
    column:
        The user id column.

    Returns
    -------
    numpy.ndarray
    """
    frame = read_table(path)
    if column not in frame.columns:
        raise DataError(f"missing user column {column!r}; columns present: {list(frame.columns)}", path)
    return frame[column].drop_duplicates().to_numpy()


def interactions_file(path: str | Path, user_col: str, item_col: str) -> pd.DataFrame:
    """``user_id, item_id`` (+ ``timestamp`` / ``rating`` when present) read from ``path``.

    Parameters
    ----------
    path:
        CSV/Parquet file of interactions.
    user_col, item_col:
        Column names of the user and item ids.

    Returns
    -------
    pandas.DataFrame
    """
    frame = read_table(path)
    for option, col in (("--user-col", user_col), ("--item-col", item_col)):
        if col not in frame.columns:
            raise DataError(f"missing column {col!r} ({option}); columns present: {list(frame.columns)}", path)
    empty = frame[[user_col, item_col]].isna().any(axis=1).to_numpy()
    if empty.any():
        raise DataError(f"empty {user_col!r} or {item_col!r} value", path, int(np.argmax(empty)) + 2)
    return frame.rename(columns={user_col: "user_id", item_col: "item_id"})
