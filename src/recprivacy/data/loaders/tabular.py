"""Delimited tables: the shared careful reader, and generic CSV / Parquet with a column mapping.

``read_delimited`` parses a separated text file with pandas' C engine (fast path). If that
fails, or a post-check finds a short line, a blank line or a non-finite number, the file is
parsed again as text and checked column by column, so the error names the first bad
1-based line of the file. Rows of the returned frame are indexed by that line number, which
lets every loader point back at the source line (for example of a rating whose user is not in
the users file).

``build_interactions`` turns a frame of original ids into an ``Interactions`` with feature
tables aligned to the internal ids and a provenance entry naming the source file and format.
"""

from __future__ import annotations

import csv
import gzip
import io
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from recprivacy.data.interactions import Interactions
from recprivacy.data.loaders.download import data_hint
from recprivacy.errors import DataError

FieldKind = Literal["int", "float", "str", "id"]
"""``int``/``float``: numbers (floats must be finite); ``str``: any text, possibly empty;
``id``: non-empty text, returned as int64 when every value is a canonical decimal integer."""

_ONE_CHAR_SEP = "\x1f"  # stands in for multi-character separators such as MovieLens' '::'
_CANONICAL_INT = r"-?(?:0|[1-9][0-9]{0,17})"
_INTEGER = r"\s*[+-]?[0-9]+\s*"
_PANDAS_DTYPE = {"int": np.int64, "float": np.float64, "str": str, "id": str}


def require_file(path: Path, what: str = "data file") -> Path:
    """``path`` if it is a file, else a DataError saying where data belong."""
    if not path.is_file():
        raise DataError(f"{what} not found; {data_hint()}", path)
    return path


def read_bytes(path: Path) -> bytes:
    """The file's bytes, decompressed when the name ends in ``.gz``."""
    require_file(path)
    if path.suffix == ".gz":
        try:
            with gzip.open(path, "rb") as fh:
                return fh.read()
        except (OSError, EOFError) as err:
            raise DataError(f"not a readable gzip file ({err})", path) from err
    return path.read_bytes()


def decode(raw: bytes, path: Path, encoding: str) -> str:
    """Text of ``raw``; an undecodable byte is reported with its line."""
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise DataError(f"byte {err.start} is not valid {encoding} text", path, line) from err


def as_canonical_ints(values: pd.Series) -> pd.Series:
    """int64 if every value is a canonical decimal integer (lossless both ways), else as is."""
    text = values.astype(str)
    if len(text) and bool(text.str.fullmatch(_CANONICAL_INT).all()):
        return text.astype(np.int64)
    return values


def read_delimited(
    path: Path,
    sep: str,
    kinds: Mapping[str, FieldKind],
    *,
    header: bool = False,
    encoding: str = "utf-8",
    quoted: bool = False,
) -> pd.DataFrame:
    """Parse a separated text file into typed columns indexed by 1-based file line.

    Parameters
    ----------
    path:
        File to read (``.gz`` is decompressed).
    sep:
        Field separator; may be several characters (``'::'``).
    kinds:
        Column name -> kind, in file order (``header=False``), or the kinds of the named
        header columns that need checking (``header=True``; other columns are kept as text).
    header:
        The first line names the columns.
    quoted:
        Fields may be CSV-quoted (generic CSV, RecBole atomic files). Field counts are then
        checked by pandas alone, so a short line of text-only columns is not detected.
    """
    raw = read_bytes(path)
    if not raw.strip():
        raise DataError("the file is empty", path)
    if header:
        _require_columns(path, header_columns(path, sep, encoding), list(kinds))
    if len(sep) > 1:
        raw = raw.replace(sep.encode(encoding), _ONE_CHAR_SEP.encode(encoding))
        sep = _ONE_CHAR_SEP
    options = dict(
        sep=sep,
        header=0 if header else None,
        names=None if header else list(kinds),
        quoting=csv.QUOTE_MINIMAL if quoted else csv.QUOTE_NONE,
        na_filter=False,
        skip_blank_lines=False,
    )
    frame = _parse_fast(raw, kinds, options, encoding)
    if frame is None or not _fast_checks_pass(frame, raw, sep, kinds, header, quoted):
        frame = _parse_careful(decode(raw, path, encoding), path, kinds, options, quoted)
    for name, kind in kinds.items():
        if kind == "id":
            frame[name] = as_canonical_ints(frame[name])
    return frame


