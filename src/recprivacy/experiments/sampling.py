"""Seeded user samples that bound an audit section's cost.

An attack that is evaluated on users (attribute inference from lists, exposure leakage from
slates) needs only enough users for its estimate, not the whole catalogue: the audit attacks a
uniform random sample of at most ``max_users`` of them, so its cost is set by the sample size
and the catalogue, not by the number of users. With ``max_users = None`` (or a sample at least
as large as the population) every user is kept, in the original order, so small datasets give
exactly the numbers of the unsampled audit.
"""

from __future__ import annotations

import numpy as np


def sample_users(users: np.ndarray, max_users: int | None, seed: int) -> np.ndarray:
    """``users`` unchanged when ``max_users`` is None or ``len(users) <= max_users``; otherwise
    a uniform random subset of ``max_users`` of them without replacement (seeded), sorted."""
    users = np.asarray(users, dtype=np.int64)
    if max_users is None or len(users) <= max_users:
        return users
    return np.sort(np.random.default_rng(seed).choice(users, size=max_users, replace=False))
