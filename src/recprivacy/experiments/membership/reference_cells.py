"""Reference recommenders as cells of the study kit (issue 47): LiRA's and RMIA's references are
the membership attack's costliest step (each trains a recommender of the target's size, under the
defence for the matrix's adaptive attacker), and they are independent, so they fan out through
the kit's executor (``kit.executor``: in this process, or one Ray task per reference).

Each reference is one cell in a group of its own (``reference j/n``); its result is the lists it
shows the pool's users under each protocol, as named arrays. A reference depends only on its
index (``attacks.membership.references.Reference``), so every executor gives the same lists.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from recprivacy.attacks.membership.references import Reference, RunAll
from recprivacy.experiments.kit.cell import Cell, CellResult
from recprivacy.experiments.kit.executor import Executor


@dataclass
class ReferenceGrid:
    """The kit ``Grid`` of one set of references: cell ``{"reference": j}`` trains ``jobs[j]``."""

    jobs: list[Reference]

    def prepare(self, group: str) -> None:
        """Nothing is shared between references."""

    def measure(self, cell: Cell, prepared: None) -> CellResult:
        """The reference's lists under each protocol, as arrays named by protocol."""
        return CellResult([], arrays=self.jobs[int(cell.setting["reference"])].train())


def on_executor(executor: Executor) -> RunAll:
    """``run(jobs)`` for ``references.reference_lists``: every job a cell of its own group on
    ``executor``; the lists come back in the jobs' order."""

    def run(jobs: Sequence[Reference]) -> list[dict[str, np.ndarray]]:
        cells = [Cell({"reference": i}, f"reference {i + 1}/{len(jobs)}") for i in range(len(jobs))]
        found: dict[int, dict[str, np.ndarray]] = {}
        executor.run(ReferenceGrid(list(jobs)), {c.group: [c] for c in cells},
                     lambda cell, result: found.__setitem__(int(cell.setting["reference"]), result.arrays))  # fmt: skip
        return [found[i] for i in range(len(jobs))]

    return run
