"""Membership protocols, trivial baselines and calibrated attacks on hand-made examples."""

import numpy as np
import pytest

from recprivacy.experiments.membership.lab import AttackSpec, LabOptions, MembershipLab
from recprivacy.attacks.membership.calibrated import (
    lira_offline_scores,
    lira_scores,
    reference_assignment,
    rmia_log_ratio,
    rmia_scores,
)
from recprivacy.attacks.membership.list_statistics import feature_norm, mean_popularity, popular_overlap
from recprivacy.attacks.membership.protocols import served_histories
from recprivacy.data.synthetic import make_synthetic
from recprivacy.errors import ConfigError
from recprivacy.experiments.membership.audit import ServedRecommender
from recprivacy.experiments.membership.compare import estimates
from recprivacy.experiments.target import Target


class Spy:
    """A target that serves any history and records every history it was asked about."""

    def __init__(self, item_ids: np.ndarray) -> None:
        self.item_ids, self.asked = item_ids, []

    def recommend(self, histories: list[list], k: int) -> list[list]:
        self.asked.append([list(h) for h in histories])
        return [list(self.item_ids[:k]) for _ in histories]


def test_served_protocol_queries_the_target_for_non_members_with_their_training_share():
    data = make_synthetic(n_users=120, n_items=80, n_interactions=3600, seed=0)
    spy = Spy(data.item_ids)
    lab = MembershipLab({"syn": data}, LabOptions(min_interactions=5), seed=0,
                        models={("syn", "target", "spy"): ServedRecommender(Target.from_model(spy), data)})
    group = lab.group("syn", "target")
    lists = lab.nonmember_lists("syn", "target", "spy", 5, defended=False, protocol="served")
    assert lists.shape == (len(group.nonmembers), 5)
    asked = spy.asked[-1]
    assert len(asked) == len(group.nonmembers)
    history = served_histories(group)
    for user, items in zip(group.nonmembers, asked):
        expected = history.item_ids[history.items[history.users == user]]
        assert sorted(items) == sorted(expected)
        # the held-out interaction is not given to the target, exactly as for members
        held = group.heldout.item_ids[group.heldout.items[group.heldout.users == user]]
        assert not set(held) & set(items) and len(items) == int((group.data.users == user).sum()) - 1
    # the paper protocol does not ask the target: every non-member gets the same popular list
    calls = len(spy.asked)
    popular = lab.nonmember_lists("syn", "target", "spy", 5, defended=False, protocol="paper")
    assert len(spy.asked) == calls and (popular == popular[0]).all()


def test_defence_needs_the_paper_protocol():
    with pytest.raises(ConfigError, match="protocol='paper'"):
        AttackSpec(("d", "lfm"), ("d", "lfm"), defense="both")


def test_trivial_baselines_by_hand():
    counts = np.array([5.0, 3.0, 1.0, 0.0])
    lists = np.array([[0, 1], [2, 3], [1, 2]])
    assert popular_overlap(lists, counts).tolist() == [-2.0, 0.0, -1.0]  # top-2 popular items: {0, 1}
    assert mean_popularity(lists, counts).tolist() == [-4.0, -0.5, -2.0]
    assert feature_norm(np.array([[3.0, 4.0], [0.0, 0.0]])).tolist() == [-5.0, 0.0]


def test_tpr_below_one_over_n_is_not_resolvable():
    labels = np.array([1] * 45 + [0] * 45)
    scores = np.random.default_rng(0).random(90) + labels
    e = estimates(labels, scores)
    assert str(e["tpr@1%fpr"]) == "not resolvable with n = 45" and str(e["tpr@0.1%fpr"]) == "not resolvable with n = 45"
    assert e["auc"].low <= e["auc"].value <= e["auc"].high


def test_lira_on_known_gaussians():
    refs = np.array([[1.0, 3.0, 0.0, 2.0]])
    in_mask = np.array([[True, True, False, False]])
    # IN mean 2, OUT mean 1, pooled sd sqrt(2) on both sides; t = 2:
    # log N(2; 2, 2) - log N(2; 1, 2) = 0 - (-(1^2) / (2 * 2)) = 0.25
    assert lira_scores(np.array([2.0]), refs, in_mask) == pytest.approx([0.25])
    assert lira_offline_scores(np.array([2.0]), refs, in_mask) == pytest.approx([1 / np.sqrt(2)])
    # two statistics add their log-likelihood ratios
    both = np.stack([refs, refs], axis=2)
    assert lira_scores(np.array([[2.0, 2.0]]), both, in_mask) == pytest.approx([0.5])


def test_rmia_ratio_and_population_share():
    # p(x) = mean(exp(0), exp(log 3)) = 2, so log LR = t - log 2
    assert rmia_log_ratio(np.array([1.0]), np.array([[0.0, np.log(3.0)]])) == pytest.approx([1 - np.log(2)])
    zero = np.zeros((1, 2))
    population = np.array([1.0, -1.0])
    # log LR(x) = 0; population log LR = (1, -1): half of them have LR(x) / LR(z) >= 1
    share = {"break_ties": False}
    assert rmia_scores(np.array([0.0]), zero, population, np.zeros((2, 2)), **share) == pytest.approx([0.5])
    assert rmia_scores(np.array([2.0]), zero, population, np.zeros((2, 2)), **share) == pytest.approx([1.0])


def test_rmia_breaks_ties_inside_a_step_without_crossing_steps():
    # targets 2 and 3 both beat the whole population (share 1.0); target 0 beats half of it
    targets, refs = np.array([0.0, 2.0, 3.0]), np.zeros((3, 2))
    scores = rmia_scores(targets, refs, np.array([1.0, -1.0]), np.zeros((2, 2)))
    assert scores[2] > scores[1] > scores[0]  # the tie at 1.0 is ordered by LR(u)
    assert scores[0] < 0.5 + 0.25 <= scores[1]  # the added term stays under half a step (1/2 here)


def test_every_user_is_in_the_same_number_of_references():
    mask = reference_assignment(50, 8, seed=0, share=0.25)
    assert (mask.sum(axis=1) == 2).all()
    assert mask.sum() == 100


def test_references_with_a_filler_train_on_the_pool_share_and_every_filler_user():
    """``reference_lists(filler=...)``: each reference trains on its IN half of the pool plus all
    the filler users (the target's members the attack leaves out), never on an OUT pool user."""
    from recprivacy.attacks.membership.references import reference_lists
    from recprivacy.models import make_model

    data = make_synthetic(n_users=60, n_items=100, n_interactions=1800, seed=0)
    pool, rest = np.arange(20), np.arange(20, 60)
    seen = []

    def fit(train, index):
        seen.append(set(np.unique(train.users).tolist()))
        return make_model("popularity").fit(train)

    refs = reference_lists(fit, data.subset_users(pool), pool, 4, 5, ("served",), seed=0, filler=data.subset_users(rest))
    for j, users in enumerate(seen):
        assert users == set(pool[refs.in_mask[:, j]].tolist()) | set(rest.tolist())
