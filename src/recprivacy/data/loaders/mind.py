"""MIND (Microsoft News Dataset) impression logs, ``behaviors.tsv``, as an ``ExposureLog``.

Each line: ``impression id <TAB> user id <TAB> time <TAB> history <TAB> impressions`` with
time like ``11/11/2019 9:05:58 AM`` (read as UTC), history the space-separated news ids the
user clicked before (possibly empty), and impressions the shown slate ``N123-1 N456-0``
(``-1`` clicked, ``-0`` shown only). The slate keeps every shown item in the logged order;
``clicked`` holds the flags; the history column is the user's click history, oldest first.
Impressions keep file order. News ids of slates and histories share one item id space.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from recprivacy.data.exposure import ExposureLog
from recprivacy.data.loaders.download import data_hint
from recprivacy.data.loaders.tabular import FieldKind, read_delimited
from recprivacy.errors import DataError

_COLUMNS: dict[str, FieldKind] = {
    "impression_id": "int",
    "user_id": "id",
    "time": "str",
    "history": "str",
    "impressions": "str",
}
_TIME_FORMAT = "%m/%d/%Y %I:%M:%S %p"


def find_behaviors(path: Path, split: str = "train") -> Path:
    """``behaviors.tsv``: ``path`` itself, in ``path``, or in ``path/MIND*_<split>/``."""
    if path.is_file():
        return path
    if (path / "behaviors.tsv").is_file():
        return path / "behaviors.tsv"
    found = sorted(path.glob(f"*_{split}/behaviors.tsv"))
    if not found:
        raise DataError(f"no behaviors.tsv here or in a *_{split}/ subfolder; {data_hint('the MIND folder')}", path)
    return found[0]


def load_mind(path: str | Path, split: str = "train") -> ExposureLog:
    """MIND impressions from ``behaviors.tsv`` (or a folder holding it, see ``find_behaviors``)."""
    file = find_behaviors(Path(path), split)
    frame = read_delimited(file, "\t", _COLUMNS)
    times = _times(frame, file)
    slate_news, slate_lengths, clicked = _slates(frame, file)
    history = frame["history"].str.split()
    history_news = history.explode().dropna().to_numpy(dtype=str)
    codes, item_ids = pd.factorize(np.concatenate([slate_news, history_news]), sort=True)
    users, user_ids = pd.factorize(frame["user_id"], sort=True)
    return ExposureLog(
        users=users.astype(np.int64),
        times=times,
        slate_items=codes[: len(slate_news)].astype(np.int64),
        slate_offsets=_offsets(slate_lengths),
        clicked=clicked,
        history_items=codes[len(slate_news) :].astype(np.int64),
        history_offsets=_offsets(history.str.len().to_numpy()),
        n_users=len(user_ids),
        n_items=len(item_ids),
        user_ids=np.asarray(user_ids),
        item_ids=np.asarray(item_ids),
        name="mind",
        provenance=({"step": "load", "format": "mind-behaviors", "source": str(file)},),
    )


def _times(frame: pd.DataFrame, file: Path) -> np.ndarray:
    """Impression times as Unix seconds."""
    parsed = pd.to_datetime(frame["time"], format=_TIME_FORMAT, errors="coerce")
    bad = parsed.isna().to_numpy()
    if bad.any():
        row = int(np.argmax(bad))
        raise DataError(
            f"time {frame['time'].iloc[row]!r} is not like '11/11/2019 9:05:58 AM'", file, int(frame.index[row])
        )
    return ((parsed - pd.Timestamp(0)) // pd.Timedelta(seconds=1)).to_numpy(dtype=np.int64)


def _slates(frame: pd.DataFrame, file: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(shown news ids, slate lengths, clicked flags) from the impressions column."""
    tokens = frame["impressions"].str.split()
    lengths = tokens.str.len().to_numpy()
    if (lengths == 0).any():
        raise DataError(
            "the impressions field is empty; expected 'NewsID-0 NewsID-1 ...'",
            file,
            int(frame.index[np.argmax(lengths == 0)]),
        )
    flat = tokens.explode().astype(str)
    flag = flat.str.slice(-2)
    bad = ~(flag.isin(["-0", "-1"]) & (flat.str.len() > 2)).to_numpy()
    if bad.any():
        row = int(np.argmax(bad))
        raise DataError(f"impression {flat.iloc[row]!r} is not 'NewsID-0' or 'NewsID-1'", file, int(flat.index[row]))
    return flat.str.slice(0, -2).to_numpy(dtype=str), lengths, (flag == "-1").to_numpy()


def _offsets(lengths: np.ndarray) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
