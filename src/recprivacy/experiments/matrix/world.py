"""A row of the attack x defence matrix: one defended world."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from recprivacy.data.interactions import Interactions
from recprivacy.experiments.matrix.cells import Cell
from recprivacy.experiments.matrix.plan import DefenceSpec
from recprivacy.metrics.intervals import Estimate
from recprivacy.models.base import Recommender
from recprivacy.privacy.accounting import PrivacyStatement

#: ``fit(train, seed) -> model``: trains a model the way a world's model was trained, defence included
Refit = Callable[[Interactions, int], Recommender]


@dataclass
class World:
    """One defence row: the model serving the lists, the defence's claim and utility cost, the
    row's cells by attack key; ``refit`` trains a model under the defence (the adaptive
    membership attacker's shadow; None when the defence does not change training) and
    ``release`` is what a released-data defence published (``matrix.release``)."""

    spec: DefenceSpec
    model: Recommender
    statement: PrivacyStatement
    utility: tuple[str, Estimate, Estimate] | None = None
    cells: dict[str, Cell] = field(default_factory=dict)
    refit: Refit | None = None
    release: Any = None
