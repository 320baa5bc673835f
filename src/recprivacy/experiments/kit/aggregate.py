"""Measurements over seeds to one summary per setting and metric: the kit's one aggregation.

``aggregate(records, by=...)`` groups measurements by the setting keys named in ``by`` (all
of the setting when ``by`` is None) and the metric, in first-seen order, and summarises each
group's values with the house convention (``metrics.summary.mean_sd``): the mean, the *sample*
sd (``ddof = 1``; NaN for a single seed, never 0), and a Student-t interval over seeds
(``metrics.intervals.mean_interval``, 95%; a single seed gives a point and says so). NaN values
("not resolvable") propagate into the mean as they do in ``mean_sd``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from recprivacy.experiments.kit.cell import setting_key
from recprivacy.experiments.kit.measurement import Measurement, Scalar
from recprivacy.metrics.intervals import mean_interval
from recprivacy.metrics.summary import mean_sd


@dataclass(frozen=True)
class Summary:
    """One metric of one setting over seeds."""

    setting: dict[str, Scalar]
    metric: str
    unit: str
    mean: float
    sd: float
    n: int
    low: float
    high: float
    seeds: tuple[int, ...]


def aggregate(records: Iterable[Measurement], by: Sequence[str] | None = None) -> list[Summary]:
    """One :class:`Summary` per (setting restricted to ``by``, metric) (module docstring)."""
    groups: dict[tuple[str, str], list[Measurement]] = {}
    for m in records:
        setting = dict(m.setting) if by is None else {k: m.setting.get(k) for k in by}
        groups.setdefault((setting_key(setting), m.metric), []).append(m)
    return [_summary(found, by) for found in groups.values()]


def _summary(found: list[Measurement], by: Sequence[str] | None) -> Summary:
    first = found[0]
    setting = dict(first.setting) if by is None else {k: first.setting.get(k) for k in by}
    values = [m.value for m in found]
    spread, interval = mean_sd(values), mean_interval(values)
    return Summary(setting, first.metric, first.unit, spread.mean, spread.sd, spread.n, interval.low, interval.high,
                   tuple(m.seed for m in found))  # fmt: skip
