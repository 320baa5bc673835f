"""RecBole atomic files: read and write ``.inter``, ``.user`` and ``.item``.

An atomic file is tab-separated with a header of ``name:type`` fields, type one of ``token``
(a categorical value), ``token_seq`` (space-separated tokens), ``float`` and ``float_seq``
(RecBole docs, "Atomic Files"). Quoting follows pandas' CSV rules, as RecBole's own reader
does. A dataset folder ``NAME/`` holds ``NAME.inter`` and optionally ``NAME.user`` and
``NAME.item``.

Reading: the ``.inter`` fields ``user_id``, ``item_id`` and, when present, ``rating`` and
``timestamp`` (field names can be changed) make the ``Interactions``; the other fields of
``.user`` / ``.item`` become feature columns. Tokens are text, except that a token column in
which every value is a canonical decimal integer is read as int64 (lossless both ways, and
ids then match the integer ids of the original MovieLens files). Ratings must be numbers >= 0
and timestamps whole numbers (``Interactions.from_frame`` checks both). A float field that a
line leaves empty is NaN, except in the required fields.

Writing: integer columns are written as ``token``, float columns as ``float``, tuples or lists
as ``token_seq`` / ``float_seq``, anything else as ``token``; text must not contain tabs or
line breaks. Each file is written to a temporary file and renamed into place.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from recprivacy.data.interactions import Interactions
from recprivacy.data.loaders.tabular import (
    FieldKind,
    as_canonical_ints,
    build_interactions,
    header_columns,
    indexed_by,
    read_delimited,
    require_file,
)
from recprivacy.errors import DataError
from recprivacy.io import write_text_atomic

ATOMIC_TYPES = ("token", "token_seq", "float", "float_seq")


def read_atomic(path: str | Path, required: Sequence[str] = ()) -> pd.DataFrame:
    """One atomic file as a frame indexed by 1-based line, columns named without their type.

    ``required`` fields must be in the header and non-empty on every line.
    """
    path = Path(path)
    fields = _header_fields(path)
    missing = [name for name in required if name not in fields]
    if missing:
        raise DataError(f"missing field(s) {missing}; the header has {list(fields)}", path, 1)
    kinds: dict[str, FieldKind] = {
        f"{name}:{kind}": ("float" if kind == "float" else "id") if name in required else "str"
        for name, kind in fields.items()
    }
    frame = read_delimited(path, "\t", kinds, header=True, quoted=True)
    frame.columns = list(fields)
    for name, kind in fields.items():
        frame[name] = _typed(frame[name], kind, path, required=name in required)
    return frame


def _header_fields(path: Path) -> dict[str, str]:
    """``{name: type}`` from the header line."""
    fields: dict[str, str] = {}
    for column in header_columns(require_file(path, "RecBole atomic file"), "\t"):
        name, _, kind = column.rpartition(":")
        if not name or kind not in ATOMIC_TYPES:
            raise DataError(f"header field {column!r} is not 'name:type' with type in {ATOMIC_TYPES}", path, 1)
        if name in fields:
            raise DataError(f"header field {name!r} appears twice", path, 1)
        fields[name] = kind
    return fields


def _typed(values: pd.Series, kind: str, path: Path, required: bool) -> pd.Series:
    if kind == "token":
        return as_canonical_ints(values)
    if kind == "float":
        return values if required else _optional_floats(values, path)
    lists = values.str.split()
    tokens = lists.explode().dropna()
    if kind == "float_seq":
        _optional_floats(tokens, path)
        convert = float
    else:
        convert = int if as_canonical_ints(tokens).dtype == np.int64 else str
    return lists.map(lambda v: tuple(convert(x) for x in v))


def _optional_floats(values: pd.Series, path: Path) -> pd.Series:
    """Floats, empty text as NaN; other non-numbers raise at their line."""
    text = values.astype(str).str.strip()
    numbers = pd.to_numeric(text.where(text != "", "nan"), errors="coerce")
    bad = (numbers.isna() & (text != "")).to_numpy()
    if bad.any():
        row = int(np.argmax(bad))
        raise DataError(f"{values.iloc[row]!r} is not a number", path, int(values.index[row]))
    return numbers.astype(np.float64)


def find_inter_file(path: Path) -> Path:
    """``path`` if it is a file; in a folder ``NAME/NAME.inter``, else its only ``.inter``."""
    if not path.is_dir():
        return require_file(path, "RecBole .inter file")
    own = path / f"{path.name}.inter"
    if own.is_file():
        return own
    found = sorted(path.glob("*.inter"))
    if len(found) != 1:
        raise DataError(f"expected one .inter file in this folder, found {[p.name for p in found]}", path)
    return found[0]


def load_recbole(
    path: str | Path,
    name: str | None = None,
    user_field: str = "user_id",
    item_field: str = "item_id",
    rating_field: str = "rating",
    time_field: str = "timestamp",
) -> Interactions:
    """Interactions from ``NAME.inter`` (a file, or its folder) plus ``NAME.user`` / ``NAME.item``."""
    inter_file = find_inter_file(Path(path))
    present = _header_fields(inter_file)
    rating_col = rating_field if rating_field in present else None
    time_col = time_field if time_field in present else None
    required = [field for field in (user_field, item_field, rating_col, time_col) if field is not None]
    inter = read_atomic(inter_file, required=required)
    user_file, item_file = inter_file.with_suffix(".user"), inter_file.with_suffix(".item")
    return build_interactions(
        inter,
        name=name or inter_file.stem,
        source=inter_file,
        fmt="recbole-atomic",
        user_col=user_field,
        item_col=item_field,
        rating_col=rating_col,
        time_col=time_col,
        user_features=_features(user_file, user_field),
        item_features=_features(item_file, item_field),
        features_source={"user": user_file, "item": item_file},
    )


def _features(path: Path, id_field: str) -> pd.DataFrame | None:
    if not path.is_file():
        return None
    return indexed_by(read_atomic(path, required=(id_field,)), id_field, path)


def write_recbole(data: Interactions, folder: str | Path, name: str | None = None) -> dict[str, Path]:
    """Write ``folder/NAME.inter`` (+ ``.user`` / ``.item`` when ``data`` has features).

    Returns ``{"inter": path, "user": path, "item": path}`` for the files written.
    """
    name = name or data.name
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    inter = {"user_id": data.user_ids[data.users], "item_id": data.item_ids[data.items]}
    if data.ratings is not None:
        inter["rating"] = data.ratings
    if data.timestamps is not None:
        inter["timestamp"] = data.timestamps
    tables = {"inter": pd.DataFrame(inter)}
    for kind, table, ids in (("user", data.user_features, data.user_ids), ("item", data.item_features, data.item_ids)):
        if table is not None:
            if f"{kind}_id" in table.columns:
                raise DataError(f"{kind}_features has a column named {kind}_id, which the atomic file uses for the id")
            tables[kind] = pd.concat([pd.DataFrame({f"{kind}_id": ids}), table.reset_index(drop=True)], axis=1)
    written = {}
    for kind, table in tables.items():
        written[kind] = folder / f"{name}.{kind}"
        _write_atomic_file(
            table, written[kind], typed={"rating": "float", "timestamp": "float"} if kind == "inter" else {}
        )
    return written


def _write_atomic_file(table: pd.DataFrame, path: Path, typed: dict[str, str]) -> None:
    """Write with a typed header, atomically (``io.write_text_atomic``)."""
    out = pd.DataFrame(index=table.index)
    for column in table.columns:
        kind = typed.get(column) or _atomic_type(table[column])
        out[f"{column}:{kind}"] = _atomic_text(table[column], kind, path)
    write_text_atomic(path, out.to_csv(sep="\t", index=False, lineterminator="\n"))


def _atomic_type(values: pd.Series) -> str:
    if pd.api.types.is_float_dtype(values):
        return "float"
    if values.dtype == object and len(values) and values.map(lambda v: isinstance(v, (tuple, list))).all():
        elements = values.explode().dropna()
        return "float_seq" if len(elements) and all(isinstance(x, float) for x in elements) else "token_seq"
    return "token"


def _atomic_text(values: pd.Series, kind: str, path: Path) -> pd.Series:
    """Values as written: sequences joined by spaces; text checked for tabs and line breaks."""
    if kind in ("float", "token") and (pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values)):
        return values
    if kind.endswith("_seq"):
        values = values.map(lambda v: " ".join(str(x) for x in v))
    text = values.astype(object).where(values.notna(), "").astype(str)
    bad = text.str.contains(r"[\t\r\n]", regex=True).to_numpy()
    if bad.any():
        row = int(np.argmax(bad))
        raise DataError(
            f"column {values.name!r}, value {text.iloc[row]!r} (0-based row {row} of the table written) "
            "contains a tab or line break, which atomic files cannot hold",
            path,
        )
    return text
