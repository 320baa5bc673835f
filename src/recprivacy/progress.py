"""Progress of a run: one live display on a terminal, one line per stage otherwise.

A run (``tracked()``, which the command line opens around each run) is a list of planned
stages, known up front: a study adds its stages with ``plan(keys)`` as soon as it has read its
options (the audit its sections, a study on the kit its cells), before any long work. Its
progress is the share of planned stages done, and its ETA is ``elapsed * (1 - done) / done``
(``eta``): the time the remaining share takes at the pace so far, "ETA unknown" before the
first stage is done.

* ``stage(text, key)`` announces a stage in plain words (``membership: training 8 reference
  recommenders``). With a planned ``key``, the run moves to that stage: every planned stage
  before it is done. Without one it is a step inside the current stage.
* ``advance(key)`` marks a planned stage done without a line (a cell of a study on the kit).
* ``detail(text)`` is internal detail (cache keys, Python values): shown only when verbose.
* ``progress(items, desc, total, unit)`` iterates over a loop inside a stage (training epochs):
  its count shows in the live display; off a terminal it writes lines only when verbose.

Where the output goes (``progress_mode``): ``bar`` when stderr is a terminal and ``CI`` is not
set, ``lines`` otherwise, ``quiet`` (nothing) when ``RECPRIVACY_QUIET`` is set. In ``bar`` mode,
within ``tracked()``, a single rich live display shows the current stage, the run's bar,
elapsed time and ETA; a line off a terminal reads ``[recprivacy +41.2s | 5/12 | ETA 1m 10s]
section: membership``. Verbose (``recprivacy --verbose``, ``set_verbose``) adds a line for each
tenth of every loop and every detail.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

T = TypeVar("T")

#: seconds between two verbose progress lines of one loop, at most, when off a terminal
INTERVAL = 30.0

_VERBOSE: list[bool] = [False]


def set_verbose(verbose: bool) -> None:
    """Show per-loop lines and internal details (``recprivacy --verbose``)."""
    _VERBOSE[0] = verbose


def progress_mode() -> Literal["bar", "lines", "quiet"]:
    """How progress shows now (module docstring)."""
    if os.environ.get("RECPRIVACY_QUIET"):
        return "quiet"
    if _DISPLAY:  # the live display stands in for stderr (rich redirects it) until it closes
        return "bar"
    if os.environ.get("CI") or not sys.stderr.isatty():
        return "lines"
    return "bar"


def eta(elapsed: float, done: int, total: int) -> float | None:
    """Seconds left when ``done`` of ``total`` stages took ``elapsed`` seconds (None: unknown)."""
    if done <= 0 or total <= 0:
        return None
    return elapsed * (total - min(done, total)) / done


def duration(seconds: float) -> str:
    """``41s``, ``3m 05s`` or ``2h 07m``."""
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m {seconds % 60:02d}s"
    return f"{seconds // 3600}h {seconds % 3600 // 60:02d}m"


@dataclass
class Run:
    """A run's planned stage keys, those done, the current stage and loop, and its clock.

    ``at`` is the index of the planned stage begun last; ``plan`` inserts after it and after
    the stages planned since it began, so that stages planned during a stage come before the
    rest of the plan, in the order they were planned. Stages planned ``last`` (writing the
    report) stay after every other.
    """

    keys: list[str] = field(default_factory=list)
    last: int = 0
    done: set[str] = field(default_factory=set)
    at: int = -1
    inserted: int = 0
    current: str = ""
    loop: str = ""
    started: float = field(default_factory=lambda: time.monotonic())

    def plan(self, keys: Sequence[str], last: bool = False) -> None:
        """Insert ``keys`` (those not planned yet) after the current stage, or at the end (class docstring)."""
        new = [key for key in dict.fromkeys(keys) if key not in self.keys]
        if last:
            self.keys += new
            self.last += len(new)
            return
        at = min(self.at + 1 + self.inserted, len(self.keys) - self.last)
        self.keys[at:at] = new
        self.inserted += len(new)

    def begin(self, key: str) -> None:
        """The planned stage ``key`` starts (any other key: nothing): every stage before it is done."""
        if key in self.keys:
            self.at, self.inserted = self.keys.index(key), 0
            self.done.update(self.keys[: self.at])

    @property
    def n_done(self) -> int:
        """How many planned stages are done."""
        return sum(key in self.done for key in self.keys)

    def status(self, now: float | None = None) -> str:
        """``+41.2s | 5/12 | ETA 1m 10s`` (just the elapsed time when nothing is planned)."""
        elapsed = (time.monotonic() if now is None else now) - self.started
        if not self.keys:
            return f"+{elapsed:.1f}s"
        left = eta(elapsed, self.n_done, len(self.keys))
        return f"+{elapsed:.1f}s | {self.n_done}/{len(self.keys)} | ETA {'unknown' if left is None else duration(left)}"


_RUN: list[Run] = [Run()]
_DISPLAY: list[Any] = []  # the live display (rich Progress and its task) inside ``tracked`` on a terminal


def _line(text: str) -> None:
    """Write one stamped line to stderr (``[recprivacy <status>] text``)."""
    print(f"[recprivacy {_RUN[-1].status()}] {text}", file=sys.stderr, flush=True)


def _refresh() -> None:
    """Show the current stage and loop in the live display, if one is open."""
    if _DISPLAY:
        display, task = _DISPLAY
        run = _RUN[-1]
        text = f"{run.current} · {run.loop}" if run.loop else run.current
        display.update(task, description=text, completed=run.n_done, total=len(run.keys) or None)


@contextmanager
def tracked() -> Iterator[Run]:
    """One run's progress (module docstring): a fresh plan and clock, and on a terminal one
    live display, closed at the end."""
    _RUN.append(Run())
    try:
        if progress_mode() == "bar":
            with _live_display():
                yield _RUN[-1]
        else:
            yield _RUN[-1]
    finally:
        _RUN.pop()


@contextmanager
def _live_display() -> Iterator[None]:
    """A rich Progress with one task: the run's bar, its stage, and a status column."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, ProgressColumn, SpinnerColumn, TextColumn
    from rich.table import Column
    from rich.text import Text

    class Status(ProgressColumn):
        def render(self, task: Any) -> Text:
            return Text(_RUN[-1].status(), style="progress.remaining")

    words = TextColumn("{task.description}", table_column=Column(ratio=1, no_wrap=True, overflow="ellipsis"))
    display = Progress(SpinnerColumn(), words, BarColumn(bar_width=20), Status(table_column=Column(no_wrap=True)),
                       transient=True, expand=True, console=Console(stderr=True))
    with display:
        _DISPLAY[:] = [display, display.add_task("starting", total=None)]
        try:
            yield
        finally:
            _DISPLAY.clear()


