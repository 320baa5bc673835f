"""The membership section of ``recprivacy audit``: non-members are users held out of the
audited target's training, and the shadow is built from other held-out users."""

import numpy as np
import pytest

from recprivacy.config import load_config
from recprivacy.experiments import run_study
from recprivacy.experiments.audit import AuditOptions, holdout_fraction, plan_sections
from recprivacy.experiments.train import PreparedData, hold_out_users
from recprivacy.data.split import random_split
from recprivacy.data.synthetic import make_synthetic

SYNTHETIC = {"n_users": 300, "n_items": 200, "n_interactions": 15000}


def _audit(study_options: dict) -> dict:
    return {
        "name": "audit-membership",
        "study": "audit",
        "seed": 0,
        "dataset": {"name": "synthetic", "options": SYNTHETIC},
        "model": {"name": "itemcf", "params": {}},
        "study_options": {"sections": ["membership"], "membership": {"k": 20, "n_factors": 16}, **study_options},
    }


def test_membership_section_attacks_the_audited_target():
    results = run_study(load_config(base=_audit({})))
    risks = results.tables["risk_summary"].rows
    attacks = [row for row in risks if row[0].startswith("user-level membership inference")]
    assert [row[1] for row in attacks] == ["ROC AUC", "TPR at 1% FPR"] * 2 + ["ROC AUC"]
    assert "protocol served" in attacks[0][0] and "protocol paper" in attacks[2][0]
    # the baseline column holds the best trivial baseline's value on the same metric, and names it
    trivial = [results.metrics[f"membership/served/{k}/auc"] for k in ("popular_overlap", "mean_popularity", "feature_norm")]
    assert float(attacks[0][3].split(" ")[0]) == pytest.approx(max(trivial), abs=1e-4)
    assert "(best trivial: " in attacks[0][3]
    # 45 non-members: TPR at 1% FPR is not a number, and the verdict says why
    assert attacks[1][2] == "not resolvable with n = 45" and attacks[1][5].startswith("not resolvable with n = 45")
    # the paper protocol's popular list is separated by a trivial statistic as well as by the MLP
    assert results.metrics["membership/paper/mlp/auc"] > 0.7
    assert "the signal is the protocol, not memorisation" in attacks[2][5]
    groups = dict((row[0], row[1]) for row in results.tables["membership-groups"].rows)
    # 30% of 300 users held out: half of them are non-members; as many trained users as members
    assert groups["target non-members (held out)"] == groups["target members (trained users)"] == 45
    assert "membership-roc" in results.figures


def test_held_out_users_never_reach_the_target():
    data = make_synthetic(**SYNTHETIC, seed=0)
    prepared = PreparedData(data, *random_split(data, seed=0))
    held = hold_out_users(prepared, 0.3, seed=0)
    assert len(held.heldout_users) == 90
    for part in (held.train, held.valid, held.test):
        assert not set(np.unique(part.users)) & set(held.heldout_users)
    assert len(held.train) + len(held.valid) + len(held.test) + int(data.user_counts()[held.heldout_users].sum()) == len(data)


def test_holdout_defaults_only_when_a_section_needs_it():
    def fraction(options: dict) -> float:
        parsed = AuditOptions.model_validate(options)
        return holdout_fraction(parsed, plan_sections(parsed))

    assert fraction({"sections": ["membership"]}) == pytest.approx(0.3)
    assert fraction({"sections": ["utility"]}) == 0.0
    assert fraction({"sections": ["utility"], "holdout_users": 0.2}) == pytest.approx(0.2)


def test_without_held_out_users_the_section_is_skipped_with_the_reason():
    results = run_study(load_config(base=_audit({"holdout_users": 0.0})))
    assert not [s for s in results.sections if s.title.startswith("Membership")]
    assert not [row for row in results.tables["risk_summary"].rows if "membership" in row[0]]
    summary = next(s for s in results.sections if s.title == "Risk summary").text
    assert "Skipped sections (their inputs are missing): `membership` needs users who were not in training" in summary


def test_several_seeds_add_the_mean_sd_and_t_interval_over_seeds():
    config = _audit({})
    config["study_options"]["membership"] = {**config["study_options"]["membership"], "seeds": 2, "n_references": 2}
    results = run_study(load_config(base={**config, "noise": "simulation"}))
    table = results.tables["membership-attack"]
    assert table.columns[-1] == "ROC AUC over 2 seeds: mean ± sd [95% t]"
    mean, sd, low, high = (float(v) for v in table.rows[0][-1].replace("±", "").replace("[", "").replace("]", "")
                           .replace(",", "").split())  # fmt: skip
    assert 0.0 <= low <= mean <= high <= 1.0 and sd >= 0.0