def first_line(path: Path, encoding: str = "utf-8") -> str:
    """The first line of a (possibly gzipped) text file, without its line break."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(require_file(path), "rt", encoding=encoding, errors="replace") as fh:
        return fh.readline().rstrip("\r\n")


def header_columns(path: Path, sep: str, encoding: str = "utf-8") -> list[str]:
    """Column names on the first line of a delimited file."""
    first = first_line(path, encoding)
    if len(sep) > 1:
        return first.split(sep)
    return next(csv.reader([first], delimiter=sep), [])


def _require_columns(path: Path, present: list[str], wanted: list[str]) -> None:
    missing = [col for col in wanted if col not in present]
    if missing:
        raise DataError(f"missing column(s) {missing}; the header has {present}", path, 1)


def _parse_fast(raw: bytes, kinds: Mapping[str, FieldKind], options: dict, encoding: str) -> pd.DataFrame | None:
    """Typed parse with the C engine; None when pandas rejects the file."""
    try:
        frame = pd.read_csv(io.BytesIO(raw), dtype=_dtypes(kinds), encoding=encoding, **options)
    except (ValueError, pd.errors.ParserError):
        return None
    first = 2 if options["header"] == 0 else 1
    frame.index = pd.RangeIndex(first, first + len(frame), name="line")
    return frame


def _dtypes(kinds: Mapping[str, FieldKind]) -> dict:
    return {name: _PANDAS_DTYPE[kind] for name, kind in kinds.items()}


def _fast_checks_pass(
    frame: pd.DataFrame, raw: bytes, sep: str, kinds: Mapping[str, FieldKind], header: bool, quoted: bool
) -> bool:
    """Checks pandas does not make: finite floats, non-empty ids, no short or blank lines."""
    for name, kind in kinds.items():
        if kind == "float" and not np.isfinite(frame[name].to_numpy()).all():
            return False
        if kind == "id" and frame[name].str.strip().eq("").any():
            return False
    if quoted:
        return True
    expected = (len(frame) + header) * (len(frame.columns) - 1)
    return raw.count(sep.encode()) == expected


def _parse_careful(text: str, path: Path, kinds: Mapping[str, FieldKind], options: dict, quoted: bool) -> pd.DataFrame:
    """Parse as text, then raise a DataError at the first bad line or return the typed frame
    without blank lines, indexed by line number."""
    try:
        frame = pd.read_csv(io.StringIO(text), dtype=str, **options)
    except pd.errors.ParserError as err:
        found = re.search(r"line (\d+), saw (\d+)", str(err))
        line = int(found.group(1)) if found else None
        detail = f"found {found.group(2)}" if found else str(err).strip().splitlines()[-1]
        raise DataError(f"wrong number of fields: {detail}", path, line) from err
    first = 2 if options["header"] == 0 else 1
    frame.index = pd.RangeIndex(first, first + len(frame), name="line")
    lines = None if quoted else _physical_lines(text).iloc[first - 1 :]
    if lines is not None and len(lines) != len(frame):
        lines = None
    blank = (frame == "").all(axis=1).to_numpy()
    if lines is not None:
        blank = blank & lines.str.strip().eq("").to_numpy()
    frame = frame[~blank].copy()
    problem = _first_problem(frame, kinds, options["sep"], None if lines is None else lines[~blank])
    if problem is not None:
        line, message = problem
        raise DataError(message, path, line)
    if frame.empty:
        raise DataError("the file has no data lines", path)
    for name, kind in kinds.items():
        if kind in ("int", "float"):
            frame[name] = pd.to_numeric(frame[name].str.strip()).astype(_PANDAS_DTYPE[kind])
    return frame


def _physical_lines(text: str) -> pd.Series:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return pd.Series(lines, dtype=str).str.rstrip("\r")


def _first_problem(
    frame: pd.DataFrame, kinds: Mapping[str, FieldKind], sep: str, lines: pd.Series | None
) -> tuple[int, str] | None:
    """(line, message) of the earliest malformed row, or None."""
    found: list[tuple[int, str]] = []
    if lines is not None:
        counts = lines.str.count(re.escape(sep)).to_numpy() + 1
        bad = counts != len(frame.columns)
        if bad.any():
            row = int(np.argmax(bad))
            shown_sep = "'::'" if sep == _ONE_CHAR_SEP else repr(sep)
            found.append(
                (
                    int(frame.index[row]),
                    f"expected {len(frame.columns)} fields separated by {shown_sep}, found {counts[row]}",
                )
            )
    for name, kind in kinds.items():
        values = frame[name]
        bad, expected = _bad_values(values, kind)
        if bad.any():
            row = int(np.argmax(bad))
            found.append((int(frame.index[row]), f"field {name!r}: {values.iloc[row]!r} {expected}"))
    return min(found) if found else None


def _bad_values(values: pd.Series, kind: FieldKind) -> tuple[np.ndarray, str]:
    """Mask of values that do not fit ``kind``, and what they should have been."""
    if kind == "int":
        return ~values.str.fullmatch(_INTEGER).to_numpy(dtype=bool), "is not an integer"
    if kind == "float":
        numbers = pd.to_numeric(values.str.strip(), errors="coerce").to_numpy(dtype=np.float64)
        return ~np.isfinite(numbers), "is not a finite number"
    if kind == "id":
        return (values.str.strip() == "").to_numpy(), "is empty; expected an id"
    return np.zeros(len(values), dtype=bool), ""


def shown(value: object) -> str:
    """``repr`` of a value as a user wrote it (numpy scalars as plain Python numbers)."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def indexed_by(table: pd.DataFrame, column: str, path: Path) -> pd.DataFrame:
    """``table`` indexed by ``column``; a repeated id is a DataError at its second line."""
    repeated = table[column].duplicated().to_numpy()
    if repeated.any():
        row = int(np.argmax(repeated))
        raise DataError(f"{column} {shown(table[column].iloc[row])} is listed twice", path, int(table.index[row]))
    return table.set_index(column)


