"""Delimited tables: the shared careful reader, and generic CSV / Parquet with a column mapping.

``read_delimited`` parses a separated text file with pandas' C engine (fast path). If that
fails, or a post-check finds a short line, a blank line or a non-finite number, the file is
parsed again as text and checked column by column, so the error names the first bad
1-based line of the file. Rows of the returned frame are indexed by that line number, which
lets every loader point back at the source line (for example of a rating whose user is not in
the users file).

Text is read as bytes and never echoed: binary content (a NUL byte) or an undecodable byte is
reported by its offset and line. A UTF-8 byte order mark is dropped. Empty files and header
lines without data lines are errors.

``build_interactions`` turns a frame of original ids into an ``Interactions`` with feature
tables aligned to the internal ids and a provenance entry naming the source file, format and
the columns used (``Interactions.source_columns``).

``load_table`` reads a generic CSV / TSV / Parquet table. Each role (user, item, rating,
timestamp) is taken from the column the caller names, else from a column with a usual name
(``ROLE_NAMES``), so a ``rating`` column is never silently ignored; which columns served is
recorded and shown by ``describe()``. A rating or timestamp column that is used is checked
like the ids: NaN, inf, text, negative ratings and unparsable times are errors at their line.
"""

from __future__ import annotations

import codecs
import csv
import gzip
import io
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from recprivacy.data.interactions import Interactions, row_error, shown
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
    """The bytes of a text file, decompressed when the name ends in ``.gz``."""
    return _read_raw(path, whole=True)


def _read_raw(path: Path, whole: bool) -> bytes:
    """The file's bytes (``whole``) or its first line; a NUL byte means binary content."""
    require_file(path)
    try:
        with gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb") as fh:
            raw = fh.read() if whole else fh.readline()
    except (OSError, EOFError) as err:
        if path.suffix != ".gz":
            raise
        raise DataError("not a readable gzip file (not gzip data, or cut short)", path) from err
    binary = raw.find(b"\0")
    if binary >= 0:
        raise DataError(f"binary content at byte {binary}; expected a text file", path)
    return raw


def decode(raw: bytes, path: Path, encoding: str) -> str:
    """Text of ``raw`` without a UTF-8 byte order mark; an undecodable byte is reported by
    its offset and line, never shown."""
    bom = len(codecs.BOM_UTF8) if encoding == "utf-8" and raw.startswith(codecs.BOM_UTF8) else 0
    try:
        return raw[bom:].decode(encoding)
    except UnicodeDecodeError as err:
        start = bom + err.start
        line = raw[:start].count(b"\n") + 1
        message = f"byte {start} is not valid {encoding} text; expected a {encoding} text file"
        raise DataError(message, path, line) from err


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
        raise DataError(f"the file is empty; expected {'a header line and ' if header else ''}data lines", path)
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
    if frame.empty:
        raise DataError("no data lines after the header line" if header else "the file has no data lines", path)
    return _with_integer_ids(frame, kinds)


def _with_integer_ids(frame: pd.DataFrame, kinds: Mapping[str, FieldKind]) -> pd.DataFrame:
    """``frame`` with each ``id`` column as int64 when all its values are canonical integers."""
    for name, kind in kinds.items():
        if kind == "id":
            frame[name] = as_canonical_ints(frame[name])
    return frame


def first_line(path: Path, encoding: str = "utf-8") -> str:
    """The first line of a (possibly gzipped) text file, without its line break or BOM."""
    return decode(_read_raw(path, whole=False), path, encoding).rstrip("\r\n")


def header_columns(path: Path, sep: str, encoding: str = "utf-8") -> list[str]:
    """Column names on the first line of a delimited file; an empty file or a blank first
    line is a DataError."""
    first = first_line(path, encoding)
    if not first.strip():
        if not read_bytes(path).strip():
            raise DataError("the file is empty; expected a header line naming the columns", path)
        raise DataError("blank line; expected a header line naming the columns", path, 1)
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
    frame.index = _record_lines(frame, options, raw.count(b"\n") + (not raw.endswith(b"\n")))
    return frame


