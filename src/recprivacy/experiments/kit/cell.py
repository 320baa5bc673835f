"""A cell of a study's grid: a setting whose measurements are computed once and stored.

A :class:`Cell` is its ``setting`` (a flat JSON mapping, e.g. ``{"kind": "attack", "seed": 0,
"code": "SISI", "k": 20}``) and a ``group``. The setting's canonical JSON (sorted keys) is the
cell's ``key`` in the run's ``RecordStore``: a rerun skips every cell whose key is stored.

Cells of one group run one after another in one process and share what the grid prepares for
the group once (``Grid.prepare``): the membership study groups by seed, so every attack setting
of a seed reuses that seed's partition, recommenders and lists. Groups are what an executor
fans out; a grid whose cells share nothing gives each cell its own group.

A grid (:class:`Grid`) is a picklable object with ``prepare(group)`` and ``measure(cell,
prepared) -> CellResult``. The result is the cell's measurements and, optionally, named numpy
arrays (ROC scores, embeddings) that the store keeps beside the records and JSON ``details``
(facts that are not numbers, such as a model's privacy statements) kept in the record line.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from recprivacy.experiments.kit.measurement import Measurement, Scalar


@dataclass(frozen=True, eq=False)
class Cell:
    """One setting of a grid (module docstring)."""

    setting: Mapping[str, Scalar]
    group: str = ""

    @classmethod
    def alone(cls, setting: Mapping[str, Scalar]) -> "Cell":
        """A cell that is its own group (it shares nothing prepared with other cells), so an
        executor may run it beside every other."""
        return cls(setting, setting_key(setting))

    @property
    def key(self) -> str:
        """Canonical JSON of the setting: the cell's identity in a ``RecordStore``."""
        return setting_key(self.setting)

    def describe(self) -> str:
        """``k=v k=v`` of the setting, for messages."""
        return " ".join(f"{k}={v}" for k, v in self.setting.items())


def setting_key(setting: Mapping[str, Scalar]) -> str:
    """Canonical JSON (sorted keys, no spaces) of a setting."""
    return json.dumps(dict(setting), sort_keys=True, separators=(",", ":"))


@dataclass
class CellResult:
    """What one cell gives: its measurements, named arrays, and ``details``: JSON facts about
    the cell that are not numbers (a model's privacy statements), kept in its record line."""

    measurements: list[Measurement]
    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)

    def values(self) -> dict[str, float]:
        """``metric -> value`` of the measurements."""
        return {m.metric: m.value for m in self.measurements}


class Grid(Protocol):
    """What a study hands the kit: how to prepare a group and measure one of its cells."""

    def prepare(self, group: str) -> Any:
        """State shared by the group's cells, built once in the process that runs them."""

    def measure(self, cell: Cell, prepared: Any) -> CellResult:
        """The cell's result."""


def name_cell(err: BaseException, cell: Cell) -> BaseException:
    """``err`` with ``cell <setting>:`` put before its message (same type and traceback), so an
    error raised inside a cell says which one failed."""
    prefix = f"cell {cell.describe()}"
    if err.args and isinstance(err.args[0], str):
        err.args = (f"{prefix}: {err.args[0]}", *err.args[1:])
    else:
        err.args = (f"{prefix}: {type(err).__name__}{err.args!r}" if err.args else prefix,)
    return err
