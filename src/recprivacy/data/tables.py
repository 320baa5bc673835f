"""Reading the user's own tables (CSV, TSV or Parquet) with one-line errors."""

from __future__ import annotations

import csv
import io
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
        return pd.read_parquet(path) if kind == "parquet" else _read_text_table(path, "," if kind == "csv" else "\t")
    except (ValueError, OSError, pd.errors.ParserError) as err:
        if isinstance(err, DataError):
            raise
        raise DataError(f"cannot read the {kind} table: {' '.join(str(err).split())}", path) from None


def _read_text_table(path: Path, sep: str) -> pd.DataFrame:
    """A CSV/TSV table; an empty file, a byte that is not UTF-8, a column named twice in the
    header or a first data line with more fields than the header (which pandas would silently
    read as an index, shifting every column) is a ``DataError`` at its line."""
    from recprivacy.data.loaders.tabular import decode, read_bytes

    text = decode(read_bytes(path), path, "utf-8")
    lines = [(number, line) for number, line in enumerate(text.splitlines(), start=1) if line.strip()]
    if not lines:
        raise DataError("the file is empty; expected a header line naming the columns", path)
    header = next(csv.reader([lines[0][1]], delimiter=sep))
    repeated = next((name for i, name in enumerate(header) if name in header[:i]), None)
    if repeated is not None:
        raise DataError(f"column {repeated!r} appears twice in the header; expected unique names", path, lines[0][0])
    frame = pd.read_csv(io.StringIO(text), sep=sep)
    if not frame.index.equals(pd.RangeIndex(len(frame))):
        number, line = lines[1]
        fields = len(next(csv.reader([line], delimiter=sep)))
        raise DataError(f"{fields} fields but the header names {len(header)} columns; expected one field per column "
                        "(no separator at the end of the line)", path, number)  # fmt: skip
    return frame


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