def _record_lines(frame: pd.DataFrame, options: dict, n_lines: int) -> pd.Index:
    """1-based file line where each record starts (``n_lines``: lines in the file). Records
    are consecutive lines unless a quoted field holds line breaks; then each record starts
    after the line breaks of those before it."""
    first = 2 if options["header"] == 0 else 1
    extra = np.zeros(len(frame), dtype=np.int64)
    if n_lines - (first - 1) > len(frame):
        for name in frame.columns:
            if not pd.api.types.is_numeric_dtype(frame[name]):
                extra += frame[name].astype(str).str.count("\n").to_numpy()
    starts = first + np.arange(len(frame)) + np.cumsum(extra) - extra
    return pd.Index(starts, name="line")


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
        if "EOF inside string" in str(err):
            raise DataError("a quoted field opens here and is never closed", path, _unclosed_quote_line(text)) from err
        found = re.search(r"line (\d+), saw (\d+)", str(err))
        line = int(found.group(1)) if found else None
        detail = f"found {found.group(2)}" if found else str(err).strip().splitlines()[-1]
        raise DataError(f"wrong number of fields: {detail}", path, line) from err
    frame.index = _record_lines(frame, options, text.count("\n") + (not text.endswith("\n")))
    first = 2 if options["header"] == 0 else 1
    lines = None if quoted else _physical_lines(text).iloc[first - 1 :]
    if lines is not None and len(lines) != len(frame):
        lines = None
    blank = (frame == "").all(axis=1).to_numpy()
    if lines is not None:
        blank = blank & lines.str.strip().eq("").to_numpy()
    frame = frame[~blank].copy()
    count_problem = None if lines is None else _count_problem(frame, options["sep"], lines[~blank])
    return _typed_text(frame, kinds, path, count_problem)


def _typed_text(
    frame: pd.DataFrame, kinds: Mapping[str, FieldKind], path: Path, problem: tuple[int, str] | None = None
) -> pd.DataFrame:
    """Text columns checked against ``kinds`` and numbers converted; a DataError names the
    earliest bad row, counting ``problem`` (row position, message) found by the caller."""
    found = [p for p in (problem, _value_problem(frame, kinds)) if p is not None]
    if found:
        position, message = min(found)
        raise row_error(frame.index, position, message, path)
    for name, kind in kinds.items():
        if kind in ("int", "float"):
            frame[name] = pd.to_numeric(frame[name].str.strip()).astype(_PANDAS_DTYPE[kind])
    return frame


def _unclosed_quote_line(text: str) -> int | None:
    """Line of the quote that opens a never-closed field: with an odd number of quotes (a
    doubled quote inside a field counts twice), the last one."""
    if text.count('"') % 2 == 0:
        return None
    return text.count("\n", 0, text.rfind('"')) + 1


def _physical_lines(text: str) -> pd.Series:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return pd.Series(lines, dtype=str).str.rstrip("\r")


def _count_problem(frame: pd.DataFrame, sep: str, lines: pd.Series) -> tuple[int, str] | None:
    """(row position, message) of the first line with the wrong number of fields, or None."""
    counts = lines.str.count(re.escape(sep)).to_numpy() + 1
    bad = counts != len(frame.columns)
    if not bad.any():
        return None
    row = int(np.argmax(bad))
    shown_sep = "'::'" if sep == _ONE_CHAR_SEP else repr(sep)
    return row, f"expected {len(frame.columns)} fields separated by {shown_sep}, found {counts[row]}"


def _value_problem(frame: pd.DataFrame, kinds: Mapping[str, FieldKind]) -> tuple[int, str] | None:
    """(row position, message) of the first value that does not fit its kind, or None."""
    found: list[tuple[int, str]] = []
    for name, kind in kinds.items():
        values = frame[name]
        bad, expected = _bad_values(values, kind)
        if bad.any():
            row = int(np.argmax(bad))
            found.append((row, f"field {name!r}: {values.iloc[row]!r} {expected}"))
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


