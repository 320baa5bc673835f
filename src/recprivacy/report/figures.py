"""Figures as PNG bytes, drawn with matplotlib's object API on the Agg canvas.

No pyplot state is touched, so figures render the same on a server, in CI or in a notebook,
whatever the user's matplotlib backend is.
"""

from __future__ import annotations

import io
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

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
    bands: Mapping[str, Series] | None = None,
    styles: Mapping[str, Mapping[str, Any]] | None = None,
) -> bytes:
    """One line per ``label -> (x, y)``; ``bands[label] = (low, high)`` shades an interval around
    that line (same x); ``styles[label]`` are matplotlib line options (``linestyle``, ``color``).
    The legend sits outside the axes, to their right. Returns the PNG image."""
    fig = Figure(figsize=size, dpi=110)
    ax = fig.add_subplot()
    for label, (x, y) in series.items():
        (line,) = ax.plot(list(x), list(y), marker="o" if markers else None, markersize=3, label=label,
                          **(styles or {}).get(label, {}))  # fmt: skip
        if bands and label in bands:
            ax.fill_between(list(x), *bands[label], color=line.get_color(), alpha=0.2, linewidth=0)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    _label_axes(ax, xlabel, ylabel, title)
    if len(series) > 1:
        outside_legend(ax)
    return to_png(fig)


def outside_legend(ax: Any, **options: Any) -> None:
    """The axes' legend to the right of the plot, so it never hides data; left out of the layout
    (the axes keep their size) and kept in the image by ``to_png``'s tight crop."""
    legend = ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, fontsize=8, frameon=False, **options)
    legend.set_in_layout(False)


def _label_axes(ax: Any, xlabel: str, ylabel: str, title: str) -> None:
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.grid(True, alpha=0.3)


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
    cell_text: Sequence[Sequence[str]] | None = None,
    centre: float | None = None,
) -> bytes:
    """A matrix as coloured cells (row ``i`` drawn top to bottom), each cell annotated with its
    value when ``annotate`` (or with ``cell_text[i][j]`` when given); NaN cells are grey. With
    ``centre`` the colours diverge around it (blue below, red above). Long labels are wrapped.
    Returns the PNG image."""
    grid = np.asarray(values, dtype=np.float64)
    n_rows, n_cols = grid.shape
    fig = Figure(figsize=size or (1.2 + 0.65 * n_cols, 1.0 + 0.5 * n_rows), dpi=110)
    ax = fig.add_subplot()
    ax.set_facecolor("#eceff1")
    norm = _centred_norm(grid, centre) if centre is not None else Normalize(vmin, vmax)
    image = ax.imshow(np.ma.masked_invalid(grid), cmap="RdBu_r" if centre is not None else "viridis", norm=norm,
                      aspect="auto")  # fmt: skip
    ax.set_xticks(range(n_cols), [textwrap.fill(str(c), 18) for c in col_labels], fontsize=8)
    ax.set_yticks(range(n_rows), [textwrap.fill(str(r), 30) for r in row_labels], fontsize=8)
    ax.tick_params(length=0)
    if annotate or cell_text is not None:
        for (i, j), value in np.ndenumerate(grid):
            text = cell_text[i][j] if cell_text is not None else (f"{value:.2f}" if np.isfinite(value) else "")
            ink = "black" if not np.isfinite(value) or _luminance(image.cmap(norm(value))) > 0.5 else "white"
            ax.text(j, i, text, ha="center", va="center", fontsize=8, color=ink, linespacing=1.25)
    fig.colorbar(image, ax=ax, label=colorbar, fraction=0.04, pad=0.02)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    return to_png(fig)


def _centred_norm(grid: np.ndarray, centre: float) -> Normalize:
    """Colours symmetric around ``centre``: the farther finite value from it sets both ends."""
    finite = grid[np.isfinite(grid)]
    reach = float(np.max(np.abs(finite - centre))) if finite.size else 1.0
    return Normalize(centre - (reach or 1.0), centre + (reach or 1.0))


def _luminance(rgba: tuple[float, ...]) -> float:
    """Relative luminance of a colour (ITU-R BT.709 weights), to pick black or white text on it."""
    r, g, b = rgba[:3]
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


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
    _label_axes(ax, xlabel, ylabel, title)
    if len(groups) > 1:
        outside_legend(ax, markerscale=2.5)
    return to_png(fig)


