"""Mean and spread of one metric over seeds: the one "mean ± sd" convention of recprivacy.

Decision: ``sd`` is the *sample* standard deviation, ``sqrt(Σ (x_i - x̄)² / (n - 1))``
(Bessel's correction, ``ddof = 1``), the estimate of the seed-to-seed spread that
``metrics.intervals.mean_interval`` also builds its t interval from. The population form
(divide by n) understates the spread of a handful of seeds: with 2 seeds by a factor √2.
One seed has no spread to estimate, so its sd is NaN (never 0) and prints as "—"; no values
give NaN for both. Values not all finite (a non-private method's ε = inf) have no spread to estimate
either: their sd is NaN, their mean numpy's (inf for inf values). Every study reports "± sd" through ``mean_sd``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

#: how a missing sd (a single seed) is printed
NO_SD = "—"


@dataclass(frozen=True)
class MeanSD:
    """Mean, sample sd (NaN below two values) and the number of values."""

    mean: float
    sd: float
    n: int

    @property
    def sd_or_none(self) -> float | None:
        """The sd, or None when it cannot be estimated (for table cells)."""
        return None if math.isnan(self.sd) else self.sd

    def format(self, digits: int = 3) -> str:
        """``format_mean_sd`` of this summary."""
        return format_mean_sd(self.mean, self.sd, digits)


def format_mean_sd(mean: float, sd: float | None, digits: int = 3) -> str:
    """``"mean ± sd"`` with ``digits`` decimals; ``"mean ± —"`` when sd is NaN or None."""
    shown = NO_SD if sd is None or math.isnan(sd) else f"{sd:.{digits}f}"
    return f"{mean:.{digits}f} ± {shown}"


def mean_sd(values: Iterable[float]) -> MeanSD:
    """Mean and sample sd (``ddof = 1``) of ``values`` (module docstring)."""
    x = np.asarray(list(values), dtype=np.float64)
    mean = float(x.mean()) if len(x) else math.nan
    sd = float(x.std(ddof=1)) if len(x) > 1 and np.isfinite(x).all() else math.nan
    return MeanSD(mean, sd, len(x))