def build_interactions(
    frame: pd.DataFrame,
    *,
    name: str,
    source: Path,
    fmt: str,
    user_col: str = "user_id",
    item_col: str = "item_id",
    rating_col: str | None = None,
    time_col: str | None = None,
    user_features: pd.DataFrame | None = None,
    item_features: pd.DataFrame | None = None,
    features_source: Mapping[str, Path] | None = None,
    **provenance: object,
) -> Interactions:
    """``Interactions`` from a validated frame of original ids (rows indexed by source line).

    Feature tables are indexed by original id; every user / item that occurs in the frame
    must have a row, else a DataError names the first line that mentions a missing id.
    """
    if frame.empty:
        raise DataError("no interactions (the file has no data rows)", source)
    data = Interactions.from_frame(frame, user_col, item_col, rating_col, time_col, name=name, source=str(source))
    sources = features_source or {}
    changes: dict = {"provenance": ({"step": "load", "format": fmt, "source": str(source), **provenance},)}
    if user_features is not None:
        changes["user_features"] = align_features(
            user_features, data.user_ids, frame[user_col], source, sources.get("user"), "user"
        )
    if item_features is not None:
        changes["item_features"] = align_features(
            item_features, data.item_ids, frame[item_col], source, sources.get("item"), "item"
        )
    return data.with_changes(**changes)


def align_features(
    table: pd.DataFrame, ids: np.ndarray, mentions: pd.Series, source: Path, table_path: Path | None, what: str
) -> pd.DataFrame:
    """Rows of ``table`` (indexed by original id) in internal-id order ``ids``."""
    present = pd.Index(ids).isin(table.index)
    if not present.all():
        missing = ids[~present][0]
        line = int(mentions.index[np.flatnonzero((mentions == missing).to_numpy())[0]])
        listed = f" in {table_path}" if table_path is not None else ""
        raise DataError(
            f"{what} {shown(missing)} has no row{listed}; every {what} that has interactions needs one", source, line
        )
    return table.loc[ids].reset_index(drop=True)


