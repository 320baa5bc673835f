"""Erasure verification on planted targets (small synthetic data, through ``Audit.erasure``):

(a) a target retrained without the forgotten users: "no evidence the forgotten users are
    distinguishable", and the positive control (retained members) leaks;
(b) a fake unlearning whose training keeps the forgotten users' data: "not erased";
(c) a target that learns nothing from anybody: "inconclusive: the attack cannot tell retained
    members either";

every verdict re-derived by hand from ``results.json`` (``rejudge.py``), and bad input refused in one line.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from typer.testing import CliRunner

from recprivacy import Audit, Target
from recprivacy.cli import app
from recprivacy.errors import DataError
from recprivacy.metrics.verdict import NO_EVIDENCE, NO_POWER, NOT_ERASED
from rejudge import check_audit
from test_planted_membership import DATA, FRAME, PopularForMembers

USERS = np.random.default_rng(0).permutation(DATA.user_ids)
MEMBERS, NEVER = USERS[:180], USERS[180:]
FORGOTTEN = MEMBERS[:60]
OPTIONS = {"k": 20, "n_factors": 16, "n_references": 4}


def keeps_forgotten(frame: pd.DataFrame) -> PopularForMembers:
    """A fake unlearning: trains on what it is given and on the forgotten users' rows."""
    return PopularForMembers(pd.concat([frame, FRAME[FRAME.user_id.isin(FORGOTTEN)]]))


def fixed_order(frame: pd.DataFrame) -> PopularForMembers:
    """Learns nothing: every history is served the one fixed order."""
    model = PopularForMembers(frame)
    model.known = set()
    return model


def _erasure(after_fit, tmp_path: Path, before_fit=PopularForMembers) -> dict:
    results = Audit.erasure(Target.from_training(before_fit), Target.from_training(after_fit), FRAME, MEMBERS, FORGOTTEN,
                            NEVER, options=OPTIONS, seed=0, noise="simulation").run()  # fmt: skip
    run = results.write(tmp_path)
    doc, report = json.loads((run / "results.json").read_text()), (run / "report.md").read_text()
    check_audit(doc, report)
    assert "Erasure rule" in report
    return {v["attack"].split(" (")[0]: v for v in doc["verdicts"] if v["kind"] != "secondary"}


def test_exact_retraining_reads_no_evidence_with_the_control_leaking(tmp_path):
    rows = _erasure(PopularForMembers, tmp_path)
    assert rows["erasure: forgotten users vs never-members"]["label"] == NO_EVIDENCE
    assert rows["erasure control: retained members vs never-members"]["label"] == "leaks"
    assert rows["before the deletion: forgotten users vs never-members"]["label"] == "leaks"


def test_a_fake_unlearning_that_keeps_their_data_reads_not_erased(tmp_path):
    rows = _erasure(keeps_forgotten, tmp_path)
    assert rows["erasure: forgotten users vs never-members"]["label"] == NOT_ERASED


def test_a_target_without_power_reads_inconclusive(tmp_path):
    rows = _erasure(fixed_order, tmp_path, before_fit=fixed_order)
    assert rows["erasure: forgotten users vs never-members"]["label"] == NO_POWER
    assert rows["erasure control: retained members vs never-members"]["label"] != "leaks"


def test_a_forgotten_user_who_was_no_member_is_refused():
    with pytest.raises(DataError, match="is forgotten but not a member"):
        Audit.erasure(Target.from_training(PopularForMembers), Target.from_training(PopularForMembers), FRAME, MEMBERS,
                      [NEVER[0]], NEVER, options=OPTIONS).run()  # fmt: skip


def test_the_command_names_what_is_missing_in_one_line(tmp_path):
    result = CliRunner().invoke(app, ["verify-erasure", "--interactions", str(tmp_path / "x.csv"), "--out", str(tmp_path)])
    assert result.exit_code != 0
    assert result.output.strip().count("\n") == 0 and "expected --members, --forgotten, --before, --after" in result.output
