"""Adding up the seconds a stage of work takes: the one timer of studies and the grid runners.

``timed(timings, name)`` adds the wall-clock seconds of its block to ``timings[name]`` (creating
the entry at 0), also when the block raises, so a stage that runs many times reports its total.
``Results.timed`` (stamped progress line + timer) and ``MembershipLab`` (per-stage cost of a
seed) both time through it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager


@contextmanager
def timed(timings: MutableMapping[str, float], name: str) -> Iterator[None]:
    """Add the wall-clock seconds of the block to ``timings[name]``."""
    start = time.perf_counter()
    try:
        yield
    finally:
        timings[name] = timings.get(name, 0.0) + time.perf_counter() - start
