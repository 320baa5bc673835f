"""A runs file fed by the study kit: a benchmark runs a study's own cells and keeps its record format."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from record import append_record

from recprivacy.experiments.kit import Cell, CellResult, RecordStore


class RunsFile(RecordStore):
    """The study kit's record store (kept in memory) that also appends every finished cell to a
    runs file as one flat record, ``to_record(cell, result)``: a benchmark runs a study's own
    cells on ``kit.Bench`` (in this process or on Ray) and keeps the record format its runs
    files have (``benchmarks/results.py`` reads them); it skips the cells its runs file holds."""

    def __init__(self, path: str | Path, to_record: Callable[[Cell, CellResult], dict[str, Any]]) -> None:
        super().__init__()
        self.runs, self.to_record = Path(path), to_record

    def add(self, cell: Cell, result: CellResult) -> None:
        super().add(cell, result)
        self.runs.parent.mkdir(parents=True, exist_ok=True)
        append_record(self.runs, self.to_record(cell, result))
