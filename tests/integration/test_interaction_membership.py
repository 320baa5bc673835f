"""Interaction-level membership inference, planted: a target that excludes seen items from its lists
(the built-in popularity recommender) leaks which popular items a member saw, and the seen-filter
attack finds it against hard non-members (their held-out items) beyond the item-popularity baseline;
a target that shows everybody the same popular list, seen items included, leaks nothing of the kind."""

from __future__ import annotations

import numpy as np

from recprivacy import Audit, Target
from recprivacy.attacks.membership.interaction import ATTACKS
from recprivacy.experiments.interaction import interaction_scored, judge_interactions
from recprivacy.models import make_model
from test_planted_membership import DATA, FRAME

USERS = np.random.default_rng(0).permutation(DATA.user_ids)
MEMBERS, NEVER = USERS[:200], USERS[200:]
TEST = FRAME[FRAME.user_id.isin(MEMBERS)].groupby("user_id").sample(frac=0.2, random_state=0)


def _judged(target: Target) -> dict:
    data = Audit(target, FRAME, MEMBERS, NEVER, test=TEST)._prepare()
    if target.recommender is not None:
        target = Target.from_recommender(type(target.recommender)().fit(data.train))
    return judge_interactions([interaction_scored(target, data, k=20, per_user=10, seed=0)])


class SamePopularList:
    """The 20 most popular items for everybody, whatever they have seen."""

    def __init__(self) -> None:
        self.popular = FRAME["item_id"].value_counts().index.to_numpy()

    def recommend(self, histories: list, k: int) -> np.ndarray:
        return np.tile(self.popular[:k], (len(histories), 1))


def test_a_seen_item_filter_leaks_which_items_were_seen():
    judged = _judged(Target.from_recommender(make_model("popularity")))
    hard = judged["hard"].judgement
    assert hard.verdict.label == "leaks" and hard.best_attack in ATTACKS  # both attacks read the filter
    assert hard.best_baseline in ("item_popularity", "user_history", "blind")
    assert judged["hard"].tprs["seen_filter"][1].value > judged["hard"].tprs["item_popularity"][1].value


def test_lists_that_ignore_the_history_reveal_nothing_beyond_popularity():
    judged = _judged(Target.from_model(SamePopularList()))
    assert judged["hard"].judgement.verdict.label != "leaks"
