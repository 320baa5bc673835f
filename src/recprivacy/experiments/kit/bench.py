"""The kit's entry point: run a grid's cells through an executor into a record store.

``Bench(store, executor).run(grid, cells)`` loads the store, runs only the cells whose key is
not stored yet (grouped by ``Cell.group``, groups in first-seen order), stores each finished
cell at once, and returns every cell's result by key, stored and new alike. An interrupted run
loses at most the cells in flight; the rerun (``recprivacy run --resume``) finishes the rest.

A study on the kit takes a ``Bench`` (the runner passes one holding the run folder's store and
the chosen executor; the default keeps records in memory and runs in this process), builds
its cells and a grid, and renders from the results.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from recprivacy.experiments.kit.cell import Cell, CellResult, Grid
from recprivacy.experiments.kit.executor import Executor, InProcess
from recprivacy.experiments.kit.store import RecordStore
from recprivacy.progress import advance, plan, stage


@dataclass
class Bench:
    """A record store and an executor (module docstring)."""

    store: RecordStore = field(default_factory=RecordStore)
    executor: Executor = field(default_factory=InProcess)

    def run(self, grid: Grid, cells: Sequence[Cell]) -> dict[str, CellResult]:
        """Every cell's result by ``Cell.key``, running only the cells not stored yet."""
        done = self.store.load()
        todo = list({c.key: c for c in cells if c.key not in done}.values())
        plan([c.key for c in cells])
        for key in done:
            advance(key)
        stage(f"cells: {len(done)} stored, {len(todo)} to run ({self.executor.name})")
        groups: dict[str, list[Cell]] = {}
        for cell in todo:
            groups.setdefault(cell.group, []).append(cell)

        def keep(cell: Cell, result: CellResult) -> None:
            self.store.add(cell, result)
            done[cell.key] = result
            advance(cell.key)

        self.executor.run(grid, groups, keep)
        return {c.key: done[c.key] for c in cells}