def plan(keys: Sequence[str], last: bool = False) -> None:
    """Add the stages ``keys`` to the current run, after the current stage or (``last``) at the
    end (``Run.plan``)."""
    _RUN[-1].plan(keys, last)
    _refresh()


def stage(text: str, key: str | None = None) -> None:
    """Announce a stage (``key``: its planned key) or a step inside the current stage."""
    run = _RUN[-1]
    if key is not None:
        run.begin(key)
    run.current, run.loop = text, ""
    mode = progress_mode()
    if mode == "lines":
        _line(text)
    elif mode == "bar" and not _DISPLAY:
        from rich.console import Console
        from rich.text import Text

        Console(stderr=True).print(Text(text, style="dim"))
    _refresh()


def advance(key: str) -> None:
    """Mark the planned stage ``key`` done, without a line."""
    _RUN[-1].done.add(key)
    _refresh()


def detail(text: str) -> None:
    """Internal detail of the current stage: a line only when verbose."""
    if _VERBOSE[0] and progress_mode() != "quiet":
        _line(text)


def progress(items: Iterable[T], desc: str = "", total: int | None = None, unit: str = "") -> Iterator[T]:
    """Iterate over ``items`` showing progress as ``progress_mode`` says (module docstring)."""
    mode = progress_mode()
    if mode == "bar" and _DISPLAY:
        yield from _in_display(items, desc, total, unit)
    elif mode == "bar":
        from rich.progress import track

        yield from track(items, description=desc, total=total, transient=True)
    elif mode == "lines" and _VERBOSE[0]:
        yield from _with_lines(items, desc, total, unit)
    else:
        yield from items


def _count(desc: str, unit: str, n: int, total: int | None) -> str:
    """``BPRMF: epoch 20/200``."""
    return f"{desc}: {unit + ' ' if unit else ''}{n}/{total if total else '?'}"


def _in_display(items: Iterable[T], desc: str, total: int | None, unit: str) -> Iterator[T]:
    """``items``, their count shown beside the current stage in the live display."""
    run = _RUN[-1]
    for n, item in enumerate(items, 1):
        yield item
        run.loop = _count(desc, unit, n, total)
        _refresh()
    run.loop = ""


def _with_lines(items: Iterable[T], desc: str, total: int | None, unit: str) -> Iterator[T]:
    """``items``, with a line after every tenth of ``total`` and at least every ``INTERVAL`` s."""
    every = max(1, total // 10) if total else None
    last = time.monotonic()
    for n, item in enumerate(items, 1):
        yield item
        now = time.monotonic()
        if (every and n % every == 0) or n == total or now - last >= INTERVAL:
            _line(_count(desc, unit, n, total))
            last = now
