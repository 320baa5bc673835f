"""Shadow algorithm by mimicry (issue 47): a lists-only audit of an ALS target whose algorithm is not
given picks ALS as the adversary's shadow (its lists agree most with the target's), and its best
served attack is within 0.05 ROC AUC of the same audit given the target's training function."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recprivacy import Audit, Target
from recprivacy.data.interactions import Interactions
from recprivacy.data.synthetic import make_synthetic
from recprivacy.experiments.membership.audit import list_agreement
from recprivacy.models import make_model

pytestmark = pytest.mark.slow
DATA = make_synthetic(n_users=300, n_items=200, n_interactions=15000, seed=0)
FRAME = DATA.to_frame()[["user_id", "item_id", "timestamp"]]
USERS = np.random.default_rng(0).permutation(DATA.user_ids)
MEMBERS, NON_MEMBERS = USERS[:200], USERS[200:]
OPTIONS = {"membership": {"k": 20, "n_factors": 16}}


class ALS:
    """recprivacy's ALS trained on a frame of (user_id, item_id), serving histories of item ids."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self.items = np.unique(FRAME.item_id)
        users, rows = np.unique(frame.user_id, return_inverse=True)
        train = Interactions(rows.astype(np.int64), np.searchsorted(self.items, frame.item_id).astype(np.int64), len(users),
                             len(self.items))  # fmt: skip
        self.model = make_model("als", seed=3).fit(train)

    def recommend(self, histories: list, k: int) -> np.ndarray:
        items = np.concatenate([np.searchsorted(self.items, h) for h in histories]).astype(np.int64)
        users = np.repeat(np.arange(len(histories)), [len(h) for h in histories]).astype(np.int64)
        lists = self.model.recommend_histories(Interactions(users, items, len(histories), len(self.items)), k)
        return self.items[np.asarray(lists)]


def _best_served(results) -> float:
    return next(v for v in results.verdicts if "protocol served" in v["attack"] and v["metric"] == "ROC AUC")["value"]["value"]


def test_list_agreement_is_the_mean_overlap_at_k():
    a, b = np.array([[0, 1, 2], [3, 4, 5]]), np.array([[2, 1, 9], [6, 7, 8]])
    assert list_agreement(a, b, 10) == pytest.approx((2 / 3 + 0) / 2)


def test_a_lists_only_audit_of_als_picks_als_and_loses_little_against_the_training_function():
    model = ALS(FRAME[FRAME.user_id.isin(MEMBERS)])
    histories = FRAME.sort_values("timestamp", kind="stable").groupby("user_id")["item_id"].agg(list)
    lists = model.recommend([histories[u] for u in USERS], 20)
    frame = pd.DataFrame([(u, r + 1, i) for u, row in zip(USERS, lists) for r, i in enumerate(row)],
                         columns=["user_id", "rank", "item_id"])  # fmt: skip
    logged = Audit(Target.from_lists(frame), FRAME, MEMBERS, NON_MEMBERS, sections=["membership"], options=OPTIONS,
                   noise="simulation").run()  # fmt: skip
    agreement = {k.split("/")[-1]: v for k, v in logged.metrics.items() if k.startswith("membership/mimicry/")}
    assert max(agreement, key=agreement.get) == "als", agreement
    text = next(s for s in logged.sections if s.title.startswith("Membership")).text
    assert "`als`, chosen by mimicry" in text
    trained = Audit(Target.from_training(ALS), FRAME, MEMBERS, NON_MEMBERS, sections=["membership"], options=OPTIONS,
                    noise="simulation").run()  # fmt: skip
    assert _best_served(logged) >= _best_served(trained) - 0.05, (_best_served(logged), _best_served(trained))
