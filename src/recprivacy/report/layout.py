"""How a table is laid out in the HTML report so that it fits a 1200 px window without
horizontal scroll and reads at a glance, while every number stays on the page.

* **Rows without numbers** (every numeric column n/a: a cell that does not apply, a result not
  measured) are not drawn as rows of "n/a": they become one note under the table, grouped by
  the text of their last non-empty column (their reason), each listing the rows' identifying
  values.
* **Wide tables** (more than ``MAX_COLUMNS`` columns) are shown as several narrower tables, each
  repeating the columns that identify a row (the shortest leading run of columns, at most
  ``MAX_KEY``, whose values are unique over the rows).
* **Long tables** (more than ``MAX_OPEN_ROWS`` rows) are collapsed under their caption and row
  count; the reader opens them.

Only the HTML view changes: ``results.json``, the CSV files and ``report.md`` keep every table
whole.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from recprivacy.report.tables import format_value

MAX_COLUMNS = 8
MAX_KEY = 3
MAX_OPEN_ROWS = 30


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _missing(value: Any) -> bool:
    return value is None or value == "" or (isinstance(value, float) and math.isnan(value))


def numeric_columns(rows: Sequence[Sequence[Any]]) -> list[int]:
    """Columns holding a number in at least one row."""
    width = max((len(r) for r in rows), default=0)
    return [j for j in range(width) if any(_is_number(r[j]) for r in rows)]


def key_width(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> int:
    """How many leading columns identify a row: the fewest (1 to ``MAX_KEY``) whose values are
    unique over ``rows``; ``MAX_KEY`` (or fewer with fewer columns) when none are."""
    for width in range(1, min(MAX_KEY, len(columns)) + 1):
        if len({tuple(map(str, r[:width])) for r in rows}) == len(rows):
            return width
    return min(MAX_KEY, len(columns))


def split_unmeasured(rows: Sequence[Sequence[Any]]) -> tuple[list[Sequence[Any]], list[Sequence[Any]]]:
    """``(rows with a number, rows whose every numeric column is missing)``; a table without
    numeric columns keeps all its rows."""
    numeric = numeric_columns(rows)
    if not numeric:
        return list(rows), []
    empty = [r for r in rows if all(_missing(r[j]) for j in numeric)]
    return [r for r in rows if not all(_missing(r[j]) for j in numeric)], empty


def unmeasured_note(rows: Sequence[Sequence[Any]], key: int) -> list[dict[str, Any]]:
    """The rows without numbers grouped by their last non-empty text after the key columns:
    ``[{"why", "rows": ["key · key", ...]}]`` in first-seen order."""
    groups: dict[str, list[str]] = {}
    for row in rows:
        texts = [str(v) for v in row[key:] if not _missing(v)]
        who = " · ".join(str(v) for v in row[:key] if not _missing(v))
        groups.setdefault(texts[-1] if texts else "no reason given", []).append(who)
    return [{"why": why, "rows": who} for why, who in groups.items()]


def column_groups(n_columns: int, key: int) -> list[list[int]]:
    """Column indices of each part of a table of ``n_columns``: the whole table when it has at
    most ``MAX_COLUMNS``, else the key columns followed by a near-equal share of the others."""
    if n_columns <= MAX_COLUMNS:
        return [list(range(n_columns))]
    others = list(range(key, n_columns))
    parts = math.ceil(len(others) / (MAX_COLUMNS - key))
    size = math.ceil(len(others) / parts)
    return [list(range(key)) + others[i : i + size] for i in range(0, len(others), size)]


def table_view(table: Mapping[str, Any]) -> dict[str, Any]:
    """What the HTML template draws for ``table``: ``caption``, ``parts`` (each ``{columns,
    rows}`` of display strings), ``collapsed`` with its ``summary``, and the ``unmeasured``
    note (see the module docstring)."""
    columns, rows = list(table["columns"]), table["rows"]
    kept, empty = split_unmeasured(rows)
    key = key_width(columns, rows) if len(columns) > MAX_COLUMNS or empty else 1
    groups = column_groups(len(columns), key)
    parts = [{"columns": [columns[j] for j in g], "rows": [[format_value(r[j]) for j in g] for r in kept]} for g in groups]
    caption = table.get("caption", "")
    return {
        "caption": caption,
        "parts": parts,
        "collapsed": len(kept) > MAX_OPEN_ROWS,
        "summary": f"{caption or 'Table'} ({len(kept)} rows; select to show)",
        "unmeasured": unmeasured_note(empty, key),
        "n_unmeasured": len(empty),
    }
