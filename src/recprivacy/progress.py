"""Progress of long work: a rich bar on a terminal, plain lines on stderr otherwise.

Two calls cover every long step:

* ``stage(name)`` announces a stage (loading data, fitting a model, an audit section, a study
  cell): one line on stderr, ``[recprivacy +12.3s] fit bpr``, the time counted from the first
  line of the process, so a log shows how long each stage took and where work hangs.
* ``progress(items, desc, total, unit)`` iterates with a transient rich bar on a terminal;
  off a terminal (piped, ``nohup``, CI) it writes a line after every tenth of ``total`` items
  and at least every ``INTERVAL`` seconds (``... BPR: epoch 20/200``).

Where the output goes (``progress_mode``): ``bar`` when stderr is a terminal and ``CI`` is not
set, ``lines`` otherwise, ``quiet`` (nothing) when ``RECPRIVACY_QUIET`` is set.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable, Iterator
from typing import Literal, TypeVar

T = TypeVar("T")

#: seconds between two progress lines of one loop, at most, when off a terminal
INTERVAL = 30.0

_START: list[float] = []


def progress_mode() -> Literal["bar", "lines", "quiet"]:
    """How progress shows now (module docstring)."""
    if os.environ.get("RECPRIVACY_QUIET"):
        return "quiet"
    if os.environ.get("CI") or not sys.stderr.isatty():
        return "lines"
    return "bar"


def _line(text: str) -> None:
    """Write one stamped line to stderr (``[recprivacy +<seconds>s] text``)."""
    if not _START:
        _START.append(time.monotonic())
    print(f"[recprivacy +{time.monotonic() - _START[0]:.1f}s] {text}", file=sys.stderr, flush=True)


def stage(name: str) -> None:
    """Announce the start of a long stage: a line on stderr (dimmed on a terminal)."""
    mode = progress_mode()
    if mode == "lines":
        _line(name)
    elif mode == "bar":
        from rich.console import Console

        Console(stderr=True).print(f"[dim]{name}[/dim]", highlight=False)


def progress(items: Iterable[T], desc: str = "", total: int | None = None, unit: str = "") -> Iterator[T]:
    """Iterate over ``items`` showing progress as ``progress_mode`` says (module docstring)."""
    mode = progress_mode()
    if mode == "quiet":
        yield from items
    elif mode == "lines":
        yield from _with_lines(items, desc, total, unit)
    else:
        from rich.progress import track

        yield from track(items, description=desc, total=total, transient=True)


def _with_lines(items: Iterable[T], desc: str, total: int | None, unit: str) -> Iterator[T]:
    """``items``, with a line after every tenth of ``total`` and at least every ``INTERVAL`` s."""
    every = max(1, total // 10) if total else None
    last = time.monotonic()
    for n, item in enumerate(items, 1):
        yield item
        now = time.monotonic()
        if (every and n % every == 0) or n == total or now - last >= INTERVAL:
            _line(f"{desc}: {unit + ' ' if unit else ''}{n}/{total if total else '?'}")
            last = now
