"""The config a run saves is the resolved one (issue 48): every study option it ran with,
defaults filled in through the study's options model, and resolving it again changes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from recprivacy.config import Config, default_audit_config, load_config
from recprivacy.errors import ConfigError
from recprivacy.experiments import studies
from recprivacy.experiments.matrix import default_matrix_config
from recprivacy.experiments.runner import resolve_config

CONFIGS = sorted(Path(__file__).resolve().parents[2].glob("configs/**/*.yaml"))


def _saved_and_loaded(config: Config) -> Config:
    """What a run saves in config.yaml, read back as the next run would."""
    return load_config(base=yaml.safe_load(resolve_config(config).to_yaml()))


@pytest.mark.parametrize("name", sorted(studies()))
def test_every_study_resolves_its_defaults_and_a_resolved_config_stays_as_it_is(name):
    study = studies()[name]
    resolved = resolve_config(Config(study=name))
    assert set(resolved.study_options) >= set(study.options.model_fields), resolved.study_options
    assert _saved_and_loaded(resolved).to_dict() == resolved.to_dict()


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: str(p.relative_to(p.parents[1])))
def test_every_shipped_config_resolves_to_a_fixed_point(path):
    resolved = resolve_config(load_config(path))
    assert _saved_and_loaded(resolved).to_dict() == resolved.to_dict()


def test_the_matrix_saves_its_options_with_defaults_and_keeps_what_was_set():
    resolved = resolve_config(load_config(base=default_matrix_config(), overrides=["study_options.seeds=2"]))
    options = resolved.study_options
    assert options["seeds"] == 2 and options["holdout_users"] == 0.2 and options["dpmf_epsilons"] == [1.0, 5.0]
    assert options["membership"] and options["uploads"]["defences"][0] == "apm"


def test_the_audit_saves_each_planned_section_with_its_defaults():
    base = default_audit_config()
    options = resolve_config(load_config(base=base, overrides=["study_options.membership.k=50"])).study_options
    assert options["sections"] is None and options["membership"]["k"] == 50
    assert options["membership"]["n_references"] == 8 and {"utility", "exposure", "attribute"} <= set(options)
    chosen = resolve_config(load_config(base=base, overrides=["study_options.sections=[utility]"])).study_options
    assert set(chosen) == {"sections", "holdout_users", "executor", "ray_address", "utility"}
    assert chosen["executor"] == "inprocess" and chosen["ray_address"] is None  # where the references train (issue 47)


def test_a_bad_option_is_still_refused_when_resolving():
    with pytest.raises(ConfigError, match="study_options.membership"):
        resolve_config(load_config(base=default_audit_config(), overrides=["study_options.membership.k=0"]))


def test_the_model_is_saved_with_every_constructor_argument_and_the_given_ones_kept():
    config = load_config(base=default_audit_config(), overrides=["model.params.n_factors=8"])
    params = resolve_config(config).model.params
    assert params["n_factors"] == 8 and params["n_epochs"] == 200 and params["lr"] == 0.05
    assert "seed" not in params  # the run's seed sets it


def test_a_model_seed_given_in_the_config_is_kept():
    config = load_config(base=default_audit_config(), overrides=["model.params.seed=7"])
    assert resolve_config(config).model.params["seed"] == 7


@pytest.mark.parametrize("name", ["dipsgnn", "membership", "federated"])
def test_a_study_whose_methods_set_the_backbone_keeps_the_model_params_as_overrides(name):
    # DIPSGNN's methods choose the SR-GNN's adjacency (EdgeRand needs 'count'): a written-out default would override it
    config = Config(study=name, model={"name": "srgnn" if name == "dipsgnn" else "bpr", "params": {"hidden": 8}
                                       if name == "dipsgnn" else {}})
    assert resolve_config(config).model.params == config.model.params