def indexed_by(table: pd.DataFrame, column: str, path: Path) -> pd.DataFrame:
    """``table`` indexed by ``column``; a repeated id is a DataError at its second line."""
    repeated = table[column].duplicated().to_numpy()
    if repeated.any():
        row = int(np.argmax(repeated))
        raise row_error(table.index, row, f"{column} {shown(table[column].iloc[row])} is listed twice", path)
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

    The provenance's load step names the source, the format and the columns used (see
    ``Interactions.from_frame``, which also checks ratings and timestamps). Feature tables are
    indexed by original id; every user / item that occurs in the frame must have a row, else a
    DataError names the first line that mentions a missing id.
    """
    if frame.empty:
        raise DataError("no interactions (the file has no data rows)", source)
    data = Interactions.from_frame(frame, user_col, item_col, rating_col, time_col, name=name, source=str(source))
    sources = features_source or {}
    changes: dict = {"provenance": ({**data.provenance[0], "format": fmt, **provenance},)}
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
        position = int(np.flatnonzero((mentions == missing).to_numpy())[0])
        listed = f" in {table_path}" if table_path is not None else ""
        message = f"{what} {shown(missing)} has no row{listed}; every {what} that has interactions needs one"
        raise row_error(mentions.index, position, message, source)
    return table.loc[ids].reset_index(drop=True)


ROLE_NAMES: dict[str, tuple[str, ...]] = {
    "user": ("userid", "user", "uid", "reviewerid", "customerid", "visitorid"),
    "item": ("itemid", "item", "iid", "movieid", "productid", "asin", "bookid", "trackid", "businessid", "newsid"),
    "rating": ("rating", "ratings", "score", "stars", "star", "overall"),
    "timestamp": ("timestamp", "timestamps", "time", "ts", "datetime", "date", "unixtime", "unixreviewtime"),
}
"""Usual column names of each role, preferred first, compared in lower case without ``_``,
``-``, ``.`` or spaces (``userId``, ``user_id`` and ``User ID`` all read as ``userid``)."""

_ROLE_OPTIONS = {"user": "user_col", "item": "item_col", "rating": "rating_col", "timestamp": "time_col"}
_ROLE_KINDS: dict[str, FieldKind] = {"user": "id", "item": "id", "rating": "float", "timestamp": "str"}


def load_table(
    path: str | Path,
    user_col: str | None = None,
    item_col: str | None = None,
    rating_col: str | None = None,
    time_col: str | None = None,
    sep: str | None = None,
    name: str | None = None,
) -> Interactions:
    """Interactions from a CSV / TSV (with a header row) or Parquet file.

    Each ``*_col`` names its column; ``None`` (default) takes the column with a usual name
    for the role (``ROLE_NAMES``: ``user_id``/``userId``/``user``..., ``rating``/``score``/
    ``stars``..., ``timestamp``/``time``/``ts``...); ``''`` uses no rating / time column.
    ``sep`` defaults to ``','`` for ``.csv``, tab for ``.tsv``/``.tab``, otherwise it is
    sniffed from the header line. ``time_col`` may hold numbers (whole Unix seconds) or ISO
    8601 date-times (converted to Unix seconds, UTC). The columns used are recorded in the
    provenance and shown by ``describe()``.
    """
    path = Path(path)
    options = {"user": user_col, "item": item_col, "rating": rating_col, "timestamp": time_col}
    parquet = path.suffix == ".parquet"
    if parquet:
        table = _read_parquet(path)
        columns = _table_columns(list(table.columns), options, path, header_line=None)
        frame = _parquet_values(table, columns, path)
    else:
        sep = sep or _guess_separator(path)
        columns = _table_columns(header_columns(path, sep), options, path, header_line=1)
        frame = read_delimited(path, sep, _kinds(columns), header=True, quoted=True)
    if columns["timestamp"] is not None:
        frame[columns["timestamp"]] = _time_column(frame, columns["timestamp"], path)
    return build_interactions(
        frame,
        name=name or path.stem,
        source=path,
        fmt="parquet" if parquet else "csv",
        user_col=columns["user"],
        item_col=columns["item"],
        rating_col=columns["rating"],
        time_col=columns["timestamp"],
    )


def _table_columns(
    header: list[str], options: Mapping[str, str | None], path: Path, header_line: int | None
) -> dict[str, str | None]:
    """The column of each role (``None``: not used): the one named in ``options``, else the
    one with a usual name (``ROLE_NAMES``) among the columns not named for another role."""
    repeated = [col for i, col in enumerate(header) if col in header[:i]]
    if repeated:
        raise DataError(f"column {repeated[0]!r} appears twice in the header; expected unique names", path, header_line)
    named = {role: _named_column(role, option, header, path, header_line) for role, option in options.items()}
    taken = [col for col in named.values() if col]
    if len(set(taken)) < len(taken):
        raise DataError(f"one column is named for two roles: {_shown_options(named)}", path, header_line)
    free = [col for col in header if col not in taken]
    return {
        role: named[role] if options[role] is not None else _recognised_column(role, free, header, path, header_line)
        for role in ROLE_NAMES
    }


def _named_column(role: str, option: str | None, header: list[str], path: Path, line: int | None) -> str | None:
    """The column an option names; ``None`` when not named or (rating, time) named ``''``."""
    if option is None or (option == "" and role in ("rating", "timestamp")):
        return None
    if option not in header:
        raise DataError(f"{_ROLE_OPTIONS[role]}={option!r} names no column; the header has {header}", path, line)
    return option


def _recognised_column(role: str, free: list[str], header: list[str], path: Path, line: int | None) -> str | None:
    """The free column with the most preferred usual name of ``role``; None if none has one
    (an error for user and item)."""
    for usual in ROLE_NAMES[role]:
        matches = [col for col in free if _plain(col) == usual]
        if len(matches) > 1:
            raise DataError(
                f"columns {matches[0]!r} and {matches[1]!r} could both be the {role} column; "
                f"choose one with {_ROLE_OPTIONS[role]}=",
                path,
                line,
            )
        if matches:
            return matches[0]
    if role in ("user", "item"):
        raise DataError(
            f"no {role} column: the header has {header}; name it with {_ROLE_OPTIONS[role]}= "
            f"(recognised: {', '.join(ROLE_NAMES[role])}, in any case, with or without '_')",
            path,
            line,
        )
    return None


def _plain(column: str) -> str:
    return re.sub(r"[\s_.-]", "", column).lower()


def _shown_options(columns: Mapping[str, str | None]) -> str:
    return ", ".join(f"{_ROLE_OPTIONS[role]}={col!r}" for role, col in columns.items() if col)


def _kinds(columns: Mapping[str, str | None]) -> dict[str, FieldKind]:
    return {col: _ROLE_KINDS[role] for role, col in columns.items() if col is not None}


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


def _read_parquet(path: Path) -> pd.DataFrame:
    """The whole Parquet table, column names as text."""
    require_file(path)
    try:
        table = pd.read_parquet(path)
    except (OSError, ValueError) as err:
        raise DataError("not a readable Parquet file; expected an Apache Parquet table", path) from err
    table.columns = [str(col) for col in table.columns]
    return table


def _parquet_values(table: pd.DataFrame, columns: Mapping[str, str | None], path: Path) -> pd.DataFrame:
    """The used columns checked like CSV text (nulls as empty text), rows indexed 1.. as ``row``."""
    if table.empty:
        raise DataError("the table has no rows", path)
    kinds = _kinds(columns)
    text = pd.DataFrame({col: table[col].astype(object).where(table[col].notna(), "").astype(str) for col in kinds})
    text.index = pd.RangeIndex(1, len(text) + 1, name="row")
    return _with_integer_ids(_typed_text(text, kinds, path), kinds)


def _time_column(frame: pd.DataFrame, col: str, path: Path) -> pd.Series:
    """Timestamps: numbers as given (``Interactions.from_frame`` checks they are whole),
    ISO 8601 strings as Unix seconds (UTC); one kind per column."""
    values = frame[col]
    numbers = pd.to_numeric(values, errors="coerce")
    is_number = numbers.notna().to_numpy()
    if is_number.all():
        return numbers
    times = pd.to_datetime(values.where(~is_number), errors="coerce", utc=True, format="ISO8601")
    neither = ~is_number & times.isna().to_numpy()
    if neither.any():
        row = int(np.argmax(neither))
        message = f"field {col!r}: {values.iloc[row]!r} is neither a number nor an ISO 8601 time"
        raise row_error(frame.index, row, message, path)
    if is_number.any():
        row = int(np.argmax(is_number != is_number[0]))
        kind = "a number" if is_number[row] else "an ISO 8601 time"
        message = f"field {col!r}: {values.iloc[row]!r} is {kind} unlike the first value; expected one kind of time"
        raise row_error(frame.index, row, message, path)
    return pd.Series((times - pd.Timestamp(0, tz="UTC")) // pd.Timedelta(seconds=1), index=frame.index, dtype=np.int64)
