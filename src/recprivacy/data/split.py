"""Seeded splits: per-user random and temporal interaction splits, user-disjoint partitions.

Interaction splits return new :class:`Interactions` that share the input's id spaces (built with
``Interactions.select``), so a model trained on one part scores users and items of another
consistently. Parts are disjoint and their union is the input; rows keep their input order.
Each part records a ``split`` provenance step (method, parameters, part name).

Rounding rule (shared by every ratio split and by :func:`user_partition`): with cumulative
ratios ``c_1 <= ... <= c_K = 1``, the ``j``-th part of ``n`` ordered rows is
``[floor(c_(j-1) n), floor(c_j n))``, except that the first part (train) always keeps at least
one row, so a user with a single interaction has it in train. For 80/20 this gives train
``int(0.8 n)`` as in the DIPSGNN reference code; for 80/10/10 and ``n = 15`` it gives 12/1/2.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from recprivacy.data.interactions import Interactions
from recprivacy.errors import ConfigError, DataError

_EPS = 1e-9  # guards floor(c * n) against round-off such as (0.7 + 0.1) * 10 = 7.999...


def part_names(n_parts: int) -> tuple[str, ...]:
    """``train/test``, ``train/valid/test``, or ``part0..`` for other counts."""
    return {2: ("train", "test"), 3: ("train", "valid", "test")}.get(n_parts) or tuple(
        f"part{k}" for k in range(n_parts)
    )


def _check_ratios(ratios: Sequence[float]) -> np.ndarray:
    r = np.asarray(ratios, dtype=np.float64)
    if r.ndim != 1 or len(r) < 2 or not np.isfinite(r).all():
        raise ConfigError(f"split ratios must be a list of at least two numbers, got {ratios!r}")
    if r[0] <= 0 or (r < 0).any():
        raise ConfigError(f"split ratios must be >= 0 with a positive first (train) ratio, got {ratios!r}")
    if abs(r.sum() - 1.0) > 1e-6:
        raise ConfigError(f"split ratios must sum to 1, got {ratios!r} (sum {r.sum():g})")
    return r


def _ratio_bounds(n: np.ndarray, ratios: np.ndarray) -> np.ndarray:
    """(len(n) x K-1) row counts at which parts 1..K-1 start (the rounding rule above)."""
    bounds = np.floor(np.outer(n, np.cumsum(ratios)[:-1]) + _EPS).astype(np.int64)
    bounds[:, 0] = np.maximum(bounds[:, 0], np.minimum(n, 1))
    return np.maximum.accumulate(bounds, axis=1)


def _split_by_rank(
    data: Interactions, order: np.ndarray, bounds_of: Callable[[np.ndarray], np.ndarray], **params: object
) -> tuple[Interactions, ...]:
    """Cut every user's rows, taken in ``order`` (grouped by user), at per-user bounds.

    ``bounds_of(n)`` maps each row's user count to the (rows x K-1) start of parts 1..K-1.
    """
    users = data.users[order]
    first = np.searchsorted(users, users)
    rank = np.arange(len(order)) - first
    n = data.user_counts()[users]
    bounds = bounds_of(n)
    part = np.empty(len(data), dtype=np.int64)
    part[order] = (rank[:, None] >= bounds).sum(axis=1)
    names = part_names(bounds.shape[1] + 1)
    return tuple(data.select(part == k, "split", **params, part=name) for k, name in enumerate(names))


def random_split(
    data: Interactions, ratios: Sequence[float] = (0.8, 0.1, 0.1), seed: int = 0
) -> tuple[Interactions, ...]:
    """Per-user random split: each user's rows are shuffled (seeded) and cut by ``ratios``
    (rounding rule in the module docstring). Vectorised: one random key per row, a lexsort by
    (user, key) and per-user rank arithmetic."""
    r = _check_ratios(ratios)
    key = np.random.default_rng(seed).random(len(data))
    order = np.lexsort((key, data.users))
    return _split_by_rank(
        data, order, lambda n: _ratio_bounds(n, r), method="random", ratios=[float(x) for x in r], seed=seed
    )


def temporal_split(
    data: Interactions,
    ratios: Sequence[float] | None = None,
    leave_last: int | None = None,
    n_parts: int = 2,
) -> tuple[Interactions, ...]:
    """Per-user split by time (ties and data without timestamps: by row order); earlier rows
    go to earlier parts.

    Give exactly one of ``ratios`` (cut by the rounding rule above) or ``leave_last=k``: the
    last ``k`` rows of each user go to test and, when ``n_parts=3``, the ``k`` before them to
    valid. Train always keeps at least one row: a user with ``n <= k`` rows holds out
    ``n - 1`` to test (and what is then left beyond one row to valid).
    """
    if (ratios is None) == (leave_last is None):
        raise ConfigError("temporal_split: give exactly one of ratios or leave_last")
    if ratios is not None:
        r = _check_ratios(ratios)
        return _split_by_rank(
            data, data.order(), lambda n: _ratio_bounds(n, r), method="temporal", ratios=[float(x) for x in r]
        )
    if leave_last < 1 or n_parts not in (2, 3):
        raise ConfigError(f"temporal_split: need leave_last >= 1 and n_parts 2 or 3, got {leave_last}, {n_parts}")

    def bounds(n: np.ndarray) -> np.ndarray:
        test = np.minimum(leave_last, n - 1)
        if n_parts == 2:
            return (n - test)[:, None]
        valid = np.minimum(leave_last, n - 1 - test)
        return np.stack([n - test - valid, n - test], axis=1)

    return _split_by_rank(data, data.order(), bounds, method="temporal", leave_last=leave_last, n_parts=n_parts)


def leave_last_shortfall(data: Interactions, leave_last: int, n_parts: int = 2) -> tuple[int, int]:
    """``(short, users)``: of the ``users`` with interactions, how many have fewer than
    ``(n_parts - 1) * leave_last + 1`` rows, so that ``temporal_split(data, leave_last=...,
    n_parts=...)`` keeps only their first row for training and holds out less than asked."""
    counts = data.user_counts()
    counts = counts[counts > 0]
    return int((counts < (n_parts - 1) * leave_last + 1).sum()), len(counts)


def largest_leave_last(data: Interactions, n_parts: int = 2) -> int:
    """The largest ``leave_last`` that at least half of the users with interactions have rows
    for (their full hold-out and one training row); 0 when not even ``leave_last=1`` is."""
    counts = data.user_counts()
    counts = np.sort(counts[counts > 0])[::-1]
    if not len(counts):
        return 0
    rows = int(counts[(len(counts) + 1) // 2 - 1])  # at least half of the users have this many rows
    return (rows - 1) // (n_parts - 1)


def user_partition(
    data: Interactions, fractions: Mapping[str, float], seed: int = 0, min_interactions: int = 0
) -> dict[str, np.ndarray]:
    """User-disjoint partition into named groups (sorted internal user ids per group).

    Users with no interaction or fewer than ``min_interactions`` are excluded first; the rest
    are shuffled (seeded) and cut in the order of ``fractions`` by the rounding rule above, so
    fractions summing to 1 assign every eligible user. Fractions must be positive with a sum
    of at most 1; a group that would be empty raises ``DataError``.
    """
    if not fractions:
        raise ConfigError("user_partition: fractions must name at least one group")
    for name, f in fractions.items():
        if not (isinstance(f, (int, float)) and math.isfinite(f) and f > 0):
            raise ConfigError(f"user_partition: fractions[{name!r}] must be a number > 0, got {f!r}")
    total = math.fsum(fractions.values())
    if total > 1 + _EPS:
        raise ConfigError(f"user_partition: fractions sum to {total:g}; expected at most 1")
    eligible = np.flatnonzero(data.user_counts() >= max(min_interactions, 1))
    shuffled = np.random.default_rng(seed).permutation(eligible)
    ends = np.floor(np.cumsum(list(fractions.values())) * len(eligible) + _EPS).astype(np.int64)
    starts = np.concatenate([[0], ends[:-1]])
    groups = {name: np.sort(shuffled[s:e]) for name, s, e in zip(fractions, starts, ends)}
    for name, members in groups.items():
        if not len(members):
            raise DataError(
                f"{data.name}: user_partition group {name!r} is empty "
                f"({len(eligible)} users with >= {max(min_interactions, 1)} interactions)"
            )
    return groups
