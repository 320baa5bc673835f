"""Audit your own system on real logs: the MIND subset's logged impressions feed the audit's
exposure section directly (no built-in model, lists only), reduced to fit CI."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recprivacy import Audit, Target
from recprivacy.data.loaders.mind import load_mind

pytestmark = pytest.mark.realdata


def test_mind_exposures_are_audited_by_the_authors_rule(dataset_dir) -> None:
    log = load_mind(dataset_dir("mind-small-subset"))
    shown = np.repeat(log.users, np.diff(log.slate_offsets))
    clicks = pd.DataFrame({"user_id": log.user_ids[shown[log.clicked]],
                           "item_id": log.item_ids[log.slate_items[log.clicked]]}).drop_duplicates()  # fmt: skip
    users = clicks["user_id"].unique()
    lists = pd.DataFrame({"user_id": users, "rank": 1, "item_id": clicks["item_id"].iloc[0]})
    options = {"exposure": {"dim": 32, "n_epochs": 2, "max_users": 1000, "ratios": [0.5]}}
    results = Audit(Target.from_lists(lists), clicks, users, exposures=log, sections=["exposure"], options=options,
                    noise="simulation").run()  # fmt: skip
    (row,) = results.tables["risk_summary"].rows
    value, baseline = float(row[2].split()[0]), float(row[3].split()[0])  # "0.123 [lo, hi]", "0.045 (name)"
    assert row[0].startswith("exposure leakage") and 0 <= value <= 1 and baseline > 0
    assert value == pytest.approx(results.metrics["exposure/recall@10/all"], abs=5e-4)
    text = next(s for s in results.sections if s.title.startswith("Exposure")).text
    assert "logged impressions of mind: the mind rule" in text
    assert "a seeded random sample of 1000 of the 3127 users" in text  # the authors' rule keeps 3,127 users
