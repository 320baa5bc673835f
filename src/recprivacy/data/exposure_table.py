"""Logged exposures as a flat table: what each user was shown and what they clicked.

One row per shown item: ``user_id, slate_id, item_id, clicked`` (CSV, TSV, Parquet or a
DataFrame; the slate column may be called ``time`` instead). Rows sharing a user and a slate
value form one impression, its items in file order; ``clicked`` is ``0``/``1`` (or
``true``/``false``). A user's impressions are ordered by the slate value when it is a number or
a date-time, else by their first row in the file. The click history of an impression is every
item the user clicked in their earlier impressions, oldest first, as in the MIND and Zhihu logs
(``data.exposure``); user and item ids keep their own id spaces (a news log shows items nobody
clicked). Bad rows raise a ``DataError`` naming the file, the line and what was expected.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from recprivacy.data.exposure import ExposureLog
from recprivacy.data.exposure_pairs import ragged_index
from recprivacy.data.tables import refuse_rows, table_source
from recprivacy.errors import DataError

SLATE_COLUMNS = ("slate_id", "time")
CLICK_VALUES = {"1": True, "0": False, "true": True, "false": False, "1.0": True, "0.0": False}


def read_exposure_table(source: str | Path | pd.DataFrame, user_col: str = "user_id", item_col: str = "item_id",
                        click_col: str = "clicked") -> ExposureLog:  # fmt: skip
    """Read and check a logged-exposure table (module docstring).

    Parameters
    ----------
    source:
        A ``.csv`` / ``.tsv`` / ``.parquet`` file or a DataFrame.
    user_col, item_col, click_col:
        Column names of the user id, the shown item id and the click flag.

    Returns
    -------
    ExposureLog
        Impressions in user then slate order, each with the user's earlier clicks.
    """
    frame, where = table_source(source)
    slate_col = next((c for c in SLATE_COLUMNS if c in frame.columns), SLATE_COLUMNS[0])
    for what, col in (("user", user_col), ("slate", slate_col), ("item", item_col), ("click", click_col)):
        if col not in frame.columns:
            raise DataError(f"missing {what} column {col!r}; columns present: {list(frame.columns)}", where)
    if frame.empty:
        raise DataError("no exposures after the header line; expected one row per shown item", where)
    for col in (user_col, slate_col, item_col):
        refuse_rows(frame[col].isna(), where, f"empty {col!r} value {{!r}}", frame[col])
    flags = frame[click_col].astype(str).str.strip().str.lower().map(CLICK_VALUES)
    refuse_rows(flags.isna(), where, f"{click_col} {{!r}} is not a click flag; expected 0 or 1", frame[click_col])
    refuse_rows(frame.duplicated([user_col, slate_col, item_col]), where,
                "item {!r} is shown twice in the same slate of the same user", frame[item_col])  # fmt: skip
    users, user_ids = pd.factorize(frame[user_col], sort=True)
    items, item_ids = pd.factorize(frame[item_col], sort=True)
    return _log(users, items, flags.to_numpy(dtype=bool), slate_order(frame[slate_col]), frame[slate_col],
                user_ids.to_numpy(), item_ids.to_numpy(), "exposures" if where == "frame" else Path(where).stem)  # fmt: skip


def slate_order(values: pd.Series) -> np.ndarray:
    """An int64 sort key of each row's slate value: the number, the date-time, or the first row
    the value appears on (module docstring)."""
    numbers = pd.to_numeric(values, errors="coerce")
    if numbers.notna().all():
        return pd.factorize(numbers, sort=True)[0].astype(np.int64)
    times = pd.to_datetime(values, errors="coerce", format="mixed")
    if times.notna().all():
        return pd.factorize(times, sort=True)[0].astype(np.int64)
    return pd.factorize(values)[0].astype(np.int64)


def _log(users: np.ndarray, items: np.ndarray, clicked: np.ndarray, order_key: np.ndarray, slates: pd.Series,
         user_ids: np.ndarray, item_ids: np.ndarray, name: str) -> ExposureLog:  # fmt: skip
    """The log of rows sorted by (user, slate order, file row); histories from earlier clicks."""
    impression = pd.factorize(pd.Series(users).astype(str) + "\x00" + slates.astype(str).to_numpy())[0]
    order = np.lexsort((np.arange(len(users)), impression, order_key, users))
    users, items, clicked, impression, key = users[order], items[order], clicked[order], impression[order], order_key[order]
    starts = np.flatnonzero(np.r_[True, impression[1:] != impression[:-1]])
    sizes = np.diff(np.r_[starts, len(users)])
    imp_users = users[starts]
    clicks_per = np.add.reduceat(clicked.astype(np.int64), starts) if len(starts) else np.zeros(0, np.int64)
    click_items = items[clicked]  # every click in (user, impression) order
    before = np.cumsum(clicks_per) - clicks_per  # clicks of all earlier impressions in the table
    user_first = np.searchsorted(imp_users, imp_users)  # first impression of the same user
    history_len = before - before[user_first]
    history_start = before[user_first]
    return ExposureLog(
        users=imp_users, times=key[starts], slate_items=items, slate_offsets=np.r_[0, np.cumsum(sizes)],
        clicked=clicked, history_items=click_items[ragged_index(history_start, history_len)],
        history_offsets=np.r_[0, np.cumsum(history_len)], n_users=len(user_ids), n_items=len(item_ids),
        user_ids=user_ids, item_ids=item_ids, name=name,
        provenance=({"step": "read_exposure_table", "source": name, "impressions": len(starts)},),
    )  # fmt: skip
