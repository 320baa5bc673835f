"""The auditor's data as recprivacy holds them (:meth:`~.audit_inputs.AuditInputs.prepare`):
frames or ``Interactions`` turned into internal ids. A ``DataError`` names where a problem is:
``file:line`` for a frame read from a file (located by :mod:`.files`), else the argument
(``what``) and the row's index. Users and features are matched by id, never by position.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from recprivacy.data.interactions import Interactions, row_error
from recprivacy.data.preprocess import deduplicate
from recprivacy.data.served_lists import ServedLists, shown
from recprivacy.errors import ConfigError, DataError
from recprivacy.progress import stage

Table = Interactions | pd.DataFrame


def source_of(table: Table | pd.Series, what: str) -> str:
    """How messages name ``table``: the file it was read from (``attrs["source"]``, set by
    :mod:`.files`), else ``what``."""
    return (table.attrs.get("source") if isinstance(table, (pd.DataFrame, pd.Series)) else None) or what


def data_source(full: Interactions) -> str:
    """How messages name the interactions: the file they were read from, else their name."""
    return next((str(p["source"]) for p in full.provenance if p.get("step") == "load" and "source" in p), full.name)


def as_interactions(table: Table, what: str) -> Interactions:
    """``table`` as ``Interactions`` (a frame needs ``user_id, item_id``; ``timestamp`` and
    ``rating`` are used when present)."""
    if isinstance(table, Interactions):
        return table
    if not isinstance(table, pd.DataFrame):
        raise ConfigError(f"{what}: expected Interactions or a pandas DataFrame, got {type(table).__name__}")
    return Interactions.from_frame(table, rating_col="rating" if "rating" in table.columns else None,
                                   time_col="timestamp" if "timestamp" in table.columns else None, name=what,
                                   source=source_of(table, what))  # fmt: skip


def deduplicated(full: Interactions, table: Table, dedup: bool) -> Interactions:
    """``full`` (read from ``table``) with one row per (user, item) pair when ``dedup``
    (``dataset.preprocessing.dedup``: the latest row kept, the number dropped shown on stderr
    and recorded in the provenance); without ``dedup`` a repeated pair is a ``DataError`` at its row."""
    source = data_source(full)
    if dedup:
        out = deduplicate(full)
        removed = out.provenance[-1]["removed"]
        if removed:
            stage(f"{source}: {removed} repeated (user, item) rows of {len(full)} dropped, the latest kept "
                  "(dataset.preprocessing.dedup: true)")  # fmt: skip
        return out
    repeated = pd.Series(full.users * full.n_items + full.items).duplicated().to_numpy()
    if repeated.any():
        row = int(np.argmax(repeated))
        user, item = full.user_ids[full.users[row]], full.item_ids[full.items[row]]
        message = (f"user {shown(user)!r} and item {shown(item)!r} repeat an earlier row; expected one row per "
                   "(user, item) pair, as dataset.preprocessing.dedup is false")  # fmt: skip
        raise row_error(_rows(table, len(full)), row, message, source)
    return full


def internal_users(ids: Sequence[Any] | pd.Series, full: Interactions, what: str) -> np.ndarray:
    """Sorted internal ids of original user ids (``DataError`` naming the first unknown one)."""
    values = ids if isinstance(ids, pd.Series) else pd.Series(list(ids))
    return np.unique(_internal(values, full, "user", source_of(values, what)))


def held_rows(table: Table | None, full: Interactions, members: np.ndarray, what: str) -> tuple[np.ndarray, dict]:
    """Mask of the members' rows of ``full`` whose (user, item) pair is a row of ``table``,
    and the provenance record of the hold-out. Rows of ``table`` whose pair is not in ``full``,
    or is a non-member's, are dropped and counted (stderr, provenance); a ``DataError`` when
    every row is.

    Parameters
    ----------
    table:
        The held-out rows (``None``: none).
    full:
        Every interaction.
    members:
        Internal ids of the members.
    what:
        The argument's name (``test`` / ``valid``).

    Returns
    -------
    tuple
        The mask over the rows of ``full``, and the record (``rows``, ``held``, ``not_in_interactions``,
        ``non_members``).
    """
    if table is None:
        return np.zeros(len(full), dtype=bool), {}
    source = source_of(table, what)
    if isinstance(table, Interactions):
        if (table.n_users, table.n_items) != (full.n_users, full.n_items):
            raise DataError(f"{table.n_users} users x {table.n_items} items; expected the id spaces of the interactions "
                            f"({full.n_users} x {full.n_items})", what)  # fmt: skip
        users, items = table.users, table.items
    else:
        users, items = _internal(table, full, "user", source), _internal(table, full, "item", source)
    pairs, every = users * full.n_items + items, full.users * full.n_items + full.items
    known, member = np.isin(pairs, every), np.isin(users, members)
    record = {"part": what, "source": source, "rows": len(pairs), "held": int((known & member).sum()),
              "not_in_interactions": int((~known).sum()), "non_members": int((known & ~member).sum())}  # fmt: skip
    dropped = (f"{record['not_in_interactions']} (user, item) pairs not in the interactions, "
               f"{record['non_members']} of non-members")  # fmt: skip
    if record["held"] == 0:
        raise DataError(f"none of the {len(pairs)} rows is a member's interaction ({dropped}); expected rows of the "
                        "interactions held out of the members' training", source)  # fmt: skip
    if record["held"] < len(pairs):
        stage(f"{source}: {len(pairs) - record['held']} of {len(pairs)} rows dropped ({dropped})")
    return np.isin(every, pairs[known & member]), record


def features_by_internal_id(features: pd.DataFrame, full: Interactions, what: str = "user_features") -> pd.DataFrame:
    """``features`` (with a ``user_id`` column, or indexed by an index named ``user_id``)
    indexed by internal id; users without a row get missing values. A table without user ids,
    a user listed twice and a table none of whose users are in ``full`` are ``DataError``s."""
    source = source_of(features, what)
    table = features.reset_index() if features.index.name == "user_id" else features
    if "user_id" not in table.columns:
        raise DataError(f"no user id column: expected a 'user_id' column (or an index named 'user_id'); "
                        f"columns present: {list(table.columns)}", source)  # fmt: skip
    ids = table["user_id"]
    found = _known(ids, full, "user", source)
    repeated = ids.duplicated().to_numpy()
    if repeated.any():
        row = int(np.argmax(repeated))
        raise row_error(table.index, row, f"user {shown(ids.iloc[row])!r} is listed twice; expected one row per user", source)
    if (found < 0).all():
        raise DataError(f"none of the {len(ids)} user ids is in the interactions; expected the audited users' ids", source)
    return table.set_index("user_id").reindex(pd.Index(full.user_ids)).reset_index(drop=True)


def check_list_ids(lists: ServedLists, full: Interactions) -> None:
    """A ``DataError`` when the logged lists' user or item ids are of another type (text or
    numbers) than the interactions' (see :func:`check_id_types`)."""
    check_id_types(pd.Series(lists.lengths.index), lists.source, full, "user")
    check_id_types(pd.Series(lists.items.to_numpy().ravel()).dropna(), lists.source, full, "item")


