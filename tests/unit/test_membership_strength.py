"""The membership adversary's strength settings (issue 47): the ``thorough`` preset,
references trained as many epochs as an early-stopped target (``trained_like``) and reference
training fanned out through the study kit's executor."""

from types import SimpleNamespace

import numpy as np
import pytest

from recprivacy.data.synthetic import make_synthetic
from recprivacy.experiments.kit.executor import InProcess
from recprivacy.experiments.membership.audit import THOROUGH_REFERENCES, MembershipAuditOptions, trained_like
from recprivacy.experiments.membership.lab import LabOptions, MembershipLab
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


def _references(executor):
    """LiRA's references of a small BPR-MF lab, trained on ``executor`` (None: the plain loop)."""
    data = make_synthetic(n_users=120, n_items=80, n_interactions=3600, seed=0)
    options = LabOptions(item_coverage="init", holdout="none", model_params={"bpr": {"n_epochs": 2}}, n_references=4)
    lab = MembershipLab({data.name: data}, options, seed=3, executor=executor)
    return lab.references(data.name, "bpr", 10)


class Reversed(InProcess):
    """Runs the groups last first and records them: a stand-in for an executor whose tasks finish in any order."""

    def __init__(self):
        self.groups = []

    def run(self, grid, groups, on_result):
        self.groups += list(groups)
        super().run(grid, dict(reversed(list(groups.items()))), on_result)


def test_references_fan_out_as_one_kit_cell_each_and_give_the_same_lists():
    plain, executor = _references(None), Reversed()
    fanned = _references(executor)
    assert executor.groups == ["reference 1/4", "reference 2/4", "reference 3/4", "reference 4/4"]
    np.testing.assert_array_equal(fanned.in_mask, plain.in_mask)
    for protocol, lists in plain.lists.items():
        np.testing.assert_array_equal(fanned.lists[protocol], lists)
    assert not (plain.lists["served"][0] == plain.lists["served"][1]).all()  # the references differ from each other
