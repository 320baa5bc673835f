"""Reading the user's own tables (CSV, TSV or Parquet) with one-line errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from recprivacy.errors import DataError

FORMATS = {".csv": "csv", ".tsv": "tsv", ".parquet": "parquet", ".pq": "parquet"}


def read_table(path: str | Path) -> pd.DataFrame:
    """A table from a CSV (comma) or TSV (tab) file with a header on line 1, or a Parquet file.

    Parameters
    ----------
    path:
        The file.

    Returns
    -------
    pandas.DataFrame
    """
    path = Path(path)
    if not path.is_file():
        raise DataError("file not found; expected a CSV or Parquet table", path)
    kind = FORMATS.get(path.suffix.lower())
    if kind is None:
        raise DataError(f"unknown table format {path.suffix!r}; expected one of {', '.join(FORMATS)}", path)
    try:
        return pd.read_parquet(path) if kind == "parquet" else pd.read_csv(path, sep="," if kind == "csv" else "\t")
    except (ValueError, OSError, pd.errors.ParserError) as err:
        raise DataError(f"cannot read the {kind} table: {' '.join(str(err).split())}", path) from None


def table_source(source: str | Path | pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """``source`` read as a table (a frame is used as given), and how messages name it.

    Parameters
    ----------
    source:
        A file :func:`read_table` reads, or a DataFrame.

    Returns
    -------
    tuple
        The frame (rows numbered from 0) and ``"frame"`` or the file's path.
    """
    if isinstance(source, pd.DataFrame):
        return source.reset_index(drop=True), "frame"
    return read_table(source), str(source)


def refuse_rows(bad: pd.Series | np.ndarray, where: str, message: str, values: pd.Series) -> None:
    """``DataError`` at the first ``bad`` row (line = row + 2: the header is line 1); ``message``
    holds one ``{!r}`` for that row's value in ``values``.

    Parameters
    ----------
    bad:
        Boolean flag per row.
    where:
        The file (or ``"frame"``).
    message:
        What is wrong, with ``{!r}`` for the value.
    values:
        The column whose value the message shows.
    """
    bad = np.asarray(bad, dtype=bool)
    if bad.any():
        row = int(np.argmax(bad))
        raise DataError(message.format(shown(values.iloc[row])), where, row + 2)


def shown(value: object) -> object:
    """A numpy scalar as the Python value it holds (for messages)."""
    return value.item() if isinstance(value, np.generic) else value