#: a value with its interval: ``(value, low, high)``
Interval = tuple[float, float, float]


@dataclass(frozen=True)
class FrontierPanel:
    """One attack of a privacy-utility frontier: ``points[label] = (utility, success)``, both
    with intervals; ``reference`` (drawn dashed, named ``reference_label``) is what the attack
    must beat."""

    title: str
    xlabel: str
    ylabel: str
    points: Mapping[str, tuple[Interval, Interval]]
    reference: float | None = None
    reference_label: str = ""


def frontier_plot(panels: Sequence[FrontierPanel], labels: Sequence[str], columns: int = 2) -> bytes:
    """Privacy-utility frontiers, one panel per attack: every defence a numbered point with its
    interval on both axes (``labels`` fixes the numbers, the same in every panel, keyed below the
    panels), the frontier (no other point has more utility and less attack success) joined by a
    grey line. Returns the PNG image."""
    rows = -(-len(panels) // columns)
    fig = Figure(figsize=(5.0 * columns, 3.6 * rows), dpi=110)
    number = {label: i for i, label in enumerate(labels, 1)}
    for k, panel in enumerate(panels):
        ax = fig.add_subplot(rows, columns, k + 1)
        _frontier_panel(ax, panel, number)
    handles = [Line2D([], [], linestyle="none", marker=f"${number[label]}$", markersize=8, color="#333333") for label in labels]
    fig.legend(handles, [f"{label}" for label in labels], loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2,
               fontsize=9, frameon=False, title="defences (the numbers on the points)")  # fmt: skip
    return to_png(fig)


def _frontier_panel(ax: Any, panel: FrontierPanel, number: Mapping[str, int]) -> None:
    """One panel of ``frontier_plot``."""
    for label, ((x, x_low, x_high), (y, y_low, y_high)) in panel.points.items():
        ax.errorbar([x], [y], xerr=[[x - x_low], [x_high - x]], yerr=[[y - y_low], [y_high - y]], fmt="o", markersize=6,
                    color="#1f5f99", ecolor="#7aa6c9", elinewidth=1.2, capsize=2)  # fmt: skip
        ax.annotate(str(number[label]), (x, y), xytext=(5, 4), textcoords="offset points", fontsize=9, weight="bold")
    front = pareto_front({label: (p[0][0], p[1][0]) for label, p in panel.points.items()})
    if len(front) > 1:
        ax.plot(*zip(*front), color="grey", linewidth=1, zorder=0, label="frontier")
    if panel.reference is not None:
        ax.axhline(panel.reference, color="#b03a2e", linestyle="--", linewidth=1, label=panel.reference_label)
    ax.set_title(textwrap.fill(panel.title, 55), fontsize=10)
    ax.set_xlabel(textwrap.fill(panel.xlabel, 60), fontsize=8.5)
    ax.set_ylabel(textwrap.fill(panel.ylabel, 35), fontsize=8.5)
    ax.grid(True, alpha=0.3)
    ax.margins(0.12)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7.5, loc="upper left", bbox_to_anchor=(0.0, -0.28 if len(panel.xlabel) > 60 else -0.2),
                  ncol=2, frameon=False)  # fmt: skip


def pareto_front(points: Mapping[str, tuple[float, float]]) -> list[tuple[float, float]]:
    """The points ``(utility, success)`` no other point beats on both (more utility and less
    success), by increasing utility."""
    front = [(x, y) for x, y in points.values() if not any(u >= x and v <= y and (u, v) != (x, y) for u, v in points.values())]
    return sorted(set(front))


def to_png(fig: Figure) -> bytes:
    """Render a matplotlib ``Figure`` to PNG bytes, cropped to everything drawn (labels and
    legends outside the axes included, none cut off)."""
    FigureCanvasAgg(fig)
    fig.tight_layout()
    buf = io.BytesIO()
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend()] + fig.legends
    fig.savefig(buf, format="png", bbox_inches="tight", bbox_extra_artists=legends, pad_inches=0.1, metadata={"Software": None})
    return buf.getvalue()
