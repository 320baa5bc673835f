"""Config validation: one-line errors naming file, line, key and the allowed keys/values."""

from __future__ import annotations

from pathlib import Path

import pytest

from recprivacy.config import Config, StudyOptions, load_config, validate_options
from recprivacy.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, text: str, name: str = "study.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def error_of(*args, **kwargs) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(*args, **kwargs)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_defaults_and_name_from_file_stem(tmp_path):
    config = load_config(write(tmp_path, "study: train\n", "my study.yaml"))
    assert config.name == "my-study"
    assert config.dataset.name == "synthetic"
    assert config.dataset.split.ratios == (0.8, 0.1, 0.1)
    assert config.eval.ks == [10, 20]
    assert config.output.dir == "runs"
    assert load_config(base={"name": "x"}).model_dump() == Config(name="x").model_dump()


def test_typo_at_top_level_names_key_line_and_allowed_keys(tmp_path):
    path = write(tmp_path, "name: a\nmodle:\n  name: bpr\n")
    assert error_of(path) == (
        f"{path}:2: unknown key 'modle' in the top level; allowed keys: "
        "dataset, eval, model, name, noise, output, seed, study, study_options, threads"
    )


def test_nested_typo_names_section_and_its_keys(tmp_path):
    path = write(tmp_path, "dataset:\n  name: synthetic\n  split:\n    kind: random\n    ratio: [0.5, 0.5]\n")
    assert error_of(path) == (
        f"{path}:5: unknown key 'ratio' in dataset.split; allowed keys: kind, leave_last, ratios"
    )


def test_bad_enumeration_lists_allowed_values(tmp_path):
    path = write(tmp_path, "dataset:\n  split: {kind: randm}\n")
    message = error_of(path)
    assert message.startswith(f"{path}:2: dataset.split.kind: ")
    assert "'random' or 'temporal'" in message and "(got 'randm')" in message


def test_split_rules(tmp_path):
    assert "summing to 1" in error_of(write(tmp_path, "dataset: {split: {ratios: [0.5, 0.3, 0.1]}}\n"))
    assert "leave_last applies only to kind: temporal" in error_of(write(tmp_path, "dataset: {split: {leave_last: 1}}\n"))
    config = load_config(write(tmp_path, "dataset: {split: {kind: temporal, leave_last: 2}, preprocessing: {kcore: [5, 3]}}\n"))
    assert config.dataset.split.leave_last == 2
    assert config.dataset.preprocessing.kcore == (5, 3)


def test_model_is_checked_by_constructing_it(tmp_path):
    unknown = error_of(write(tmp_path, "model: {name: nosuchmodel}\n"))
    assert unknown.startswith(f"{tmp_path / 'study.yaml'}:1: model: ") and "nosuchmodel" in unknown
    bad_value = error_of(write(tmp_path, "model:\n  name: bpr\n  params: {n_factors: 0}\n"))
    assert "n_factors" in bad_value and "positive integer" in bad_value
    assert "n_factorz" in error_of(write(tmp_path, "model: {name: bpr, params: {n_factorz: 8}}\n"))


def test_overrides_parse_yaml_values():
    config = load_config(
        base={"name": "x"},
        overrides=["model.params.n_epochs=3", "eval.ks=[5, 50]", "dataset.split.kind=temporal", "dataset.options.n_users=100", "seed=7"],
    )
    assert config.model.params == {"n_epochs": 3}
    assert config.eval.ks == [5, 50]
    assert config.dataset.split.kind == "temporal"
    assert config.dataset.options == {"n_users": 100}
    assert config.seed == 7


def test_override_errors_name_the_override():
    assert error_of(overrides=["dataset.nmae=ml-100k"]) == (
        "--set dataset.nmae=ml-100k: unknown key 'nmae' in dataset; allowed keys: data_dir, name, options, preprocessing, split"
    )
    assert error_of(overrides=["seed.x=1"]) == "--set seed.x=1: seed is a value, not a section"
    assert error_of(overrides=["seed"]).startswith("--set seed: expected KEY=VALUE")
    message = error_of(overrides=["seed=abc"])
    assert message.startswith("--set seed=abc: seed: ") and "(got 'abc')" in message
    assert error_of(overrides=["eval.ks=[0]"]).startswith("--set eval.ks=[0]: eval.ks.0: ")


def test_file_problems_name_the_path(tmp_path):
    assert error_of(tmp_path / "none.yaml") == f"{tmp_path / 'none.yaml'}: config file not found"
    bad = write(tmp_path, "name: a\ndataset: [unclosed\n")
    assert error_of(bad).startswith(f"{bad}:3: invalid YAML: ")
    listing = write(tmp_path, "- a\n- b\n")
    assert error_of(listing).endswith("expected a mapping of sections (name, study, dataset, model, ...), got list")
    assert "expected a YAML config file" in error_of(tmp_path)


def test_study_options_validated_by_the_study_model():
    class MembershipOptions(StudyOptions):
        n_shadow: int = 2

    assert validate_options(MembershipOptions, {"n_shadow": 4}).n_shadow == 4
    with pytest.raises(ConfigError) as info:
        validate_options(MembershipOptions, {"n_shadows": 4}, ("study_options", "membership"))
    assert str(info.value) == "config: unknown key 'n_shadows' in study_options.membership; allowed keys: n_shadow"


def test_to_yaml_round_trips(tmp_path):
    config = load_config(base={"name": "x", "model": {"name": "bpr", "params": {"n_epochs": 2}}}, overrides=["eval.ks=[3]"])
    again = load_config(write(tmp_path, config.to_yaml()))
    assert again == config


@pytest.mark.parametrize("path", sorted((REPO / "configs").rglob("*.yaml")), ids=lambda p: p.relative_to(REPO).as_posix())
def test_shipped_configs_are_valid(path):
    from recprivacy.experiments.runner import get_study

    config = load_config(path)
    assert get_study(config.study).name == config.study


def test_noise_defaults_to_secure_and_names_the_allowed_modes(tmp_path):
    config = load_config(write(tmp_path, "study: train\n"))
    assert config.noise == "secure" and config.noise_source().secure
    simulated = load_config(write(tmp_path, "study: train\nseed: 4\nnoise: simulation\n"))
    assert simulated.noise_source().generator(1).random() == load_config(base={"seed": 4, "noise": "simulation"}).noise_source().generator(1).random()
    message = error_of(write(tmp_path, "name: a\nnoise: seeded\n"))
    assert message.startswith(f"{tmp_path / 'study.yaml'}:2: noise:") and "'secure'" in message and "'simulation'" in message


@pytest.mark.parametrize("study", ["dipsgnn", "exposure", "federated", "membership", "upcsdg"])
def test_paper_reproductions_ask_for_simulation_noise(study):
    """The shipped studies that reproduce papers are experiments: each says so explicitly."""
    for path in sorted((REPO / "configs" / study).glob("*.yaml")):
        assert "\nnoise: simulation" in path.read_text(), path.name
        assert load_config(path).noise == "simulation"
