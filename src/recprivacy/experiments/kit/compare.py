"""Our results beside the numbers a paper reports (``papers/<id>/reference.yaml``): the kit's one
comparator. Every study and ``benchmarks/results.py`` read the paper's numbers through it.

A study says where one of its results sits in the paper with a *place*: the ``(table, row,
column)`` of the paper's number, in the file's labels (``experiments.reference`` reads and
validates the file and documents its shape). A ``locate`` function maps a study's result (a
``Summary``, or the study's own key of a table row) to a place, to a sequence of places tried
in order (a number the paper prints in one of two tables: the first it has wins), or to None
(the paper has nothing comparable).

* ``paper_value(paper, located)``: the paper's number at the place(s), None where it has none;
* ``compare(items, paper, locate)``: a :class:`Comparison` for every item the paper has a
  number for (items it has none for are left out; the study decides how to show the pairs);
* ``paper_row(paper, table, row)`` and ``paper_table(paper, table)``: a row or a whole table,
  for what a study quotes as a unit (a figure's stated points, a table's mean, a row printed
  under ours).

``paper`` is a paper id ("000" ... "004", the packaged reference) or a ``PaperReference``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from recprivacy.experiments.reference import PaperReference, reference

T = TypeVar("T")
Place = tuple[str, str, str]
Located = Place | Sequence[Place] | None
Paper = str | PaperReference


@dataclass(frozen=True)
class Comparison(Generic[T]):
    """Our result and the paper's number at one cell of one of its tables."""

    table: str
    row: str
    column: str
    ours: T
    paper: float

    @property
    def difference(self) -> float:
        """Our number (a ``Summary``'s mean, or the number itself) minus the paper's."""
        ours: Any = self.ours
        return float(getattr(ours, "mean", ours)) - self.paper


def _reference(paper: Paper) -> PaperReference:
    return reference(paper) if isinstance(paper, str) else paper


def _places(located: Located) -> list[Place]:
    if not located:
        return []
    return [located] if isinstance(located[0], str) else list(located)  # type: ignore[list-item]


def _find(paper: Paper, located: Located) -> tuple[Place, float] | None:
    """The first of the places the paper has a number at, with the number."""
    ref = _reference(paper)
    for place in _places(located):
        value = ref.value(*place)
        if value is not None:
            return place, value
    return None


def paper_value(paper: Paper, located: Located) -> float | None:
    """The paper's number at ``located`` (module docstring); None when it has none there."""
    found = _find(paper, located)
    return None if found is None else found[1]


def compare(items: Iterable[T], paper: Paper, locate: Callable[[T], Located]) -> list[Comparison[T]]:
    """Every item with a paper number at ``locate(item)``, paired with it (module docstring)."""
    out = []
    for item in items:
        found = _find(paper, locate(item))
        if found is not None:
            out.append(Comparison(*found[0], item, found[1]))
    return out


def paper_row(paper: Paper, table: str, row: str) -> dict[str, float]:
    """``column -> value`` of one row of the paper's ``table``, in file order (empty when absent)."""
    return _reference(paper).row(table, row)


def paper_table(paper: Paper, table: str) -> dict[str, dict[str, float]]:
    """``row -> column -> value`` of one of the paper's tables, rows in file order (empty when absent)."""
    return _reference(paper).table(table)
