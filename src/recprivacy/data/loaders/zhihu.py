"""Zhihu-1M answer-recommendation logs (Hao et al. 2021, ``THUIR/Zhihu-Dataset``, ``zhihu1M.txt``).

One user per line, tab separated::

    user <TAB> itemLen <TAB> answer|showTime|readTime,answer|showTime|readTime,... <TAB> queryNum <TAB> queryList

``readTime`` is 0 when the shown answer was not read (clicked). The query fields are not
used; a line may end after ``queryNum`` when the user issued no query. The log becomes an
``ExposureLog`` with one impression per (user, show time): the answers shown to the user at
that moment form the slate (in file order), ``clicked`` marks ``readTime != 0`` and
``click_times`` holds the read times, which the exposure pair builder needs (paper 000,
in the authors' code: exposures are the impressions shown *after* the latest read time of the
click window). Impressions are sorted by user then show time. The lines carry no separate
click history, so every impression's ``history`` is empty: a user's clicks are the read
impressions themselves.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from recprivacy.data.exposure import ExposureLog
from recprivacy.data.loaders.download import data_hint
from recprivacy.data.loaders.tabular import as_canonical_ints, decode, read_bytes
from recprivacy.errors import DataError

ZHIHU_FILE = "zhihu1M.txt"
_ENTRY = r"([^|,\s]+)\|([0-9]+)\|([0-9]+)"


def find_zhihu(path: Path) -> Path:
    """``zhihu1M.txt``: ``path`` itself or inside the folder ``path``."""
    if path.is_file():
        return path
    if (path / ZHIHU_FILE).is_file():
        return path / ZHIHU_FILE
    raise DataError(f"no {ZHIHU_FILE} here; {data_hint('the Zhihu-1M folder')}", path)


def read_zhihu(path: str | Path) -> pd.DataFrame:
    """One row per shown answer: ``line`` (1-based), ``user_id``, ``item_id``, ``show``,
    ``read`` (int64 seconds, 0 = not read), in file order.

    Raises ``DataError`` naming the line for a wrong number of fields, a non-integer
    ``itemLen``, an entry that is not ``answer|showTime|readTime`` or an ``itemLen`` that
    disagrees with the number of entries.
    """
    file = find_zhihu(Path(path))
    lines = pd.Series(decode(read_bytes(file), file, "utf-8").splitlines())
    lines.index = np.arange(1, len(lines) + 1)
    lines = lines[lines.str.strip() != ""]
    if lines.empty:
        raise DataError("the file is empty", file)
    fields = lines.str.split("\t")
    _check_field_counts(fields, file)
    users, lengths = fields.str[0], fields.str[1]
    flat = fields.str[2].str.split(",").explode()
    flat = flat[flat != ""]
    _check_item_lengths(lengths, flat.groupby(level=0).size().reindex(lengths.index, fill_value=0), file)
    parts = flat.str.fullmatch(_ENTRY)
    if not parts.all():
        line = int(parts.index[np.argmax(~parts.to_numpy())])
        bad = flat[~parts].iloc[0]
        raise DataError(f"impression {bad!r} is not 'answer|showTime|readTime' with integer times", file, line)
    triples = flat.str.extract(_ENTRY)
    return pd.DataFrame(
        {
            "line": flat.index.to_numpy(dtype=np.int64),
            "user_id": as_canonical_ints(users.loc[flat.index].reset_index(drop=True)).to_numpy(),
            "item_id": as_canonical_ints(triples[0].reset_index(drop=True)).to_numpy(),
            "show": triples[1].astype(np.int64).to_numpy(),
            "read": triples[2].astype(np.int64).to_numpy(),
        }
    )


def _check_field_counts(fields: pd.Series, file: Path) -> None:
    counts = fields.str.len().to_numpy()
    bad = (counts < 4) | (counts > 5)
    if bad.any():
        row = int(np.argmax(bad))
        raise DataError(
            f"{counts[row]} tab-separated fields; expected 5 (user, itemLen, impressions, queryNum, queryList)",
            file,
            int(fields.index[row]),
        )


def _check_item_lengths(lengths: pd.Series, found: pd.Series, file: Path) -> None:
    numeric = pd.to_numeric(lengths, errors="coerce")
    if numeric.isna().any():
        line = int(numeric.index[np.argmax(numeric.isna().to_numpy())])
        raise DataError(f"itemLen {lengths.loc[line]!r} is not an integer", file, line)
    differ = (found != numeric).to_numpy()
    if differ.any():
        line = int(numeric.index[np.argmax(differ)])
        raise DataError(f"itemLen says {int(numeric.loc[line])} impressions but the line lists {found.loc[line]}", file, line)


def load_zhihu(path: str | Path) -> ExposureLog:
    """Zhihu-1M as an ``ExposureLog`` (see the module docstring)."""
    file = find_zhihu(Path(path))
    table = read_zhihu(file)
    users, user_ids = pd.factorize(table["user_id"], sort=True)
    items, item_ids = pd.factorize(table["item_id"], sort=True)
    order = np.lexsort((np.arange(len(table)), table["show"].to_numpy(), users))
    users, items = users[order].astype(np.int64), items[order].astype(np.int64)
    show, read = table["show"].to_numpy()[order], table["read"].to_numpy()[order]
    starts = np.flatnonzero(np.r_[True, (users[1:] != users[:-1]) | (show[1:] != show[:-1])])
    n_rows = len(starts)
    return ExposureLog(
        users=users[starts],
        times=show[starts],
        slate_items=items,
        slate_offsets=np.r_[starts, len(items)].astype(np.int64),
        clicked=read != 0,
        history_items=np.zeros(0, dtype=np.int64),
        history_offsets=np.zeros(n_rows + 1, dtype=np.int64),
        n_users=len(user_ids),
        n_items=len(item_ids),
        user_ids=np.asarray(user_ids),
        item_ids=np.asarray(item_ids),
        name="zhihu",
        provenance=({"step": "load", "format": "zhihu1M", "source": str(file)},),
        click_times=read,
    )
