"""The auditor's data as recprivacy holds them (:class:`~.own.Audit`): frames or ``Interactions``
turned into internal ids, with a ``DataError`` naming the argument (``what``), the row and the
unknown id when an id is not in the interactions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from recprivacy.data.interactions import Interactions
from recprivacy.data.served_lists import shown
from recprivacy.errors import ConfigError, DataError

Table = Interactions | pd.DataFrame


def as_interactions(table: Table, what: str) -> Interactions:
    """``table`` as ``Interactions`` (a frame needs ``user_id, item_id``; ``timestamp`` and
    ``rating`` are used when present)."""
    if isinstance(table, Interactions):
        return table
    if not isinstance(table, pd.DataFrame):
        raise ConfigError(f"{what}: expected Interactions or a pandas DataFrame, got {type(table).__name__}")
    return Interactions.from_frame(table, rating_col="rating" if "rating" in table.columns else None,
                                   time_col="timestamp" if "timestamp" in table.columns else None, name=what)  # fmt: skip


def internal_users(ids: Sequence[Any], full: Interactions, what: str) -> np.ndarray:
    """Sorted internal ids of original user ids (``DataError`` naming the first unknown one)."""
    ids = np.asarray(list(ids))
    found = pd.Index(full.user_ids).get_indexer(ids) if len(ids) else np.zeros(0, dtype=np.int64)
    if (found < 0).any():
        raise DataError(f"user id {shown(ids[int(np.argmin(found))])!r} is not in the interactions", what)
    return np.unique(found).astype(np.int64)


def held_rows(table: Table | None, full: Interactions, what: str) -> np.ndarray:
    """Boolean mask of the rows of ``full`` whose (user, item) pair is in ``table``."""
    if table is None:
        return np.zeros(len(full), dtype=bool)
    if isinstance(table, Interactions):
        if (table.n_users, table.n_items) != (full.n_users, full.n_items):
            raise DataError(f"{table.n_users} users x {table.n_items} items; expected the id spaces of the interactions "
                            f"({full.n_users} x {full.n_items})", what)  # fmt: skip
        users, items = table.users, table.items
    else:
        users = internal_ids(table, "user_id", full.user_ids, what)
        items = internal_ids(table, "item_id", full.item_ids, what)
    return np.isin(full.users * full.n_items + full.items, users * full.n_items + items)


def internal_ids(frame: pd.DataFrame, column: str, ids: np.ndarray, what: str) -> np.ndarray:
    """Internal ids of ``frame[column]`` in the id space ``ids`` (``DataError`` naming the row)."""
    if column not in frame.columns:
        raise DataError(f"missing column {column!r}; columns present: {list(frame.columns)}", what)
    found = pd.Index(ids).get_indexer(frame[column])
    if (found < 0).any():
        row = int(np.argmin(found))
        raise DataError(f"row {row}: {column} {shown(frame[column].iloc[row])!r} is not in the interactions", what)
    return found.astype(np.int64)


def features_by_internal_id(features: pd.DataFrame, full: Interactions) -> pd.DataFrame:
    """``features`` (indexed by original user id, or with a ``user_id`` column) indexed by
    internal id; users without a row get missing values."""
    table = features.set_index("user_id") if "user_id" in features.columns else features
    return table.reindex(pd.Index(full.user_ids)).reset_index(drop=True)
