"""Logged recommendation lists: what a deployed system served, one row per listed item.

A lists file (CSV or Parquet) has a user id, a rank (1 = first) and an item id per row; the
column names are options. Bad rows are refused with ``file:line`` (the CSV line; Parquet rows
count from 1 after a notional header, the same way) and what was expected.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from recprivacy.data.tables import refuse_rows, shown, table_source
from recprivacy.errors import DataError


@dataclass(frozen=True)
class ServedLists:
    """Ranked item ids per original user id.

    Attributes
    ----------
    items:
        Frame indexed by user id, one column per rank (1..max), original item ids; a list
        shorter than the longest holds NaN / None beyond its end.
    lengths:
        Served list length per user id.
    source:
        Where the lists came from (file name or ``"frame"``).
    """

    items: pd.DataFrame
    lengths: pd.Series
    source: str

    def top(self, users: np.ndarray, k: int, item_ids: np.ndarray) -> np.ndarray:
        """``[len(users), k]`` internal item ids (positions in ``item_ids``) served to ``users``.

        Parameters
        ----------
        users:
            Original user ids.
        k:
            List length; every user needs a logged list of at least ``k`` items.
        item_ids:
            Original id of each internal item id.

        Returns
        -------
        numpy.ndarray
        """
        missing = np.asarray(users)[~pd.Index(users).isin(self.lengths.index)]
        if len(missing):
            raise DataError(f"no served list for user {shown(missing[0])!r} ({len(missing)} users without one); "
                            "expected a list for every member and non-member audited", self.source)  # fmt: skip
        short = self.lengths.loc[users] < k
        if short.any():
            user = short.index[int(np.argmax(short.to_numpy()))]
            raise DataError(f"user {shown(user)!r} has a served list of {self.lengths[user]} items; expected at least k = {k}",
                            self.source)  # fmt: skip
        lists = self.items.loc[users, list(range(1, k + 1))].to_numpy()
        found = pd.Index(item_ids).get_indexer(lists.ravel())
        if (found < 0).any():
            item = lists.ravel()[int(np.argmin(found))]
            raise DataError(f"served item id {shown(item)!r} is not in the interactions' catalogue", self.source)
        return found.reshape(lists.shape).astype(np.int64)


def read_served_lists(source: str | Path | pd.DataFrame, user_col: str = "user_id", rank_col: str = "rank",
                      item_col: str = "item_id") -> ServedLists:  # fmt: skip
    """Read and check logged lists.

    Parameters
    ----------
    source:
        A ``.csv`` / ``.parquet`` file or a DataFrame.
    user_col, rank_col, item_col:
        Column names of user id, rank (positive integer, 1 = first) and item id.

    Returns
    -------
    ServedLists
    """
    frame, where = table_source(source)
    roles = (("user column", user_col), ("rank column", rank_col), ("item column", item_col))
    for option, col in roles:
        if col not in frame.columns:
            raise DataError(f"missing {option} {col!r}; columns present: {list(frame.columns)}", where)
    named = [col for _, col in roles]
    if len(set(named)) < len(named):
        raise DataError(f"the user, rank and item columns are {named}; expected three different columns", where)
    if frame.empty:
        raise DataError("no served lists after the header line; expected one row per served item", where)
    ranks = pd.to_numeric(frame[rank_col], errors="coerce")
    bad = ranks.isna() | (ranks < 1) | (ranks != ranks.round())
    refuse_rows(bad, where, f"{rank_col} {{!r}} is not a positive integer rank", frame[rank_col])
    for col in (user_col, item_col):
        refuse_rows(frame[col].isna(), where, f"empty {col!r} value {{!r}}", frame[col])
    table = pd.DataFrame({"user": frame[user_col].to_numpy(), "rank": ranks.astype(np.int64).to_numpy(),
                          "item": frame[item_col].to_numpy()})  # fmt: skip
    refuse_rows(table.duplicated(["user", "rank"]), where, f"user {{!r}} has this {rank_col} twice", table["user"])
    _refuse_repeated_items(table, where)
    ranks_of = table.groupby("user")["rank"]
    lengths, longest = ranks_of.count(), ranks_of.max()
    gap = longest != lengths
    if gap.any():
        user = gap.index[int(np.argmax(gap.to_numpy()))]
        first = int(np.setdiff1d(np.arange(1, longest[user] + 1), table.loc[table["user"] == user, "rank"])[0])
        raise DataError(f"the list of user {shown(user)!r} skips rank {first}; expected ranks 1, 2, 3, ...", where)
    items = table.pivot(index="user", columns="rank", values="item")
    return ServedLists(items, lengths.astype(np.int64), where)


def _refuse_repeated_items(table: pd.DataFrame, where: str) -> None:
    """``DataError`` at the line (row + 2) of the first item a user's list holds twice."""
    repeated = table.duplicated(["user", "item"]).to_numpy()
    if repeated.any():
        row = int(np.argmax(repeated))
        user, item = table["user"].iloc[row], table["item"].iloc[row]
        first = table.loc[(table["user"] == user) & (table["item"] == item), "rank"].iloc[0]
        raise DataError(f"the list of user {shown(user)!r} holds item {shown(item)!r} twice (ranks {first} and "
                        f"{table['rank'].iloc[row]}); expected distinct items in a list", where, row + 2)  # fmt: skip
