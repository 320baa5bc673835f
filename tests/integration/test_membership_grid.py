"""The membership lab end to end on small synthetic data: every recommender is trained once
for a whole grid, the attack beats a blind guess, and the defence changes only non-members'
lists."""

import numpy as np
import pytest

from recprivacy.experiments.membership.lab import AttackSpec, LabOptions, MembershipLab
from recprivacy.data.synthetic import make_synthetic
from recprivacy.defenses.popularity_randomization import PopularityRandomization
from recprivacy.errors import ConfigError

ALGORITHMS = ("itemcf", "lfm", "neumf")
FAST = {"lfm": {"n_epochs": 10}, "neumf": {"n_epochs": 3}}


@pytest.fixture(scope="module")
def lab():
    data = {"syn": make_synthetic(n_users=240, n_items=150, n_interactions=12000, seed=0)}
    options = LabOptions(model_params=FAST, attack_params={"mlp": {"n_epochs": 10}})
    return MembershipLab(data, options, seed=0, randomize=lambda r, n, k, s: PopularityRandomization(0.2, s).lists(r, n, k))


def test_assumption_two_grid_trains_each_recommender_once(lab):
    specs = [AttackSpec(("syn", a), ("syn", b), k=20, n_factors=16, protocol="paper") for a in ALGORITHMS for b in ALGORITHMS]
    outcomes = lab.run_all(specs)
    assert [o.spec.code for o in outcomes][:3] == ["SISI", "SISL", "SISN"]
    models = [key for key in lab._cache if key[0] == "model"]
    assert len(models) == 6  # 3 algorithms x (shadow, target)
    attacks = [key for key in lab._cache if key[0] == "attack"]
    assert len(attacks) == 3  # one per shadow algorithm
    for outcome in outcomes:
        assert outcome.report["auc"] > 0.75, outcome.spec.code
        assert outcome.report["n_pos"] == len(lab.partition("syn").target.members)
    assert {"partition", "item_vectors", "fit:itemcf", "fit:lfm", "fit:neumf", "lists", "features",
            "attack_fit", "attack_score"} <= set(lab.timings)


def test_defence_changes_only_non_member_lists(lab):
    plain = lab.lists("syn", "target", "itemcf", 20, defended=False)
    defended = lab.lists("syn", "target", "itemcf", 20, defended=True)
    n_members = len(lab.partition("syn").target.members)
    np.testing.assert_array_equal(plain[:n_members], defended[:n_members])
    assert (plain[n_members:] == plain[n_members]).all()  # everyone gets the same popular list
    assert len({tuple(r) for r in defended[n_members:].tolist()}) > 1
    hr = lab.hit_rates("syn", "target", "itemcf", 20, defended=True)
    assert hr["members"] == lab.hit_rates("syn", "target", "itemcf", 20)["members"]


def test_sweeps_reuse_lists_and_other_settings_run(lab):
    # the shadow and target this sweep uses, trained here if no earlier test (on this worker) did
    lab.run(AttackSpec(("syn", "itemcf"), ("syn", "itemcf"), k=20, n_factors=16, protocol="paper"))
    before = sum(key[0] == "model" for key in lab._cache)
    for k in (5, 10):
        lab.run(AttackSpec(("syn", "itemcf"), ("syn", "itemcf"), k=k, n_factors=16, protocol="paper"))
    assert sum(key[0] == "model" for key in lab._cache) == before
    kmeans = lab.run(AttackSpec(("syn", "neumf"), ("syn", "neumf"), k=20, n_factors=16, protocol="paper", attack="kmeans"))
    assert kmeans.report["auc_aligned"] >= 0.5
    for spec in (
        AttackSpec(("syn", "lfm"), ("syn", "lfm"), k=20, n_factors=16, protocol="paper", defense="both"),
        AttackSpec(("syn", "lfm"), ("syn", "lfm"), k=20, n_factors=16, protocol="paper", weighting="uniform", feature="similarity"),
        AttackSpec(("syn", "lfm"), ("syn", "lfm"), k=20, n_factors=16, protocol="paper", shadow_fraction=0.7),
    ):
        assert 0.0 <= lab.run(spec).report["auc"] <= 1.0


def test_unknown_dataset_and_defence_scope(lab):
    with pytest.raises(ConfigError, match="dataset 'ml-1m' is not loaded"):
        lab.run(AttackSpec(("ml-1m", "lfm"), ("syn", "lfm")))
    with pytest.raises(ConfigError, match="defense"):
        AttackSpec(("syn", "lfm"), ("syn", "lfm"), defense="shadow")
