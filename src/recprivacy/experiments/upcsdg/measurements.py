"""The per-seed measurement rows of an ``upcsdg`` run and their means over seeds.

A row is one measurement of one seed: ``kind`` (``release``, ``utility``, ``recovery``,
``membership``), ``variant`` (``original`` or a UPC-SDG variant), ``k`` and ``gamma`` (NaN for
the original data), optional ``model`` / ``attack``, then its values (``cells.rows``).
Tables report the mean over seeds and, where shown, the sample standard deviation
(``metrics.summary.mean_sd``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from recprivacy.experiments.upcsdg.options import SETTINGS
from recprivacy.metrics.summary import mean_sd


@dataclass(frozen=True)
class Measurements:
    """The per-seed measurement rows of a run, with means over seeds."""

    frame: pd.DataFrame

    def select(self, kind: str, variant: str = "UPC-SDG", k: float = math.nan, gamma: float = math.nan,
               **where: Any) -> pd.DataFrame:
        rows = self.frame[(self.frame["kind"] == kind) & (self.frame["variant"] == variant)]
        for column, value in (("k", k), ("gamma", gamma)):
            rows = rows[rows[column].isna()] if math.isnan(value) else rows[np.isclose(rows[column], value)]
        for column, value in where.items():
            rows = rows[rows[column] == value] if column in rows else rows.iloc[0:0]
        return rows

    def mean(self, column: str, kind: str, variant: str = "UPC-SDG", k: float = math.nan, gamma: float = math.nan,
             **where: Any) -> float | None:
        values = self._values(column, kind, variant, k, gamma, **where)
        return float(np.mean(values)) if len(values) else None

    def std(self, column: str, kind: str, variant: str = "UPC-SDG", k: float = math.nan, gamma: float = math.nan,
            **where: Any) -> float | None:
        return mean_sd(self._values(column, kind, variant, k, gamma, **where)).sd_or_none

    def _values(self, column: str, kind: str, variant: str, k: float, gamma: float, **where: Any) -> np.ndarray:
        if column not in self.frame:
            return np.zeros(0)
        return self.select(kind, variant, k, gamma, **where)[column].dropna().to_numpy(dtype=np.float64)


def ratio(a: float | None, b: float | None) -> float | None:
    """``a / b``, or None when either is missing or ``b`` is 0 (retention of a metric)."""
    return None if a is None or b is None or b == 0 else a / b


def setting(name: str) -> tuple[str, float, float]:
    """(variant, k, γ) of a Table 2 row: ``original``, ``-`` or ``+``."""
    return ("original", math.nan, math.nan) if name == "original" else ("UPC-SDG", *SETTINGS[name])
