"""The resumable record store: one JSON line per finished cell under the run folder.

``records.jsonl`` holds, per line, ``{"cell": setting, "group": g, "measurements": [...],
"arrays": file-or-null}`` and, when the cell has any, its JSON ``"details"``; arrays are saved first as ``arrays/<hash>.npz`` (atomically), then
the line is appended and flushed to disk, so a line in the file means the cell is complete.
``load`` reads every complete line; a last line without its newline (a crash mid-write) is
ignored and cut off before the next append, so that cell runs again. Any other unreadable line is a
one-line ``DataError`` naming ``records.jsonl:<line>``. A store without a path keeps its records
in memory (a study run without a run folder, as ``run_study`` and the tests do).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from recprivacy.errors import DataError
from recprivacy.experiments.kit.cell import Cell, CellResult
from recprivacy.experiments.kit.measurement import Measurement
from recprivacy.io import write_bytes_atomic

RECORDS = "records.jsonl"
ARRAYS = "arrays"


class RecordStore:
    """Finished cells of one run (module docstring); ``folder=None`` keeps them in memory."""

    def __init__(self, folder: str | Path | None = None) -> None:
        self.folder = None if folder is None else Path(folder)
        self._memory: dict[str, CellResult] = {}
        self._tail_checked = False

    @property
    def path(self) -> Path | None:
        """The JSON-lines file (None for a store in memory)."""
        return None if self.folder is None else self.folder / RECORDS

    def load(self) -> dict[str, CellResult]:
        """Every stored cell's result by cell key."""
        return dict(self._memory) if self.path is None else self._scan()

    def add(self, cell: Cell, result: CellResult) -> None:
        """Store one finished cell (arrays first, then its line)."""
        if self.path is None:
            self._memory[cell.key] = result
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        self._cut_partial_line()
        line = {"cell": dict(cell.setting), "group": cell.group, "measurements": [m.to_json() for m in result.measurements],
                "arrays": self._save_arrays(cell, result.arrays)}  # fmt: skip
        if result.details:
            line["details"] = result.details
        with open(self.path, "ab") as handle:
            handle.write((json.dumps(line, allow_nan=True) + "\n").encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())

    def _cut_partial_line(self) -> None:
        """Before this store's first append: drop a last line that a crash left without its newline."""
        if self._tail_checked:
            return
        self._tail_checked = True
        if self.path.exists():
            data = self.path.read_bytes()
            if data and not data.endswith(b"\n"):
                with open(self.path, "r+b") as handle:
                    handle.truncate(data.rfind(b"\n") + 1)

    def _save_arrays(self, cell: Cell, arrays: dict[str, np.ndarray]) -> str | None:
        if not arrays:
            return None
        name = f"{ARRAYS}/{hashlib.sha1(cell.key.encode()).hexdigest()[:16]}.npz"
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        (self.folder / ARRAYS).mkdir(exist_ok=True)
        write_bytes_atomic(self.folder / name, buffer.getvalue())
        return name

    def _scan(self) -> dict[str, CellResult]:
        if not self.path.exists():
            return {}
        *complete, _tail = self.path.read_bytes().split(b"\n")  # _tail: a line cut short by a crash (or b"")
        results: dict[str, CellResult] = {}
        for number, raw in enumerate(complete, start=1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except ValueError:
                raise DataError("unreadable line (expected one JSON object per finished cell)", self.path, number) from None
            cell, result = self._parse(obj, number)
            results[cell.key] = result
        return results

    def _parse(self, obj: Any, number: int) -> tuple[Cell, CellResult]:
        where = f"{self.path}:{number}"
        if not isinstance(obj, dict) or not isinstance(obj.get("cell"), dict) or not isinstance(obj.get("measurements"), list):
            raise DataError(f"{where}: expected an object with 'cell' (object) and 'measurements' (list)")
        cell = Cell(obj["cell"], str(obj.get("group", "")))
        found = [Measurement.from_json(m, f"{where}: measurements[{i}]") for i, m in enumerate(obj["measurements"])]
        arrays: dict[str, np.ndarray] = {}
        if obj.get("arrays"):
            path = self.folder / obj["arrays"]
            if not path.is_file():
                raise DataError(f"{where}: its arrays file {obj['arrays']} is missing")
            with np.load(path, allow_pickle=False) as saved:
                arrays = {name: saved[name] for name in saved.files}
        details = obj.get("details", {})
        if not isinstance(details, dict):
            raise DataError(f"{where}: details must be a JSON object, got {details!r}")
        return cell, CellResult(found, arrays, details)
