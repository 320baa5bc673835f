"""Which defence applies to which attack (issue 32), and the canaries' bookkeeping."""

from __future__ import annotations

import numpy as np

from recprivacy.data.interactions import Interactions
from recprivacy.experiments.matrix.cells import Canaries
from recprivacy.experiments.matrix.plan import ATTACKS, DefenceSpec, not_applicable

BY_KEY = {a.key: a for a in ATTACKS}


def test_a_training_defence_applies_to_every_central_attack_and_a_list_defence_only_to_list_attacks():
    dp = DefenceSpec("dp", "DP training", "model training")
    lists = DefenceSpec("pop", "popularity randomization", "lists")
    assert [a.key for a in ATTACKS if not_applicable(a, dp) is not None] == ["recovery", "uploads"]
    assert not_applicable(BY_KEY["attribute"], lists) is None
    why = not_applicable(BY_KEY["canaries"], lists)
    assert why.startswith("does not apply: popularity randomization changes lists; the attack observes model training")
    assert not_applicable(BY_KEY["attribute"], DefenceSpec("exp", "exposure perturbation", "exposures")) is not None
    assert all(not_applicable(a, DefenceSpec("none", "no defence", "nothing")) is None for a in ATTACKS)


def test_the_uploads_column_takes_the_no_defence_row_and_upload_defences_only():
    uploads = BY_KEY["uploads"]
    apm = DefenceSpec("uploads_apm", "APM", "uploads")
    assert uploads.observes == "uploads" and uploads.metric == "weighted F1"
    assert not_applicable(uploads, apm) is None
    assert not_applicable(uploads, DefenceSpec("none", "no defence", "nothing")) is None
    for protects in ("model training", "lists", "exposures"):
        why = not_applicable(uploads, DefenceSpec("d", "DPMF", protects))
        assert why == f"does not apply: DPMF changes {protects}; the attack observes uploads"
    # an upload defence changes nothing a centrally trained target serves
    assert [a.key for a in ATTACKS if not_applicable(a, apm) is None] == ["uploads"]


def test_the_uploads_options_pass_only_the_federated_training_and_defence_keys():
    import pytest

    from recprivacy.config import validate_options
    from recprivacy.errors import ConfigError
    from recprivacy.experiments.matrix.options import MatrixOptions

    options = validate_options(MatrixOptions, {"uploads": {"rounds": 3, "federated": {"local_epochs": 1, "eps_min": 10}}})
    federated = options.uploads.study_options()
    assert (federated.rounds, federated.local_epochs, federated.eps_min, federated.eval_every) == (3, 1, 10.0, 3)
    assert federated.attack_clients == "all" and federated.engine == "simulator" and federated.dims == [32]
    with pytest.raises(ConfigError, match=r"study_options\.uploads\.federated.*unknown keys \['rounds'\]"):
        validate_options(MatrixOptions, {"uploads": {"federated": {"rounds": 3}}})
    with pytest.raises(ConfigError, match=r"study_options\.uploads\.federated"):
        validate_options(MatrixOptions, {"uploads": {"federated": {"lr": -1}}})


def _toy() -> Interactions:
    users = np.repeat(np.arange(20), 5)
    items = (np.arange(100) * 7) % 50
    return Interactions(users=users, items=items, n_users=20, n_items=50, ratings=np.full(100, 3.0),
                        timestamps=np.arange(100))  # fmt: skip


def test_canaries_are_fresh_pairs_and_only_the_included_are_planted():
    data = _toy()
    c = Canaries.draw(data, np.arange(20), 60, seed=1)
    seen = data.to_csr()
    assert len(c.users) == 60 and (np.asarray(seen[c.users, c.items]).ravel() == 0).all()
    assert len(np.unique(c.users * 50 + c.items)) == 60
    planted = c.plant(data)
    assert len(planted) == len(data) + int(c.included.sum())
    assert planted.ratings.max() == 3.0 and planted.timestamps[len(data):].min() > data.timestamps.max()
    added = set(zip(planted.users[len(data):].tolist(), planted.items[len(data):].tolist()))
    assert added == set(zip(c.users[c.included].tolist(), c.items[c.included].tolist()))


def test_canary_score_is_the_items_closeness_to_the_users_history():
    data = Interactions(users=np.array([0, 0, 1]), items=np.array([0, 1, 2]), n_users=2, n_items=4)
    factors = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    c = Canaries(np.array([0, 1]), np.array([3, 3]), np.array([True, False]))
    # user 0's profile (1, 0), user 1's (0, 1): item 3 scores 1 with each
    assert c.scores(factors, data).tolist() == [1.0, 1.0]
    c = Canaries(np.array([0, 1]), np.array([2, 0]), np.array([True, False]))
    assert c.scores(factors, data).tolist() == [0.0, 0.0]


def test_the_shipped_config_validates_and_matches_the_cli_defaults():
    from pathlib import Path

    from recprivacy.config import load_config, validate_options
    from recprivacy.experiments.matrix import default_matrix_config
    from recprivacy.experiments.matrix.options import MatrixOptions

    config = load_config(Path(__file__).resolve().parents[2] / "configs" / "matrix" / "ml-100k.yaml")
    assert config.study == "matrix" and config.noise == "simulation"
    options = validate_options(MatrixOptions, config.study_options, ("study_options",))
    assert options == MatrixOptions()  # `recprivacy matrix` runs the same settings
    assert default_matrix_config()["model"] == {"name": config.model.name, "params": dict(config.model.params)}
