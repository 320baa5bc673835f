"""The ``federated`` study end to end on tiny synthetic data, its bad-input errors, and the
``attribute`` audit section."""

from __future__ import annotations

import pytest

from recprivacy.config import load_config
from recprivacy.errors import ConfigError
from recprivacy.experiments.runner import run_study

TINY = {
    "name": "fed-tiny",
    "study": "federated",
    "seed": 0,
    "dataset": {"name": "synthetic", "options": {"n_users": 60, "n_items": 60, "n_interactions": 1400, "seed": 1}},
    "eval": {"ks": [20]},
    "study_options": {
        "dims": [8], "rounds": 3, "clients_per_round": 0.5, "local_epochs": 1, "eval_every": 2,
        "methods": ["none", "apm"], "zetas": [0.3], "attackers": ["dnn", "knn"],
        "components": ["all", "user"], "attack_seeds": 2,
    },
}  # fmt: skip


def _config(**study_options):
    raw = {**TINY, "study_options": {**TINY["study_options"], **study_options}}
    return load_config(base=raw)


def test_federated_study_renders_the_paper_tables_with_our_numbers():
    results = run_study(_config())
    assert {"table2_aia_f1", "table3_hit", "table4_attackers", "fig4_components"} <= set(results.tables)
    t2 = results.tables["table2_aia_f1"]
    assert len(t2.rows) == 2 * 2  # methods x attributes (one zeta)
    for method in ("none", "apm"):
        assert 0.0 <= results.metrics[f"{method}/d=8/hit@20"] <= 1.0
        f1 = results.metrics[f"{method}/d=8/gender/zeta=0.3/dnn/all/weighted_f1_mean"]
        assert 0.0 <= f1 <= 1.0
    # Pure FedRec: the zero column of ΔE_U reveals the one-hot attribute exactly
    assert results.metrics["none/d=8/gender/zeta=0.3/zero-column/user/accuracy_mean"] == 1.0
    assert results.metrics["none/d=8/gender/zeta=0.3/zero-column/user/zero_update_share"] == 0.0
    assert "zero updates)" in t2.rows[0][6]
    assert results.metrics["apm/d=8/epsilon_basic_composition"] > 1e3
    privacy = results.tables["privacy"]  # the default is secure noise, and the statement says so
    assert [row[privacy.columns.index("noise")] for row in privacy.rows] == ["secure: operating-system entropy"]
    assert results.metrics["none/d=8/attack_clients"] == 30  # the attack round samples half the clients
    assert "z-scored over their known users" in results.sections[0].text


def test_raw_attack_inputs_change_the_knn_attack_and_are_stated_in_the_report():
    options = {"methods": ["none"], "attackers": ["knn"], "components": ["all"]}
    zscored, raw = run_study(_config(**options)), run_study(_config(**options, attack_inputs="raw"))
    assert "raw ΔΘ" in raw.sections[0].text and "raw ΔΘ" not in zscored.sections[0].text
    key = "none/d=8/gender/zeta=0.3/knn/all/weighted_f1_mean"
    assert raw.metrics["none/d=8/hit@20"] == zscored.metrics["none/d=8/hit@20"]  # same training
    assert raw.metrics[key] != zscored.metrics[key]  # kNN distances depend on the column scaling


def test_attack_round_can_take_every_client():
    results = run_study(_config(methods=["none"], attackers=["knn"], components=["all"], attack_clients="all"))
    assert results.metrics["none/d=8/attack_clients"] == 60
    assert results.metrics["none/d=8/gender/zeta=0.3/zero-column/user/accuracy_mean"] == 1.0


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"zetas": [1.0]}, "zeta"),
        ({"attributes": ["religion"]}, "attributes"),
        ({"clients_per_round": 500}, "clients_per_round"),
        ({"methods": ["apm"], "eps_min": 0}, "eps_min"),
        ({"methods": ["ldp"], "epsilon": -3}, "epsilon"),
        ({"methods": ["fgerai"], "eps_x": 0}, "eps_x"),
        ({"methods": ["fgerai_nl"], "eps_f": -1}, "eps_f"),
        ({"methods": ["fdpmf"], "eps_dpmf": 0}, "F-DPMF epsilon"),
        ({"attack_inputs": "scaled"}, "attack_inputs: Input should be 'zscore' or 'raw'"),
    ],
)
def test_bad_study_options_are_one_line_config_errors(options, match):
    with pytest.raises(ConfigError, match=match) as err:
        run_study(_config(**options))
    assert "\n" not in str(err.value)


def test_an_attribute_the_dataset_lacks_is_named():
    from recprivacy.data.registry import load_dataset
    from recprivacy.federated.features import attribute_labels

    data = load_dataset("synthetic", n_users=30, n_items=60, n_interactions=700)
    plain = data.with_changes(user_features=data.user_features[["gender"]])
    with pytest.raises(ConfigError, match="has no such user feature; it has \\['gender'\\]"):
        attribute_labels(plain, "age")


def test_attribute_audit_section_reports_a_risk_row():
    config = load_config(base={
        "name": "audit-attr", "study": "audit", "seed": 0,
        "dataset": {"name": "synthetic", "options": {"n_users": 80, "n_items": 60, "n_interactions": 1800}},
        "model": {"name": "popularity"}, "eval": {"ks": [10]},
        "study_options": {"sections": ["attribute"], "attribute": {"k": 10, "attackers": ["knn"], "seeds": 2}},
    })  # fmt: skip
    results = run_study(config)
    risks = results.tables["risk_summary"].rows
    gender = [r[1] for r in risks if r[0] == "attribute inference from top-10 lists (gender)"]
    assert gender == ["balanced accuracy", "accuracy", "weighted F1"]
    assert "attribute-lists" in results.tables


def test_objective_perturbation_baselines_run_in_the_study_with_their_statements():
    results = run_study(_config(methods=["fgerai", "fgerai_nl", "fdpmf"], attackers=["dnn"], components=["all"], rounds=2,
                                holdout="random"))
    for method in ("fgerai", "fgerai_nl", "fdpmf"):
        assert 0.0 <= results.metrics[f"{method}/d=8/hit@20"] <= 1.0
        assert 0.0 <= results.metrics[f"{method}/d=8/gender/zeta=0.3/dnn/all/weighted_f1_mean"] <= 1.0
    # F-GERAI-NL feeds the true one-hot attributes: the zero-column rule still reads them exactly;
    # F-GERAI's k-RR (eps_x = 1) makes the rule read the randomised attribute instead
    assert results.metrics["fgerai_nl/d=8/gender/zeta=0.3/zero-column/user/accuracy_mean"] == 1.0
    assert results.metrics["fgerai/d=8/gender/zeta=0.3/zero-column/user/accuracy_mean"] < 0.95
    assert "fdpmf/d=8/gender/zeta=0.3/zero-column/user/accuracy_mean" not in results.metrics  # MF: no E_U
    assert results.metrics["fdpmf/d=8/epsilon"] == 2 * 40.0
    assert {r[0] for r in results.tables["privacy"].rows} == {"F-GERAI", "F-GERAI-NL", "F-DPMF"}
