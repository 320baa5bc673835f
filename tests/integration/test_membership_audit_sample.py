"""The membership section on seeded samples of users (issue 33): ``max_users`` caps the
member, non-member, shadow and item-vector groups, the section says so, and a cap at least as
large as the groups changes nothing."""

import numpy as np

from recprivacy.config import load_config
from recprivacy.experiments import run_study

SYNTHETIC = {"n_users": 300, "n_items": 200, "n_interactions": 15000}


def _audit(max_users: int | None) -> object:
    return run_study(load_config(base={
        "name": "audit-membership-sample", "study": "audit", "seed": 0, "noise": "simulation",
        "dataset": {"name": "synthetic", "options": SYNTHETIC}, "model": {"name": "itemcf", "params": {}},
        "study_options": {"sections": ["membership"],
                          "membership": {"k": 20, "n_factors": 16, "n_references": 2, "max_users": max_users}},
    }))  # fmt: skip


def _groups(results) -> dict:
    return dict((row[0], row[1]) for row in results.tables["membership-groups"].rows)


def test_groups_are_capped_and_the_section_says_so():
    capped, everyone, large = _audit(12), _audit(None), _audit(210)
    groups = _groups(capped)
    # 90 held-out users: 45 non-members, 22 shadow users (11 members, 11 non-members), 23 vector users
    assert _groups(everyone)["target non-members (held out)"] == 45
    assert groups["target non-members (held out)"] == groups["target members (trained users)"] == 12
    assert groups["shadow members"] + groups["shadow non-members"] == 12 and groups["item-vector users"] == 12
    text = "\n".join(s.text for s in capped.sections)
    assert "Each group is a seeded random sample of at most 12 of the 90 held-out users" in text
    assert "The members are a seeded random sample of 12 of the 210 trained users" in text
    assert "seeded random sample" not in "\n".join(s.text for s in everyone.sections + large.sections)
    np.testing.assert_equal(large.metrics, everyone.metrics)        # NaN (unresolvable TPR) equals NaN
    assert _groups(large) == _groups(everyone)
