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
    assert [row[1] for row in attacks] == ["ROC AUC", "TPR at 1% FPR", "TPR at 0.1% FPR"] * 2 + ["ROC AUC"]
    assert "protocol served" in attacks[0][0] and "protocol paper" in attacks[3][0]
    # the baseline is the strongest thing the adversary knows without the target: a blind guess or a
    # statistic of the users' own histories; statistics of the served lists are attacks
    history = [results.metrics[f"membership/served/{k}/auc"] for k in ("history_length", "history_popularity")]
    assert float(attacks[0][3].split(" ")[0]) == pytest.approx(max([0.5, *history]), abs=1e-4)
    assert attacks[0][3].endswith(("(blind guess)", "(history statistic: number of interactions)",
                                   "(history statistic: mean item popularity)"))  # fmt: skip
    assert "membership/served/popular_overlap/auc" in results.metrics
    # 45 non-members: TPR at 1% FPR is not a number, and a secondary row carries no verdict word
    assert attacks[1][2] == "not resolvable with n = 45" and attacks[1][5].startswith("secondary (the verdict is on ROC AUC)")
    # the paper protocol's popular list is separated by a statistic of the lists as well as by the MLP
    assert results.metrics["membership/paper/mlp/auc"] > 0.7
    assert "the signal is the protocol" in attacks[3][5] and "(Bonferroni)" in attacks[3][6]
    groups = dict((row[0], row[1]) for row in results.tables["membership-groups"].rows)
    # 30% of 300 users held out: half of them are non-members; every trained user is a member (210 = 70% of 300)
    assert groups["target non-members (held out)"] == 45 and groups["target members (trained users)"] == 210
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


def test_several_seeds_are_combined_the_same_way_and_each_seed_is_kept():
    config = _audit({})
    config["study_options"]["membership"] = {**config["study_options"]["membership"], "seeds": 2, "n_references": 2}
    results = run_study(load_config(base={**config, "noise": "simulation"}))
    table = results.tables["membership-attack"]
    assert table.columns[-1] == "ROC AUC per seed"
    seeds = [float(v) for v in table.rows[0][-1].split(", ")]
    assert len(seeds) == 2 and float(table.rows[0][3].split(" ")[0]) == pytest.approx(sum(seeds) / 2, abs=1.5e-3)
    record = next(v for v in results.verdicts if v["metric"] == "ROC AUC" and "served" in v["attack"])
    assert len(record["per_seed"]) == 2 and record["value"]["method"] == "t interval over 2 seeds"
    assert record["value"]["value"] == pytest.approx(sum(record["per_seed"]) / 2)
    assert "2 seeds, mean over seeds, t interval" in record["sample"]["text"]
