"""Our summaries beside the numbers a paper reports (``papers/<id>/reference.yaml``).

``compare(summaries, reference, table, locate)`` pairs every summary that ``locate`` places at a
``(row, column)`` of the paper's ``table`` with the paper's number there (``experiments.reference``
reads and validates the file). Summaries the paper has no number for are left out; the study
decides how to show the pairs (its tables put the paper's number beside ours).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from recprivacy.experiments.kit.aggregate import Summary
from recprivacy.experiments.reference import PaperReference

Locate = Callable[[Summary], tuple[str, str] | None]


@dataclass(frozen=True)
class Comparison:
    """Our summary and the paper's number at one cell of one of its tables."""

    table: str
    row: str
    column: str
    ours: Summary
    paper: float

    @property
    def difference(self) -> float:
        """Our mean minus the paper's number."""
        return self.ours.mean - self.paper


def compare(summaries: Iterable[Summary], reference: PaperReference, table: str, locate: Locate) -> list[Comparison]:
    """Every summary with a paper number at ``locate(summary)`` in ``table`` (module docstring)."""
    out = []
    for summary in summaries:
        place = locate(summary)
        paper = None if place is None else reference.value(table, *place)
        if paper is not None:
            out.append(Comparison(table, place[0], place[1], summary, paper))
    return out
