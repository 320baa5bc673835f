"""The shared data model: an immutable table of user-item interactions.

Internal ids are contiguous ``0..n-1`` int64; ``user_ids`` / ``item_ids`` map each internal id
back to the original id of the source file. Optional per-row ``ratings`` and ``timestamps``,
optional per-user and per-item feature tables (pandas DataFrames indexed by internal id).
Every transformation returns a new object; nothing is mutated in place.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from recprivacy.errors import DataError


def _frozen(a: np.ndarray | None, dtype: Any) -> np.ndarray | None:
    if a is None:
        return None
    out = np.ascontiguousarray(np.asarray(a, dtype=dtype))
    out.setflags(write=False)
    return out


@dataclass(frozen=True, eq=False)
class Interactions:
    """Immutable user-item interactions.

    Parameters
    ----------
    users, items:
        Internal ids, one per interaction (int64, ``0 <= id < n_users`` / ``n_items``).
    n_users, n_items:
        Sizes of the id spaces (may exceed the ids present, e.g. after ``subset_users``).
    ratings, timestamps:
        Optional per-interaction values (float64 / int64).
    user_ids, item_ids:
        Original id of each internal id (length ``n_users`` / ``n_items``).
    user_features, item_features:
        Optional tables indexed ``0..n-1`` by internal id (e.g. gender, age, occupation).
    name:
        Dataset name, used in reports.
    provenance:
        Ordered record of how the data were produced (loader, filters, splits); part of the
        dataset fingerprint.
    """

    users: np.ndarray
    items: np.ndarray
    n_users: int
    n_items: int
    ratings: np.ndarray | None = None
    timestamps: np.ndarray | None = None
    user_ids: np.ndarray | None = None
    item_ids: np.ndarray | None = None
    user_features: pd.DataFrame | None = None
    item_features: pd.DataFrame | None = None
    name: str = "interactions"
    provenance: tuple[dict, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        users = _frozen(self.users, np.int64)
        items = _frozen(self.items, np.int64)
        object.__setattr__(self, "users", users)
        object.__setattr__(self, "items", items)
        object.__setattr__(self, "ratings", _frozen(self.ratings, np.float64))
        object.__setattr__(self, "timestamps", _frozen(self.timestamps, np.int64))
        object.__setattr__(self, "n_users", int(self.n_users))
        object.__setattr__(self, "n_items", int(self.n_items))
        if self.user_ids is None:
            object.__setattr__(self, "user_ids", np.arange(self.n_users))
        if self.item_ids is None:
            object.__setattr__(self, "item_ids", np.arange(self.n_items))
        object.__setattr__(self, "provenance", tuple(self.provenance))
        self._validate()

    def _validate(self) -> None:
        n = len(self.users)
        if len(self.items) != n:
            raise DataError(f"users has {n} entries but items has {len(self.items)}")
        for name in ("ratings", "timestamps"):
            col = getattr(self, name)
            if col is not None and len(col) != n:
                raise DataError(f"{name} has {len(col)} entries, expected {n} (one per interaction)")
        if self.ratings is not None and np.isnan(self.ratings).any():
            row = int(np.flatnonzero(np.isnan(self.ratings))[0])
            raise DataError(f"ratings: NaN at interaction {row}; expected a number")
        if n:
            if self.users.min() < 0 or self.users.max() >= self.n_users:
                raise DataError(f"users: internal ids must lie in [0, {self.n_users})")
            if self.items.min() < 0 or self.items.max() >= self.n_items:
                raise DataError(f"items: internal ids must lie in [0, {self.n_items})")
        if len(self.user_ids) != self.n_users:
            raise DataError(f"user_ids has {len(self.user_ids)} entries, expected n_users={self.n_users}")
        if len(self.item_ids) != self.n_items:
            raise DataError(f"item_ids has {len(self.item_ids)} entries, expected n_items={self.n_items}")
        for name, size in (("user_features", self.n_users), ("item_features", self.n_items)):
            table = getattr(self, name)
            if table is not None and len(table) != size:
                raise DataError(f"{name} has {len(table)} rows, expected {size} (one per internal id)")

    # ------------------------------------------------------------------ basic facts
    def __len__(self) -> int:
        return len(self.users)

    @property
    def density(self) -> float:
        cells = self.n_users * self.n_items
        return len(self) / cells if cells else 0.0

    def with_changes(self, **changes: Any) -> "Interactions":
        """A copy with some fields replaced (validated again)."""
        return replace(self, **changes)

    def with_step(self, step: str, **params: Any) -> "Interactions":
        """A copy whose provenance records one more processing step."""
        return replace(self, provenance=self.provenance + ({"step": step, **params},))

    # ------------------------------------------------------------------ views
    def to_csr(self, values: str = "binary") -> sp.csr_matrix:
        """User x item CSR matrix. ``values``: ``binary`` (1 per pair, duplicates counted once)
        or ``ratings``."""
        if values == "ratings":
            if self.ratings is None:
                raise DataError(f"{self.name}: to_csr(values='ratings') needs ratings; this dataset has none")
            data = self.ratings
        elif values == "binary":
            data = np.ones(len(self), dtype=np.float64)
        else:
            raise ValueError(f"values must be 'binary' or 'ratings', got {values!r}")
        m = sp.csr_matrix((data, (self.users, self.items)), shape=(self.n_users, self.n_items))
        m.sum_duplicates()
        if values == "binary":
            m.data[:] = 1.0
        return m

    def order(self) -> np.ndarray:
        """Row order by (user, timestamp, original row) — stable, time-ordered per user."""
        ts = self.timestamps if self.timestamps is not None else np.zeros(len(self), dtype=np.int64)
        return np.lexsort((np.arange(len(self)), ts, self.users))

    def sequences(self) -> list[np.ndarray]:
        """Time-ordered item sequence of each user (index = internal user id)."""
        idx = self.order()
        users, items = self.users[idx], self.items[idx]
        bounds = np.searchsorted(users, np.arange(self.n_users + 1))
        return [items[bounds[u] : bounds[u + 1]] for u in range(self.n_users)]

    def user_counts(self) -> np.ndarray:
        return np.bincount(self.users, minlength=self.n_users)

    def item_counts(self) -> np.ndarray:
        return np.bincount(self.items, minlength=self.n_items)

    def select(self, rows: np.ndarray, step: str | None = None, **params: Any) -> "Interactions":
        """Keep interactions by row index or boolean mask; id spaces are unchanged."""
        rows = np.asarray(rows)
        out = replace(
            self,
            users=self.users[rows],
            items=self.items[rows],
            ratings=None if self.ratings is None else self.ratings[rows],
            timestamps=None if self.timestamps is None else self.timestamps[rows],
        )
        return out.with_step(step, **params) if step else out

    def subset_users(self, idx: np.ndarray) -> "Interactions":
        """Keep the interactions of the given internal users; id spaces are unchanged, so a
        model trained on one subset scores users and items of another consistently."""
        mask = np.zeros(self.n_users, dtype=bool)
        mask[np.asarray(idx, dtype=np.int64)] = True
        return self.select(mask[self.users])

    def take_users(self, idx: np.ndarray) -> "Interactions":
        """The interactions of users ``idx`` renumbered ``0..len(idx)-1`` in the order given,
        with their original ids and feature rows; items and row order are unchanged. This is
        how histories of users a model was not trained on are given to ``score_histories``."""
        idx = np.asarray(idx, dtype=np.int64)
        if len(np.unique(idx)) != len(idx) or (len(idx) and (idx.min() < 0 or idx.max() >= self.n_users)):
            raise DataError(f"take_users: expected distinct internal user ids in [0, {self.n_users})")
        new_id = np.full(self.n_users, -1, dtype=np.int64)
        new_id[idx] = np.arange(len(idx))
        part = self.select(new_id[self.users] >= 0)
        features = None if self.user_features is None else self.user_features.iloc[idx].reset_index(drop=True)
        return replace(part, users=new_id[part.users], n_users=len(idx), user_ids=self.user_ids[idx],
                       user_features=features)

    def reindex(self) -> "Interactions":
        """Drop users and items with no interaction and renumber both contiguously, keeping
        the original ids and feature rows of the survivors."""
        keep_u = np.unique(self.users)
        keep_i = np.unique(self.items)
        umap = np.full(self.n_users, -1, dtype=np.int64)
        umap[keep_u] = np.arange(len(keep_u))
        imap = np.full(self.n_items, -1, dtype=np.int64)
        imap[keep_i] = np.arange(len(keep_i))

        def _rows(table: pd.DataFrame | None, keep: np.ndarray) -> pd.DataFrame | None:
            return None if table is None else table.iloc[keep].reset_index(drop=True)

        return replace(
            self,
            users=umap[self.users],
            items=imap[self.items],
            n_users=len(keep_u),
            n_items=len(keep_i),
            user_ids=self.user_ids[keep_u],
            item_ids=self.item_ids[keep_i],
            user_features=_rows(self.user_features, keep_u),
            item_features=_rows(self.item_features, keep_i),
        ).with_step("reindex", n_users=int(len(keep_u)), n_items=int(len(keep_i)))

    def to_frame(self) -> pd.DataFrame:
        """Interactions as a DataFrame with internal and original ids."""
        df = pd.DataFrame({"user": self.users, "item": self.items})
        df["user_id"] = self.user_ids[self.users]
        df["item_id"] = self.item_ids[self.items]
        if self.ratings is not None:
            df["rating"] = self.ratings
        if self.timestamps is not None:
            df["timestamp"] = self.timestamps
        return df

    @classmethod
    def from_frame(
        cls,
        df: pd.DataFrame,
        user_col: str = "user_id",
        item_col: str = "item_id",
        rating_col: str | None = None,
        time_col: str | None = None,
        name: str = "interactions",
        source: str | None = None,
    ) -> "Interactions":
        """Build from a table of original ids, assigning internal ids in order of sorted
        original id.

        Ratings must be finite numbers >= 0 and timestamps whole numbers of seconds; a bad
        value is a DataError at its row (``file:line`` when ``df`` is indexed by source line,
        see :func:`row_error`). The load step of the provenance records which column served
        as user, item, rating and timestamp (``None``: not used).
        """
        where = source or name
        for col in (user_col, item_col, rating_col, time_col):
            if col is not None and col not in df.columns:
                raise DataError(f"missing column {col!r}; columns present: {list(df.columns)}", where)
        if len(df) == 0:
            raise DataError("no interactions", where)
        for col in (user_col, item_col):
            raise_first_bad(df, col, [(df[col].isna().to_numpy(), "is empty; expected an id")], where)
        users, user_ids = pd.factorize(df[user_col], sort=True)
        items, item_ids = pd.factorize(df[item_col], sort=True)
        columns = {"user": user_col, "item": item_col, "rating": rating_col, "timestamp": time_col}
        return cls(
            users=users,
            items=items,
            n_users=len(user_ids),
            n_items=len(item_ids),
            ratings=None if rating_col is None else _ratings(df, rating_col, where),
            timestamps=None if time_col is None else _timestamps(df, time_col, where),
            user_ids=np.asarray(user_ids),
            item_ids=np.asarray(item_ids),
            name=name,
            provenance=({"step": "load", "source": str(where), "columns": columns},),
        )

    def source_columns(self) -> dict[str, str | None] | None:
        """Column used for each role (user, item, rating, timestamp; ``None``: not used) as
        recorded by the loader, or None when the data were not read from a table."""
        load = next((p for p in self.provenance if p.get("step") == "load" and "columns" in p), None)
        return None if load is None else dict(load["columns"])

    def describe(self) -> dict[str, Any]:
        """Summary used by ``recprivacy datasets`` and reports."""
        return {
            "name": self.name,
            "users": self.n_users,
            "items": self.n_items,
            "interactions": len(self),
            "density": round(self.density, 6),
            "ratings": self.ratings is not None,
            "timestamps": self.timestamps is not None,
            **{f"{role}_column": col or "none" for role, col in (self.source_columns() or {}).items()},
            "user_features": [] if self.user_features is None else list(self.user_features.columns),
            "item_features": [] if self.item_features is None else list(self.item_features.columns),
        }

    def fingerprint(self) -> dict[str, Any]:
        """Content hash plus the processing record, stored in every Results."""
        import hashlib

        h = hashlib.sha256()
        for a in (self.users, self.items, self.ratings, self.timestamps):
            if a is not None:
                h.update(a.tobytes())
        return {
            **self.describe(),
            "sha256": h.hexdigest()[:16],
            "provenance": [dict(p) for p in self.provenance],
        }


def shown(value: object) -> str:
    """``repr`` of a value as a user wrote it (numpy scalars as plain Python numbers)."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def row_error(index: pd.Index, position: int, message: str, source: object) -> DataError:
    """A DataError for row ``position`` of a frame with this ``index``.

    Frames read from text files are indexed by 1-based file line (``index.name == 'line'``),
    giving ``file:line: message``; other frames name the row by its index label
    (``file: row 3: message`` for a Parquet table, ``index 0: ...`` for a plain DataFrame).
    """
    label = index[position]
    if index.name == "line":
        return DataError(message, source, int(label))
    return DataError(f"{index.name or 'index'} {shown(label)}: {message}", source)


