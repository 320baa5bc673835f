"""The membership adversary's strength settings (issue 47): the ``thorough`` preset and
references trained as many epochs as an early-stopped target (``trained_like``)."""

from types import SimpleNamespace

import pytest

from recprivacy.experiments.membership.audit import THOROUGH_REFERENCES, MembershipAuditOptions, trained_like
from recprivacy.models.training import TrainingHistory


def test_thorough_raises_the_references_and_sizes_them_like_the_target():
    default, thorough = MembershipAuditOptions(), MembershipAuditOptions(thorough=True)
    assert (default.n_references, default.mimic_size) == (8, False)
    assert (thorough.n_references, thorough.mimic_size) == (THOROUGH_REFERENCES, True)
    # a number the user gives wins over the preset's
    assert MembershipAuditOptions(thorough=True, n_references=12).n_references == 12


@pytest.mark.parametrize(("best_epoch", "expected"), [(9, 10), (0, 1), (-1, 200)])
def test_references_train_the_epochs_the_target_kept(best_epoch, expected):
    model = SimpleNamespace(history_=TrainingHistory(best_epoch=best_epoch))
    assert trained_like(model, {"n_epochs": 200, "lr": 0.05}) == {"n_epochs": expected, "lr": 0.05}


def test_a_target_without_a_training_history_keeps_its_parameters():
    params = {"n_neighbours": 50}
    out = trained_like(object(), params)
    assert out == params and out is not params  # a copy: the target's config is never modified
