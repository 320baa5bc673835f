"""A row of the attack x defence matrix: one defended world (``World``, with the models it
serves and trains) and what the report shows of it (``Row``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from recprivacy.data.interactions import Interactions
from recprivacy.experiments.matrix.cells import MatrixCell
from recprivacy.experiments.matrix.plan import DefenceSpec
from recprivacy.metrics.intervals import Estimate
from recprivacy.models.base import Recommender
from recprivacy.privacy.accounting import PrivacyStatement

#: ``fit(train, seed) -> model``: trains a model the way a world's model was trained, defence included
Refit = Callable[[Interactions, int], Recommender]
#: a row's utility cost: what was measured, its value, and its change against no defence
Utility = tuple[str, Estimate, Estimate]


@dataclass
class Row:
    """What the report shows of one defence row: the defence, its claim, its utility cost and
    the row's cells by attack key (a ``World`` without its models: what the run's records keep)."""

    spec: DefenceSpec
    statement: PrivacyStatement
    utility: Utility | None = None
    cells: dict[str, MatrixCell] = field(default_factory=dict)


@dataclass
class World:
    """One defence row: the model serving the lists, the defence's claim and utility cost, the
    row's cells by attack key; ``refit`` trains a model under the defence (the adaptive
    membership attacker's shadow; None when the defence does not change training) and
    ``release`` is what a released-data defence published (``matrix.release``)."""

    spec: DefenceSpec
    model: Recommender
    statement: PrivacyStatement
    utility: Utility | None = None
    cells: dict[str, MatrixCell] = field(default_factory=dict)
    refit: Refit | None = None
    release: Any = None

    def row(self) -> Row:
        """The report's row of this world (its cells so far)."""
        return Row(self.spec, self.statement, self.utility, dict(self.cells))
