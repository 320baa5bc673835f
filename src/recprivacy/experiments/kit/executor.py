"""Where a grid's cells run: in this process (the default) or on Ray workers.

Both executors take the cells to run grouped by ``Cell.group`` and call ``on_result(cell,
result)`` in the driver for every finished cell (the bench stores it at once). A group is
the unit of work: its cells run one after another in one process, after one ``grid.prepare``.

* :class:`InProcess` runs the groups in order, in this process.
* :class:`RayExecutor` sends each group to a Ray task (one CPU each) and stores each group's
  cells as soon as its task finishes. It joins the running Ray instance when there is one,
  else starts a local one (``address=None``) or connects to a cluster (``address="host:port"``
  or ``"auto"``), and shuts down only what it started. Ray is the optional ``ray`` extra.

The result of a cell depends only on its setting and the grid (every random choice is seeded
from them), so both executors give the same numbers (``tests/unit/test_kit_executor.py``). An
exception inside a cell names the cell (``cell.name_cell``) and keeps its type, also when it
comes back from a Ray worker.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Protocol

from recprivacy.errors import ConfigError
from recprivacy.experiments.kit.cell import Cell, CellResult, Grid, name_cell
from recprivacy.progress import stage

OnResult = Callable[[Cell, CellResult], None]
EXECUTORS = ("inprocess", "ray")


class Executor(Protocol):
    """Runs groups of cells and reports each finished cell."""

    name: str

    def run(self, grid: Grid, groups: Mapping[str, Sequence[Cell]], on_result: OnResult) -> None:
        """Run every cell of ``groups``; ``on_result`` gets each in the driver."""


def measure_group(grid: Grid, group: str, cells: Sequence[Cell]) -> Iterator[tuple[Cell, CellResult]]:
    """Prepare ``group`` once and measure its cells in order, yielding each as it finishes
    (an exception names the cell)."""
    prepared = grid.prepare(group)
    for cell in cells:
        try:
            result = grid.measure(cell, prepared)
        except Exception as err:
            raise name_cell(err, cell)
        yield cell, result


def run_group(grid: Grid, group: str, cells: Sequence[Cell]) -> list[tuple[Cell, CellResult]]:
    """Every result of one group (the body of a Ray task)."""
    return list(measure_group(grid, group, cells))


class InProcess:
    """Every group in this process, in order; each cell is reported as soon as it finishes."""

    name = "inprocess"

    def run(self, grid: Grid, groups: Mapping[str, Sequence[Cell]], on_result: OnResult) -> None:
        for group, cells in groups.items():
            stage(f"cells of {group or 'the grid'}: {len(cells)}")
            for cell, result in measure_group(grid, group, cells):
                on_result(cell, result)


class RayExecutor:
    """Groups as Ray tasks on a local instance or a cluster (module docstring)."""

    name = "ray"

    def __init__(self, address: str | None = None, num_cpus: int | None = None) -> None:
        self.address = address
        self.num_cpus = num_cpus

    def run(self, grid: Grid, groups: Mapping[str, Sequence[Cell]], on_result: OnResult) -> None:
        ray = _import_ray()
        started = not ray.is_initialized()
        if started:
            ray.init(address=self.address, num_cpus=None if self.address else self.num_cpus, include_dashboard=False)
        try:
            task = ray.remote(num_cpus=1)(run_group)
            grid_ref = ray.put(grid)
            pending = {task.remote(grid_ref, group, list(cells)): group for group, cells in groups.items()}
            stage(f"ray: {len(pending)} group(s) of cells sent to {ray.cluster_resources().get('CPU', 0):g} CPUs")
            while pending:
                done, _ = ray.wait(list(pending), num_returns=1)
                for ref in done:
                    pending.pop(ref)
                    for cell, result in _get(ray, ref):
                        on_result(cell, result)
        finally:
            if started:
                ray.shutdown()


def _get(ray: Any, ref: Any) -> list[tuple[Cell, CellResult]]:
    """A task's results; its exception (already naming the cell) re-raised as itself."""
    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as err:
        cause = getattr(err, "cause", None)
        if isinstance(cause, Exception):
            raise cause from err
        raise


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError("--executor ray: Ray is not installed; install the extra: pip install 'recprivacy[ray]'") from None
    return ray


def make_executor(name: str = "inprocess", address: str | None = None) -> Executor:
    """The executor called ``name`` (``inprocess`` or ``ray``); ``address`` only with Ray."""
    if name == "inprocess":
        if address:
            raise ConfigError(f"--ray-address {address}: only with --executor ray")
        return InProcess()
    if name == "ray":
        return RayExecutor(address)
    raise ConfigError(f"--executor: expected one of {', '.join(EXECUTORS)}, got {name!r}")
