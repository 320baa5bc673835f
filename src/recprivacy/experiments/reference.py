"""The numbers a paper reports, read from ``recprivacy/papers/<id>/reference.yaml`` (``paper_file``
finds a paper's packaged files, its ``checks.yaml`` too).

Each file holds ``paper`` (the id), ``title``, ``notes`` (what the numbers mean) and ``cells``,
a list of ``{table, row, column, value}``: ``table`` names the paper's table or figure
("Table 2", "Figure 9", "Section 3.4"), ``row`` and ``column`` are its labels in the study's own
keys (several keys joined by ``/``, e.g. ``ml-100k/age/apm``), ``value`` is the number as the
paper prints it. The file's comments say, per table, what the row and column hold.

Decision: the numbers live as data, one flat cell per number, so a study looks a cell up by name
instead of indexing a nested literal of its own shape, and a reader checks a number against the
paper without reading code. A malformed cell (missing key, a value that is not a number, the same
(table, row, column) twice) is a one-line ``DataError`` naming the file and the cell.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

import yaml

from recprivacy.errors import DataError

KEYS = ("table", "row", "column", "value")
Cell = tuple[str, str, str]


@dataclass(frozen=True)
class PaperReference:
    """One paper's reported numbers, keyed by (table, row, column)."""

    paper: str
    title: str
    notes: str
    cells: dict[Cell, float]

    def value(self, table: str, row: str, column: str) -> float | None:
        """The paper's number in this cell (None when the paper has none)."""
        return self.cells.get((table, row, column))

    def row(self, table: str, row: str) -> dict[str, float]:
        """``column -> value`` of one row, in file order (empty when the row is absent)."""
        return {c: v for (t, r, c), v in self.cells.items() if (t, r) == (table, row)}

    def entries(self, table: str) -> list[tuple[str, str, float]]:
        """``(row, column, value)`` of every cell of one table, in file order."""
        return [(r, c, v) for (t, r, c), v in self.cells.items() if t == table]

    def table(self, name: str) -> dict[str, dict[str, float]]:
        """``row -> column -> value`` of one table, rows in file order (empty when absent)."""
        out: dict[str, dict[str, float]] = {}
        for r, c, v in self.entries(name):
            out.setdefault(r, {})[c] = v
        return out


def _cell(entry: Any, where: str, path: Path) -> tuple[Cell, float]:
    """Validate one ``cells`` entry: all four keys, text labels, a finite number."""
    if not isinstance(entry, dict):
        raise DataError(f"{where}: expected a mapping with keys {', '.join(KEYS)}, got {entry!r}", path)
    missing = [k for k in KEYS if k not in entry]
    if missing:
        raise DataError(f"{where}: missing key(s) {', '.join(missing)} in {entry!r}", path)
    if any(not isinstance(entry[k], str | int | float) or entry[k] == "" for k in KEYS[:3]):
        raise DataError(f"{where}: table, row and column must be non-empty labels in {entry!r}", path)
    value = entry["value"]
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise DataError(f"{where}: value must be a finite number, got {value!r}", path)
    return (str(entry["table"]), str(entry["row"]), str(entry["column"])), float(value)


def load_reference(path: Path) -> PaperReference:
    """Read and validate one reference file (the module docstring gives its shape)."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        raise DataError(f"cannot read the paper reference: {str(error).splitlines()[0]}", path) from error
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise DataError("expected a mapping with a 'cells' list", path)
    cells: dict[Cell, float] = {}
    for n, entry in enumerate(data["cells"]):
        key, value = _cell(entry, f"cells[{n}]", path)
        if key in cells:
            raise DataError(f"cells[{n}]: duplicate cell table={key[0]!r}, row={key[1]!r}, column={key[2]!r}", path)
        cells[key] = value
    return PaperReference(str(data.get("paper", path.parent.name)), str(data.get("title", "")),
                          str(data.get("notes", "")), cells)


def paper_file(paper_id: str, name: str, what: str) -> Path:
    """The packaged file ``papers/<paper_id>/<name>`` (``reference.yaml``, ``checks.yaml``); a
    ``DataError`` naming it and ``what`` it holds when the paper has none."""
    path = Path(str(files("recprivacy") / "papers" / paper_id / name))
    if not path.is_file():
        raise DataError(f"no {what} for paper {paper_id!r}", path)
    return path


@cache
def reference(paper_id: str) -> PaperReference:
    """The packaged reference of paper ``paper_id`` ("000" ... "004"), read once."""
    return load_reference(paper_file(paper_id, "reference.yaml", "reference numbers"))
