"""Figures as PNG bytes, drawn with matplotlib's object API on the Agg canvas.

No pyplot state is touched, so figures render the same on a server, in CI or in a notebook,
whatever the user's matplotlib backend is.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

Series = tuple[Sequence[float], Sequence[float]]


def line_plot(
    series: Mapping[str, Series],
    xlabel: str,
    ylabel: str,
    title: str = "",
    logx: bool = False,
    logy: bool = False,
    markers: bool = False,
    size: tuple[float, float] = (6.0, 4.0),
) -> bytes:
    """One line per ``label -> (x, y)``; returns the PNG image."""
    fig = Figure(figsize=size, dpi=110)
    ax = fig.add_subplot()
    for label, (x, y) in series.items():
        ax.plot(list(x), list(y), marker="o" if markers else None, markersize=3, label=label)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.grid(True, alpha=0.3)
    if len(series) > 1:
        ax.legend()
    return to_png(fig)


def to_png(fig: Figure) -> bytes:
    """Render a matplotlib ``Figure`` to PNG bytes (tight bounding box)."""
    FigureCanvasAgg(fig)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()