def load_table(
    path: str | Path,
    user_col: str,
    item_col: str,
    rating_col: str | None = None,
    time_col: str | None = None,
    sep: str | None = None,
    name: str | None = None,
) -> Interactions:
    """Interactions from a CSV / TSV (with a header row) or Parquet file, by column names.

    ``sep`` defaults to ``','`` for ``.csv``, tab for ``.tsv``/``.tab``, otherwise it is
    sniffed from the header line. ``time_col`` may hold numbers (used as given, e.g. Unix
    seconds) or ISO 8601 date-times (converted to Unix seconds, UTC).
    """
    path = Path(path)
    wanted: dict[str, FieldKind] = {user_col: "id", item_col: "id"}
    if rating_col is not None:
        wanted[rating_col] = "float"
    if time_col is not None:
        wanted[time_col] = "str"
    frame = _read_parquet(path, list(wanted)) if path.suffix == ".parquet" else _read_csv(path, wanted, sep)
    if time_col is not None:
        frame[time_col] = _time_column(frame, time_col, path)
    return build_interactions(
        frame,
        name=name or path.stem,
        source=path,
        fmt="parquet" if path.suffix == ".parquet" else "csv",
        user_col=user_col,
        item_col=item_col,
        rating_col=rating_col,
        time_col=time_col,
    )


def _read_csv(path: Path, wanted: dict[str, FieldKind], sep: str | None) -> pd.DataFrame:
    return read_delimited(path, sep or _guess_separator(path), wanted, header=True, quoted=True)


def _guess_separator(path: Path) -> str:
    suffixes = [s for s in path.suffixes if s != ".gz"]
    if suffixes and suffixes[-1] == ".csv":
        return ","
    if suffixes and suffixes[-1] in (".tsv", ".tab"):
        return "\t"
    try:
        return csv.Sniffer().sniff(first_line(path), delimiters=",\t;| ").delimiter
    except csv.Error as err:
        raise DataError("cannot tell the field separator from the header line; pass sep=", path, 1) from err


def _read_parquet(path: Path, columns: list[str]) -> pd.DataFrame:
    require_file(path)
    try:
        frame = pd.read_parquet(path)
    except (OSError, ValueError) as err:
        raise DataError(f"not a readable Parquet file ({err})", path) from err
    missing = [col for col in columns if col not in frame.columns]
    if missing:
        raise DataError(f"missing column(s) {missing}; columns present: {list(frame.columns)}", path)
    frame = frame[columns].reset_index(drop=True)
    frame.index = pd.RangeIndex(1, len(frame) + 1, name="row")
    for col in columns:
        if frame[col].isna().any():
            row = int(frame.index[np.flatnonzero(frame[col].isna().to_numpy())[0]])
            raise DataError(f"row {row}: column {col!r} is empty", path)
    return frame


def _time_column(frame: pd.DataFrame, col: str, path: Path) -> pd.Series:
    """Timestamps as int64: numbers as given, ISO 8601 strings as Unix seconds (UTC)."""
    values = frame[col]
    numbers = pd.to_numeric(values, errors="coerce")
    if not numbers.isna().any():
        return numbers.astype(np.int64)
    times = pd.to_datetime(values, errors="coerce", utc=True, format="ISO8601")
    if times.isna().any():
        where = int(frame.index[np.flatnonzero(times.isna().to_numpy())[0]])
        message = f"{col} {values.loc[where]!r} is neither a number nor an ISO 8601 time"
        if frame.index.name == "row":
            raise DataError(f"row {where}: {message}", path)
        raise DataError(message, path, where)
    return pd.Series((times - pd.Timestamp(0, tz="UTC")) // pd.Timedelta(seconds=1), index=frame.index, dtype=np.int64)
