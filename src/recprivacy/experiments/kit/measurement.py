"""One measured number of a study: the unit every study on the kit produces and stores.

A :class:`Measurement` says which system and study produced it, the *setting* it was measured
in (a flat JSON mapping: the cell's coordinates, e.g. ``{"code": "SISI", "k": 20}``), the
metric and its unit, the seed, the value, and optionally an interval ``(low, high)`` that the
measurement itself carries (a bootstrap or exact interval of one seed's estimate). Intervals
*over seeds* are not stored: ``aggregate`` computes them.

``to_json`` / ``from_json`` give the JSON object kept in a run's ``records.jsonl``; a malformed
object is a one-line ``DataError`` naming the field and what was expected.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from recprivacy.errors import DataError

Scalar = str | int | float | bool | None
FIELDS = ("system", "study", "setting", "metric", "unit", "seed", "value", "interval")


@dataclass(frozen=True)
class Measurement:
    """One number (module docstring)."""

    system: str
    study: str
    setting: Mapping[str, Scalar]
    metric: str
    value: float
    seed: int
    unit: str = ""
    interval: tuple[float, float] | None = None

    def to_json(self) -> dict[str, Any]:
        """The JSON object of this measurement (``interval`` as a two-item list or null)."""
        return {"system": self.system, "study": self.study, "setting": dict(self.setting), "metric": self.metric,
                "unit": self.unit, "seed": self.seed, "value": self.value,
                "interval": None if self.interval is None else list(self.interval)}  # fmt: skip

    @classmethod
    def from_json(cls, obj: Any, where: str = "measurement") -> "Measurement":
        """Parse :meth:`to_json` output; ``where`` (e.g. ``records.jsonl:12``) prefixes errors."""
        if not isinstance(obj, dict):
            raise DataError(f"{where}: expected a JSON object with {', '.join(FIELDS)}, got {type(obj).__name__}")
        missing = [k for k in FIELDS if k not in obj]
        if missing:
            raise DataError(f"{where}: missing field(s) {', '.join(missing)}")
        if not isinstance(obj["setting"], dict):
            raise DataError(f"{where}: setting must be a JSON object, got {obj['setting']!r}")
        value, seed, interval = obj["value"], obj["seed"], obj["interval"]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise DataError(f"{where}: value must be a number, got {value!r}")
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise DataError(f"{where}: seed must be an integer, got {seed!r}")
        if interval is not None and (not isinstance(interval, list) or len(interval) != 2):
            raise DataError(f"{where}: interval must be null or [low, high], got {interval!r}")
        return cls(str(obj["system"]), str(obj["study"]), dict(obj["setting"]), str(obj["metric"]), float(value), seed,
                   str(obj["unit"]), None if interval is None else (float(interval[0]), float(interval[1])))  # fmt: skip


def measurements(system: str, study: str, setting: Mapping[str, Scalar], seed: int, values: Mapping[str, Any],
                 units: Mapping[str, str] | None = None) -> list[Measurement]:  # fmt: skip
    """One :class:`Measurement` per numeric entry of ``values`` (booleans count as 0/1; entries
    that are not numbers, such as nested mappings, are left out); ``units[metric]`` labels them."""
    units = units or {}
    return [Measurement(system, study, dict(setting), metric, float(v), seed, units.get(metric, ""))
            for metric, v in values.items() if isinstance(v, int | float)]  # fmt: skip
