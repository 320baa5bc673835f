"""Figures as PNG bytes, drawn with matplotlib's object API on the Agg canvas.

No pyplot state is touched, so figures render the same on a server, in CI or in a notebook,
whatever the user's matplotlib backend is.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence

import numpy as np
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


def heatmap(
    values: Sequence[Sequence[float]],
    row_labels: Sequence[str],
    col_labels: Sequence[str],
    xlabel: str = "",
    ylabel: str = "",
    title: str = "",
    colorbar: str = "",
    vmin: float | None = None,
    vmax: float | None = None,
    annotate: bool = True,
    size: tuple[float, float] | None = None,
) -> bytes:
    """A matrix as coloured cells (row ``i`` drawn top to bottom), each cell annotated with its
    value when ``annotate``; NaN cells are left blank. Returns the PNG image."""
    grid = np.asarray(values, dtype=np.float64)
    n_rows, n_cols = grid.shape
    fig = Figure(figsize=size or (1.2 + 0.65 * n_cols, 1.0 + 0.5 * n_rows), dpi=110)
    ax = fig.add_subplot()
    image = ax.imshow(np.ma.masked_invalid(grid), cmap="viridis", vmin=vmin, vmax=vmax, aspect="auto")
    ax.set_xticks(range(n_cols), [str(c) for c in col_labels], rotation=45, ha="right")
    ax.set_yticks(range(n_rows), [str(r) for r in row_labels])
    if annotate:
        middle = np.nanmean(grid) if np.isfinite(grid).any() else 0.0
        for (i, j), value in np.ndenumerate(grid):
            if np.isfinite(value):
                ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=8,
                        color="black" if value > middle else "white")  # fmt: skip
    fig.colorbar(image, ax=ax, label=colorbar)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    return to_png(fig)


def scatter_plot(
    groups: Mapping[str, Series],
    xlabel: str = "",
    ylabel: str = "",
    title: str = "",
    colors: Mapping[str, str] | None = None,
    size: tuple[float, float] = (5.0, 4.5),
) -> bytes:
    """One point cloud per ``label -> (x, y)`` (optionally with fixed colours); returns the PNG."""
    fig = Figure(figsize=size, dpi=110)
    ax = fig.add_subplot()
    for label, (x, y) in groups.items():
        ax.scatter(list(x), list(y), s=8, alpha=0.6, label=label, color=(colors or {}).get(label))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.grid(True, alpha=0.3)
    if len(groups) > 1:
        ax.legend()
    return to_png(fig)


def to_png(fig: Figure) -> bytes:
    """Render a matplotlib ``Figure`` to PNG bytes (tight bounding box)."""
    FigureCanvasAgg(fig)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()
