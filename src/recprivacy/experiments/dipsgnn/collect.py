"""Steps 3 and 5 of the protocol (package docstring): fit one method at one seed and evaluate
it (one cell of :mod:`.cells`).

SR-GNN-family models hold out a random 10% of the training prefixes to select their epoch
(inside ``fit``); the other baselines train on a random 90% of the training interactions and
stop early on the other 10% (``random_split``, seeded by the run's seed). DPMF_exp is skipped
when the data carry no ratings.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from recprivacy.data.split import random_split
from recprivacy.experiments.dipsgnn.evaluate import evaluate_samples
from recprivacy.experiments.dipsgnn.methods import GRAPH_MODELS, build_method
from recprivacy.experiments.dipsgnn.options import DIPSGNNOptions
from recprivacy.experiments.dipsgnn.sequences import SequenceData
from recprivacy.privacy.accounting import PrivacyStatement


@dataclass
class MethodRun:
    """One fitted method at one seed: metrics (x100), timing and privacy statements."""

    method: str
    seed: int
    metrics: dict[str, float]
    masked: dict[str, float]
    fit_seconds: float
    epochs: int
    statements: dict[str, PrivacyStatement] = field(default_factory=dict)
    valid_curve: list[float] = field(default_factory=list)

    @property
    def seconds_per_epoch(self) -> float:
        return self.fit_seconds / max(self.epochs, 1)


def run_method(name: str, seed: int, data: SequenceData, options: DIPSGNNOptions, backbone: dict[str, Any]) -> MethodRun:
    """Fit one method at one seed and evaluate it on the test samples."""
    model = build_method(name, options, backbone, seed)
    start = time.perf_counter()
    if isinstance(model, GRAPH_MODELS):
        model.fit(data.train)
    else:
        fit_part, valid = random_split(data.train, ratios=(0.9, 0.1), seed=seed)
        model.fit(fit_part, valid)
    seconds = time.perf_counter() - start
    history = getattr(model, "history_", None)
    epochs = len(history.losses) if history is not None else 1
    metrics, masked = evaluate_samples(model, data.test_samples, data.train.to_csr(), data.full.n_items, options.max_len)
    statement = getattr(model, "privacy_statement", None)
    stated = None if statement is None else statement()
    statements = {} if stated is None else dict(stated.parts) or {"interactions": stated}
    curve = [] if history is None else [float(v) for _, v in history.valid]
    return MethodRun(name, seed, metrics, masked, seconds, epochs, dict(statements), curve)
