"""Interaction-level membership inference, planted: a target that excludes seen items from its lists
(the built-in popularity recommender) leaks which popular items a member saw, and the seen-filter
attack finds it against hard non-members (their held-out items) beyond the item-popularity baseline;
a target that shows everybody the same popular list, seen items included, leaks nothing of the kind.
End to end, the opt-in audit section reports both kinds side by side, in the answer block too, and
every verdict it prints is re-derived by hand from the numbers beside it (``rejudge.py``)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from recprivacy import Audit, Target
from recprivacy.attacks.membership.interaction import ATTACKS
from recprivacy.experiments.interaction import interaction_scored, judge_interactions
from recprivacy.models import make_model
from rejudge import check_audit
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


@pytest.fixture(scope="module")
def audited(tmp_path_factory) -> tuple[dict, str]:
    """The planted target audited end to end with the opt-in section: results.json and report.md."""
    audit = Audit(Target.from_training(lambda frame: SeenFilter(frame)), FRAME, MEMBERS, NEVER, test=TEST,
                  sections=["interaction_membership"], options={"interaction_membership": {"k": 20}}, noise="simulation")  # fmt: skip
    run = audit.run().write(tmp_path_factory.mktemp("interactions"))
    return json.loads((run / "results.json").read_text()), (run / "report.md").read_text()


class SeenFilter:
    """The 20 most popular training items a user has not seen: a target that excludes seen items."""

    def __init__(self, frame) -> None:
        self.popular = frame["item_id"].value_counts().index.to_numpy()

    def recommend(self, histories: list, k: int) -> np.ndarray:
        return np.stack([self.popular[~np.isin(self.popular, h)][:k] for h in histories])


def test_the_audit_section_reports_both_kinds_and_judges_the_planted_leak(audited):
    results, report = audited
    rows = [r for r in results["verdicts"] if r["section"] == "interaction_membership"]
    primary = {r["attack"].split(" non-members")[0].split("(")[1]: r for r in rows if r["kind"] == "attack"}
    assert set(primary) == {"hard", "easy"}
    assert primary["hard"]["label"] == "leaks" and primary["hard"]["metric"] == "ROC AUC"
    assert {r["metric"] for r in rows if r["kind"] == "secondary"} == {"TPR at 1% FPR", "TPR at 5% FPR"}
    answer = results["tables"]["answer"]["rows"]
    assert [r[:2] for r in answer] == [["interactions, hard pairs", "leaks"], ["interactions, easy pairs", primary["easy"]["label"]]]
    assert "of training pairs at 1% false positives" in answer[0][2]
    assert "## Interaction-level membership inference" in report and "easy** ones" in report
    assert check_audit(results, report)  # every verdict re-derived from the numbers beside it


def test_the_section_is_opt_in():
    from recprivacy.experiments.audit import AuditOptions, plan_sections

    assert "interaction_membership" not in [s.name for s, _ in plan_sections(AuditOptions())]
    assert [s.name for s, _ in plan_sections(AuditOptions(sections=["interaction_membership"]))] == ["interaction_membership"]


def test_logged_lists_shorter_than_k_are_refused_not_skipped():
    from recprivacy.errors import DataError

    popular = FRAME["item_id"].value_counts().index.to_numpy()[:5]
    lists = pd.DataFrame([(u, r + 1, i) for u in USERS for r, i in enumerate(popular)], columns=["user_id", "rank", "item_id"])
    audit = Audit(Target.from_lists(lists), FRAME, MEMBERS, NEVER, test=TEST, sections=["interaction_membership"],
                  options={"interaction_membership": {"k": 20}}, noise="simulation")  # fmt: skip
    with pytest.raises(DataError, match="a served list of 5 items; expected at least k = 20"):
        audit.run()