def raise_first_bad(df: pd.DataFrame, col: str, checks: list[tuple[np.ndarray, str]], source: object) -> None:
    """Raise at the earliest row of ``df`` that a check flags; ``checks`` are (mask, problem)."""
    bad = np.logical_or.reduce([mask for mask, _ in checks])
    if bad.any():
        position = int(np.argmax(bad))
        problem = next(text for mask, text in checks if mask[position])
        raise row_error(df.index, position, f"field {col!r}: {shown(df[col].iloc[position])} {problem}", source)


def _ratings(df: pd.DataFrame, col: str, source: object) -> np.ndarray:
    """Ratings as float64; every value must be a finite number >= 0."""
    values = pd.to_numeric(df[col], errors="coerce").to_numpy(dtype=np.float64)
    checks = [(~np.isfinite(values), "is not a finite number"), (values < 0, "is negative; expected a rating >= 0")]
    raise_first_bad(df, col, checks, source)
    return values


def _timestamps(df: pd.DataFrame, col: str, source: object) -> np.ndarray:
    """Timestamps as int64; every value must be a whole number (of seconds)."""
    if pd.api.types.is_integer_dtype(df[col]):
        return df[col].to_numpy(dtype=np.int64)
    values = pd.to_numeric(df[col], errors="coerce").to_numpy(dtype=np.float64)
    finite = np.isfinite(values)
    fraction = finite & (np.where(finite, values, 0.0) % 1 != 0)
    huge = finite & (np.abs(np.where(finite, values, 0.0)) >= 2.0**63)
    checks = [(~finite, "is not a number of seconds"), (fraction, "is not a whole number of seconds"),
              (huge, "is outside the range of a 64-bit number of seconds; expected a Unix time")]  # fmt: skip
    raise_first_bad(df, col, checks, source)
    return values.astype(np.int64)
