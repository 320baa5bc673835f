"""Progress bars that show on a terminal and stay quiet in CI or when piped."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")


def progress_enabled() -> bool:
    """True on an interactive terminal unless ``CI`` or ``RECPRIVACY_QUIET`` is set."""
    if os.environ.get("CI") or os.environ.get("RECPRIVACY_QUIET"):
        return False
    return sys.stderr.isatty()


def progress(items: Iterable[T], desc: str = "", total: int | None = None) -> Iterator[T]:
    """Iterate with a rich progress bar when enabled, plainly otherwise."""
    if not progress_enabled():
        yield from items
        return
    from rich.progress import track

    yield from track(items, description=desc, total=total, transient=True)
