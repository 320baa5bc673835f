"""Tables of a results document as Markdown, CSV and display strings.

A table is a mapping ``{"columns": [...], "rows": [[...], ...], "caption": "..."}``. Numbers
are shown with four decimals (``0.0523``) between 1e-3 and 1e4 and in ``%.3g`` otherwise;
CSV keeps full precision.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping
from typing import Any


def format_value(value: Any) -> str:
    """Display form of a cell: ``n/a`` for None/NaN, ``yes``/``no`` for booleans."""
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "n/a"
        if value == 0 or math.isinf(value) or 1e-3 <= abs(value) < 1e4:
            return f"{value:.4f}" if not math.isinf(value) else str(value)
        return f"{value:.3g}"
    return str(value)


def display_rows(table: Mapping[str, Any]) -> list[list[str]]:
    """Rows with every cell formatted by :func:`format_value`."""
    return [[format_value(v) for v in row] for row in table["rows"]]


def markdown_table(table: Mapping[str, Any]) -> str:
    """GitHub-flavoured Markdown table, caption in italics above it."""

    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    lines = []
    if table.get("caption"):
        lines += [f"*{table['caption']}*", ""]
    lines.append("| " + " | ".join(cell(str(c)) for c in table["columns"]) + " |")
    lines.append("|" + "|".join("---" for _ in table["columns"]) + "|")
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in display_rows(table)]
    return "\n".join(lines)


def csv_table(table: Mapping[str, Any]) -> str:
    """CSV text with a header row; numbers at full precision."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(table["columns"])
    writer.writerows(table["rows"])
    return buf.getvalue()
