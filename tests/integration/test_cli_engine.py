"""``recprivacy run --engine``: the federated study's engine chosen on the command line
(issue 34). The Flower simulation engine gives the in-process simulator's numbers through the
CLI; a wrong engine, or an engine on a study that is not federated, is a one-line error."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from recprivacy.cli import app

runner = CliRunner()

def tiny_federated(**options: object) -> str:
    """A federated study on tiny synthetic data (40 users, seeded simulation noise) as YAML;
    ``options`` override its ``study_options``."""
    study_options = {"rounds": 1, "eval_every": 1, "clients_per_round": 0.5, "dims": [8], "local_epochs": 1,
                     "methods": ["none", "apm"], "zetas": [0.2], "attackers": ["knn"], "attack_seeds": 1,
                     "attack_clients": "all", "attributes": ["gender"]}
    return yaml.safe_dump({"name": "tiny-fed", "study": "federated", "seed": 0, "noise": "simulation",
                           "dataset": {"name": "synthetic", "options": {"n_users": 40, "n_items": 60, "n_interactions": 800}},
                           "eval": {"ks": [10]}, "study_options": {**study_options, **options}})


def run_cli(config: Path, out: Path, *args: str) -> tuple[dict, str]:
    """The run's results and its Markdown report."""
    result = runner.invoke(app, ["run", str(config), "--out", str(out), *args])
    assert result.exit_code == 0, result.output
    (run,) = out.iterdir()
    return json.loads((run / "results.json").read_text()), (run / "report.md").read_text()


def one_line_error(result, *fragments: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert all(fragment in lines[0] for fragment in fragments), lines[0]


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "fed.yaml"
    path.write_text(tiny_federated())
    return path


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="flower-sim needs flwr[simulation]")
@pytest.mark.ray  # Flower's simulation engine starts a local Ray instance
def test_engine_option_runs_the_study_on_flower_with_the_simulator_numbers(tmp_path: Path):
    """The whole study on Flower's simulation engine gives the simulator's numbers: the study's
    only check of ``flower-sim`` (the Coat study's ``flower-sim`` parametrisation in
    ``test_federated_flower.py`` checked the same path and was merged here, issue 49). Two
    rounds, each evaluated, so a round starts from the model the engine aggregated before it."""
    config = tmp_path / "fed.yaml"
    config.write_text(tiny_federated(rounds=2, eval_every=1))
    default, default_report = run_cli(config, tmp_path / "sim")
    flower, flower_report = run_cli(config, tmp_path / "flower", "--engine", "flower-sim")
    assert "with the in-process simulator" in default_report
    assert "with the Flower simulation engine" in flower_report
    assert flower["config"]["study_options"]["engine"] == "flower-sim"
    assert flower["metrics"].keys() == default["metrics"].keys() and len(default["metrics"]) > 10
    for key, value in default["metrics"].items():
        assert flower["metrics"][key] == pytest.approx(value, abs=1e-6, nan_ok=True), key  # one seed: sd is NaN


def test_unknown_engine_is_a_one_line_error(config: Path, tmp_path: Path):
    result = runner.invoke(app, ["run", str(config), "--out", str(tmp_path / "o"), "--engine", "grpc"])
    one_line_error(result, "engine", "flower-sim")
    assert not (tmp_path / "o").exists()


def test_engine_on_a_study_that_is_not_federated_is_refused(tmp_path: Path):
    config = tmp_path / "train.yaml"
    config.write_text("study: train\ndataset: {name: synthetic}\n")
    result = runner.invoke(app, ["run", str(config), "--out", str(tmp_path / "o"), "--engine", "flower"])
    one_line_error(result, "--engine: expected a federated study", "'train'")
    assert not (tmp_path / "o").exists()
