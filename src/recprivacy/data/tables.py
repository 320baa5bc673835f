"""Reading the user's own tables (CSV, TSV or Parquet) with one-line errors."""

from __future__ import annotations

from pathlib import Path

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
