"""Adding up the seconds a stage of work takes: the one timer of studies and the grid runners.

``timed(timings, name)`` adds the wall-clock seconds of its block to ``timings[name]`` (creating
the entry at 0), also when the block raises, so a stage that runs many times reports its total.
``Results.timed`` (stamped progress line + timer) and ``MembershipLab`` (per-stage cost of a
seed) both time through it. ``clocked(fn)`` calls ``fn`` once and gives its result with the wall
and CPU seconds of this process it took (``{"wall_s", "cpu_s"}``, the fields of the speed
records in ``benchmarks/``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, MutableMapping
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")


@contextmanager
def timed(timings: MutableMapping[str, float], name: str) -> Iterator[None]:
    """Add the wall-clock seconds of the block to ``timings[name]``."""
    start = time.perf_counter()
    try:
        yield
    finally:
        timings[name] = timings.get(name, 0.0) + time.perf_counter() - start


def clocked(fn: Callable[[], T]) -> tuple[T, dict[str, float]]:
    """``fn()`` and the wall and CPU seconds it took (module docstring)."""
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, {"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu}
