"""The sequential defences' canary audit (``experiments.matrix.sequential``): one canary per
user, and a model that gives its planted canaries away is flagged against a small claim."""

from __future__ import annotations

import numpy as np
import torch

from recprivacy.data.interactions import Interactions
from recprivacy.experiments.matrix.cells import Canaries
from recprivacy.experiments.matrix.sequential import audit_row, canary_scores, one_per_user
from recprivacy.privacy.accounting import PrivacyStatement, StatementContext

N_ITEMS = 20


class Revealing:
    """A stand-in for a fitted SR-GNN whose scores rank each user's planted canary first, under
    a DP-SGD claim of eps = 0.5: the audit must call the claim broken."""

    def __init__(self, canaries: Canaries) -> None:
        self.canaries = canaries

    def privacy_statement(self, context: StatementContext | None = None) -> PrivacyStatement:
        claim = PrivacyStatement(0.5, 1e-5, "stub", "one training sample", "stub")
        return PrivacyStatement.of_parts({"training samples, whole training run": claim}, "training samples, whole training run")

    def score_sequences(self, sequences: list[np.ndarray], users: np.ndarray) -> torch.Tensor:
        scores = torch.arange(len(users) * N_ITEMS, dtype=torch.float64).reshape(len(users), N_ITEMS) % 7
        c = self.canaries
        planted = torch.as_tensor(c.included, dtype=torch.float64) * 100.0
        scores[torch.arange(len(users)), torch.as_tensor(c.items)] = planted
        return scores


def _canaries(m: int) -> Canaries:
    rng = np.random.default_rng(0)
    return Canaries(np.arange(m), rng.integers(0, N_ITEMS, m), rng.random(m) < 0.5)


def _clean(m: int) -> Interactions:
    return Interactions(users=np.repeat(np.arange(m), 2), items=np.tile([0, 1], m), n_users=m, n_items=N_ITEMS)


def test_one_canary_per_user_keeps_the_first_and_its_inclusion_bit():
    c = Canaries(np.array([3, 1, 3, 2, 1]), np.array([5, 6, 7, 8, 9]), np.array([True, False, False, True, True]))
    kept = one_per_user(c)
    assert kept.users.tolist() == [3, 1, 2] and kept.items.tolist() == [5, 6, 8]
    assert kept.included.tolist() == [True, False, True]


def test_a_model_that_gives_its_canaries_away_breaks_a_small_claim():
    c = _canaries(200)
    model = Revealing(c)
    scores = canary_scores(model, c, _clean(200))
    assert (scores[c.included] > scores[~c.included].max()).all()
    row = audit_row("DP-SGD", model, c, _clean(200), 50)
    assert row[1] == 0.5 and row[6] > 0.5 and row[7] > 0.5 and row[8] == "100 of 100"
    assert row[-1].startswith("BROKEN GUARANTEE") and "outside the edge-level unit" not in row[-1]