def check_id_types(values: pd.Series, where: str, full: Interactions, role: str) -> None:
    """A ``DataError`` when ``values`` (``role`` ids of ``where``) are text and the
    interactions' are numbers, or the reverse: ids are compared as they were read, and one id
    that is not a number makes a whole column text, so no id would match. The error names the
    first id of the text side that is not a number (or its first id), and its line when the
    text side is a file read by :mod:`.files`."""
    ids = full.user_ids if role == "user" else full.item_ids
    here, there = _id_kind(values), _id_kind(pd.Series(ids))
    if {here, there} != {"text", "number"}:
        return
    interactions = data_source(full)
    text, text_where, number_where = (values, where, interactions) if here == "text" else (pd.Series(ids), interactions, where)
    non_number = pd.to_numeric(text, errors="coerce").isna().to_numpy()
    row = int(np.argmax(non_number))
    message = (f"{role} id {shown(text.iloc[row])!r} is {'not a number' if non_number.any() else 'text'}, so all its {role} "
               f"ids are compared as text and none equals a numeric {role} id of {number_where}; expected one id type in "
               "every file")  # fmt: skip
    if here == "text" and values.index.name == "line":
        raise row_error(values.index, row, message, where)
    raise DataError(message, text_where)


# ---------------------------------------------------------------------------- helpers


def _id_kind(values: pd.Series) -> str | None:
    """``"text"``, ``"number"`` or None (empty, mixed or other) for a column of ids."""
    kind = pd.api.types.infer_dtype(values, skipna=True)
    if kind == "string":
        return "text"
    return "number" if kind in ("integer", "floating", "mixed-integer-float", "decimal") else None


def _known(values: pd.Series, full: Interactions, role: str, where: str) -> np.ndarray:
    """Internal ids of ``values`` (``role`` ids of ``where``; -1 for an id not in ``full``),
    after :func:`check_id_types`."""
    check_id_types(values, where, full, role)
    return pd.Index(full.user_ids if role == "user" else full.item_ids).get_indexer(values)


def _internal(table: pd.DataFrame | pd.Series, full: Interactions, role: str, where: str) -> np.ndarray:
    """Internal ids of the ``role`` ids of ``table`` (its ``<role>_id`` column, or the series
    itself); ``DataError`` at the first id not in ``full``."""
    column = f"{role}_id"
    if isinstance(table, pd.DataFrame) and column not in table.columns:
        raise DataError(f"missing column {column!r}; columns present: {list(table.columns)}", where)
    values = table[column] if isinstance(table, pd.DataFrame) else table
    found = _known(values, full, role, where)
    if (found < 0).any():
        row = int(np.argmin(found))
        raise row_error(values.index, row, f"{role} id {shown(values.iloc[row])!r} is not in the interactions", where)
    return found.astype(np.int64)


def _rows(table: Table, n: int) -> pd.Index:
    """Row labels of ``table`` for messages (a frame's index, else positions)."""
    return table.index if isinstance(table, pd.DataFrame) else pd.RangeIndex(n)
