"""The released-data channel of the matrix (issue 32): which defence applies to the recovery
column, the recovery cell on a hand-made release, and the membership lab's defended shadows."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from recprivacy.experiments.membership.lab import LabOptions, MembershipLab
from recprivacy.data.interactions import Interactions
from recprivacy.data.synthetic import make_synthetic
from recprivacy.defenses.upcsdg import FrozenEmbeddings, PrivacyPreferences
from recprivacy.defenses.upcsdg.release import build_release
from recprivacy.errors import ConfigError
from recprivacy.experiments.matrix.plan import ATTACKS, DefenceSpec, not_applicable
from recprivacy.experiments.matrix.release import RAW_RELEASE, Published, ReleaseOptions, recovery_cell
from recprivacy.experiments.matrix.world import World
from recprivacy.models import make_model
from recprivacy.privacy.accounting import PrivacyStatement

BY_KEY = {a.key: a for a in ATTACKS}
UPCSDG = DefenceSpec("upcsdg", "UPC-SDG", "released data")


def test_a_release_defence_applies_to_every_central_attack_and_only_it_to_the_recovery_column():
    assert [a.key for a in ATTACKS if not_applicable(a, UPCSDG) is not None] == ["uploads"]
    for protects in ("model training", "lists", "exposures", "uploads"):
        why = not_applicable(BY_KEY["recovery"], DefenceSpec("d", "D", protects))
        assert why == f"does not apply: D changes {protects}; the attack observes released data"


def _release(n: int = 12):
    """``n`` (even) users, alternately holding items {0, 2} (item 0 replaced by 4) and {1, 3} (item 1 by 5)."""
    users = np.repeat(np.arange(n), 2)
    items = np.array([0, 2, 1, 3] * (n // 2))
    original = Interactions(users=users, items=items, n_users=n, n_items=6)
    replaced_users = np.arange(n)
    originals, replacements = np.array([0, 1] * (n // 2)), np.array([4, 5] * (n // 2))
    prefs = PrivacyPreferences.uniform(n, 0.5, 0.5)
    sims = np.full(n, 0.4)
    return build_release(original, replaced_users, originals, replacements, np.zeros(n, dtype=np.int64), prefs, sims, sims, {})


def _world(release, frozen: np.ndarray, adaptive: np.ndarray) -> World:
    n_users = release.data.n_users
    features = FrozenEmbeddings(torch.zeros(n_users, frozen.shape[1]), torch.from_numpy(frozen).float(), "hand-made")
    model = type("Released", (), {"item_factors_": torch.from_numpy(adaptive).float()})()
    return World(UPCSDG, model, PrivacyStatement.no_guarantee("u", "s", "r"), release=Published(release, features))


def test_recovery_cell_judges_both_attackers_against_the_popularity_guess_on_the_same_k():
    e = np.eye(4)
    # frozen: each replacement sits on its original (4 = 0, 5 = 1), so the blind attacker's top 1
    # is the original; adaptive: the replacements sit on the *other* original, so its top 1 is wrong
    frozen = np.stack([e[0], e[1], e[2], e[3], e[0], e[1]])
    adaptive = np.stack([e[0], e[1], e[2], e[3], e[1], e[0]])
    cell = recovery_cell(ReleaseOptions(attack_k=1), _world(_release(), frozen, adaptive))
    # the popularity guess ranks the released items 3 / 5 (count 4) above the originals 0 / 1 (count 0)
    assert (cell.frozen.value.value, cell.frozen.baseline, cell.adaptive.value.value) == (1.0, 0.0, 0.0)
    assert cell.frozen.baseline_name == "popularity guess of the release, 1 items"
    assert cell.frozen.verdict.label == "leaks" and cell.adaptive.verdict.label != "leaks"
    assert cell.best is cell.frozen and cell.frozen.margin.low == 1.0
    assert (cell.frozen.sample.positives, cell.frozen.sample.negatives) == (12, None)  # users with a replaced item
    # fewer than 10 users with a replaced item: too few to judge
    few = recovery_cell(ReleaseOptions(attack_k=1), _world(_release(8), frozen, adaptive))
    assert few.frozen.value.value == 1.0 and few.frozen.verdict.label == "not enough users"


def test_recovery_cell_of_the_raw_release_and_of_a_row_without_a_release():
    e = np.eye(6)
    world = _world(_release(), e, e)
    assert recovery_cell(ReleaseOptions(), world, undefended=True).reason == RAW_RELEASE
    assert RAW_RELEASE.startswith("does not apply: ") and "nothing is replaced" in RAW_RELEASE
    dp = World(DefenceSpec("dp", "DP", "model training"), world.model, world.statement)
    assert recovery_cell(ReleaseOptions(), dp).reason.endswith("the attack observes released data")
    bare = World(UPCSDG, world.model, world.statement)
    assert recovery_cell(ReleaseOptions(), bare).reason == "not measured: the row published no synthetic release"


def test_release_options_refuse_a_cap_outside_the_unit_interval_and_unknown_generator_settings():
    with pytest.raises(ValueError, match="more_gammas"):
        ReleaseOptions(more_gammas=[0.5, 1.5])
    assert ReleaseOptions(gamma=0.3, more_gammas=[0.9]).gammas == [0.3, 0.9]
    with pytest.raises((ValueError, ConfigError), match="no_such"):
        ReleaseOptions(generator={"no_such": 1})


def test_the_lab_trains_shadow_and_target_of_an_algorithm_with_a_factory_by_its_factory():
    data = make_synthetic(n_users=120, n_items=80, n_interactions=3600, seed=0)
    calls = []

    def defended(train: Interactions, seed: int):
        calls.append((len(train), seed))
        return make_model("popularity").fit(train)

    lab = MembershipLab({"syn": data}, LabOptions(min_interactions=5), seed=0, factories={"defended": defended})
    shadow = lab.recommender("syn", "shadow", "defended")
    assert calls == [(len(lab.group("syn", "shadow").train), lab._sub_seed("model", "syn", "shadow", "defended", 1.0))]
    assert lab.recommender("syn", "shadow", "defended") is shadow and len(calls) == 1  # cached
    lab.recommender("syn", "target", "defended")
    assert len(calls) == 2 and calls[1][0] == len(lab.group("syn", "target").train)
    assert type(lab.recommender("syn", "shadow", "popularity")).__name__ == "Popularity" and len(calls) == 2
