"""User feature tables as model inputs: ``x_u`` of DIPSGNN Sec. 4.1 / A-PGNN.

Numeric columns are min-max scaled to [-1, 1] with public bounds (or the table's own range,
as the DIPSGNN code does); categorical columns become one one-hot block each, over declared
categories (or the sorted observed ones). Encoding is data preparation, not protection: the
LDP perturbation of the same layout (DIPSGNN Algorithm 3) is ``privacy.mechanisms.perturb_features``,
which parses the table with ``parse_features`` and lays its noisy blocks out with ``feature_frame``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from recprivacy.errors import ConfigError, DataError


@dataclass(frozen=True)
class Feature:
    """One user feature ready for perturbation: scaled numbers or category codes."""

    name: str
    values: np.ndarray
    categories: tuple | None = None

    def columns(self) -> list[str]:
        if self.categories is None:
            return [self.name]
        return [f"{self.name}={c}" for c in self.categories]

    def encode(self) -> np.ndarray:
        """Clean encoding: the scaled column, or the one-hot block."""
        if self.categories is None:
            return self.values[:, None]
        return (self.values[:, None] == np.arange(len(self.categories))).astype(np.float64)


def numeric_feature(
    table: pd.DataFrame, column: str, bounds: tuple[float, float] | None
) -> Feature:
    """Min-max scale ``column`` to [-1, 1]: ``(x - (lo+hi)/2) / ((hi-lo)/2)``, then clip.

    ``bounds`` are public (lo, hi); without them the table's own min and max are used (as the
    DIPSGNN code does). A constant column maps to 0.
    """
    x = pd.to_numeric(table[column], errors="coerce").to_numpy(dtype=np.float64)
    if np.isnan(x).any():
        raise DataError(f"feature column {column!r}: {int(np.isnan(x).sum())} missing or "
                        "non-numeric values; fill or drop them first")
    lo, hi = bounds if bounds is not None else (x.min(), x.max())
    if hi < lo:
        raise ConfigError(f"bounds[{column!r}] must be (low, high) with low <= high, got {bounds}")
    half = (hi - lo) / 2.0
    scaled = np.zeros_like(x) if half == 0 else (x - (lo + hi) / 2.0) / half
    return Feature(column, np.clip(scaled, -1.0, 1.0))


def categorical_feature(
    table: pd.DataFrame, column: str, categories: Sequence | None
) -> Feature:
    """Category codes of ``column`` against ``categories`` (default: sorted observed values)."""
    col = table[column]
    if col.isna().any():
        raise DataError(f"feature column {column!r}: {int(col.isna().sum())} missing values; "
                        "fill them (e.g. as their own category) or drop those users")
    cats = tuple(sorted(col.unique())) if categories is None else tuple(categories)
    if len(cats) < 2:
        raise DataError(f"feature column {column!r} needs at least 2 categories, got {list(cats)}")
    unknown = ~col.isin(cats)
    if unknown.any():
        shown = sorted(set(col[unknown].astype(str)))[:5]
        raise DataError(f"feature column {column!r}: values {shown} are not in the declared "
                        "categories")
    codes = pd.Categorical(col, categories=list(cats)).codes.astype(np.int64)
    return Feature(column, codes, cats)


def parse_features(
    table: pd.DataFrame,
    numeric_cols: Sequence[str],
    categorical_cols: Sequence[str],
    bounds: Mapping[str, tuple[float, float]] | None,
    categories: Mapping[str, Sequence] | None,
) -> list[Feature]:
    """Numeric features (in order) then categorical ones, validated."""
    names = list(numeric_cols) + list(categorical_cols)
    missing = [c for c in names if c not in table.columns]
    if missing:
        raise DataError(f"feature columns {missing} not in the table (have {list(table.columns)})")
    if len(set(names)) != len(names) or not names:
        raise ConfigError(f"feature columns must be distinct and non-empty, got {names}")
    bounds, categories = bounds or {}, categories or {}
    return [numeric_feature(table, c, bounds.get(c)) for c in numeric_cols] + [
        categorical_feature(table, c, categories.get(c)) for c in categorical_cols
    ]


def feature_frame(features: list[Feature], blocks: list[np.ndarray], index: pd.Index) -> pd.DataFrame:
    """The per-feature column blocks side by side, columns named by ``Feature.columns``."""
    columns = [c for f in features for c in f.columns()]
    return pd.DataFrame(np.hstack(blocks), index=index, columns=columns)


def encode_features(
    table: pd.DataFrame,
    numeric_cols: Sequence[str],
    categorical_cols: Sequence[str],
    bounds: Mapping[str, tuple[float, float]] | None = None,
    categories: Mapping[str, Sequence] | None = None,
) -> pd.DataFrame:
    """The clean encoding ``x_u`` (DIPSGNN Sec. 4.1): numeric columns scaled to [-1, 1], then
    one one-hot block per categorical column (columns ``"name=value"``); one row per user.
    """
    features = parse_features(table, numeric_cols, categorical_cols, bounds, categories)
    return feature_frame(features, [f.encode() for f in features], table.index)
