"""The readers of ``recprivacy audit --target / --members / --interactions / --test /
--user-features`` (called by :meth:`~.audit_inputs.AuditInputs.from_files`): the user's target
named ``module:attribute``, and user ids and tables with id columns from CSV/Parquet files (a
``DataError`` names the file, the column and, for an empty id, the line).

Every frame read here is *located*: its rows are indexed by file line (``line``, the header is
line 1) and ``attrs["source"]`` names the file, so that a problem found later, when the audit
matches the rows to its users and items (:mod:`.inputs`), is reported as ``file:line``.
"""

from __future__ import annotations

import sys
from importlib import import_module
from pathlib import Path

import numpy as np
import pandas as pd

from recprivacy.data.tables import read_table
from recprivacy.errors import ConfigError, DataError
from recprivacy.experiments.target import Target


def load_target(spec: str, training: bool = False) -> Target:
    """The target named ``module:attribute`` (the current folder is importable).

    Parameters
    ----------
    spec:
        ``module:attribute`` of a fitted model, a callable ``(histories, k)`` or, with
        ``training``, a training function ``frame -> model``.
    training:
        Whether the attribute is a training function.

    Returns
    -------
    Target
    """
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise ConfigError(f"--target {spec!r}: expected module:attribute, e.g. mymodels:svd")
    if "" not in sys.path:
        sys.path.insert(0, "")
    try:
        obj = getattr(import_module(module_name), attribute)
    except ImportError as err:
        raise ConfigError(f"--target {spec!r}: cannot import module {module_name!r} ({err})") from None
    except AttributeError:
        raise ConfigError(f"--target {spec!r}: module {module_name!r} has no attribute {attribute!r}") from None
    return Target.from_training(obj) if training else Target.from_model(obj)


def read_users(path: str | Path, column: str) -> pd.Series:
    """The distinct user ids in column ``column`` of a CSV/Parquet file (``--members``),
    located (module docstring).

    Parameters
    ----------
    path:
        The file.
    column:
        The user id column.

    Returns
    -------
    pandas.Series
    """
    frame = id_table(path, {"--user-col": column})
    if frame.empty:
        raise DataError("no user ids after the header line; expected the members' ids (without --members every user "
                        "counts as a member)", path)  # fmt: skip
    return frame[column].drop_duplicates()


def id_table(path: str | Path, columns: dict[str, str]) -> pd.DataFrame:
    """The located table at ``path`` (module docstring), with every id column of ``columns``
    (option -> column name) present and never empty; :class:`~.audit_inputs.AuditInputs` renames them.

    Parameters
    ----------
    path:
        CSV/Parquet file.
    columns:
        The command-line option that names each id column (``--user-col``) -> the column's name.

    Returns
    -------
    pandas.DataFrame
    """
    frame = read_table(path)
    frame.index = _lines(Path(path), len(frame))
    frame.attrs["source"] = str(path)
    for option, col in columns.items():
        if col not in frame.columns:
            raise DataError(f"missing column {col!r} ({option}); columns present: {list(frame.columns)}", path)
    empty = frame[list(columns.values())].isna().any(axis=1).to_numpy()
    if empty.any():
        raise DataError(f"empty {' or '.join(map(repr, columns.values()))} value", path, int(frame.index[np.argmax(empty)]))
    return frame


def _lines(path: Path, rows: int) -> pd.Index:
    """The file line of each of the ``rows`` rows read from ``path``: its non-blank lines after
    the header for a CSV/TSV file with one line per row; else (Parquet, a quoted field holding a
    line break) the row number + 1, as if after a header line."""
    if path.suffix.lower() in (".csv", ".tsv"):
        numbers = [n for n, line in enumerate(path.read_bytes().splitlines()[1:], start=2) if line.strip()]
        if len(numbers) == rows:
            return pd.Index(numbers, name="line")
    return pd.RangeIndex(2, rows + 2, name="line")
