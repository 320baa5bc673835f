"""``recprivacy devices``: a federated study's device files for SuperNodes on other machines,
and the study joining that federation at its address (docs/flower.md, "Across machines").

The SuperNodes here are started from the command's files by ``LocalFederation`` (the same
``flower-supernode --node-config 'data="user-<u>.npz"'`` a device owner runs), standing in for
the devices' machines; the study only joins them (``study_options.superlink``). Joined, it gives
the in-process simulator's numbers, and devices written from another config are refused by
the server with one line instead of training on the wrong data."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from test_cli_engine import one_line_error, run_cli, tiny_federated
from typer.testing import CliRunner

from recprivacy.cli import app

runner = CliRunner()


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "fed.yaml"
    path.write_text(tiny_federated(methods=["apm"], max_users=4, zetas=[0.5], attributes=["age"]))
    return path


def test_the_command_writes_one_private_file_per_user_and_a_manifest(config: Path, tmp_path: Path):
    result = runner.invoke(app, ["devices", str(config), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    folder = tmp_path / "out" / "devices"
    manifest = json.loads((folder / "federation.json").read_text())
    assert manifest["users"] == 4 and manifest["files"] == [f"user-{u}.npz" for u in range(4)]
    assert sorted(p.name for p in folder.iterdir()) == sorted([*manifest["files"], "federation.json"])
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert {stat.S_IMODE((folder / f).stat().st_mode) for f in manifest["files"]} == {0o600}
    assert not [p for p in (tmp_path / "out").iterdir() if p.name != "devices"]  # no staging folder left
    assert manifest["federation"] in result.output and "flower-supernode" in result.output
    # nothing is overwritten: the same folder again is refused before any work
    again = runner.invoke(app, ["devices", str(config), "--out", str(tmp_path / "out")])
    one_line_error(again, "already holds devices")


def test_a_study_that_is_not_federated_is_refused(tmp_path: Path):
    (tmp_path / "train.yaml").write_text("study: train\ndataset: {name: synthetic}\n")
    result = runner.invoke(app, ["devices", str(tmp_path / "train.yaml"), "--out", str(tmp_path / "out")])
    one_line_error(result, "devices: expected a federated study", "'train'")
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_a_study_joined_to_supernodes_started_from_the_files_gives_the_simulator_numbers(config: Path, tmp_path: Path):
    pytest.importorskip("flwr", reason="Flower is in the test extra; install recprivacy[test]")
    from recprivacy.federated.flower_app.deployment import LocalFederation

    written = runner.invoke(app, ["devices", str(config), "--out", str(tmp_path / "out")])
    assert written.exit_code == 0, written.output
    files = sorted((tmp_path / "out" / "devices").glob("user-*.npz"))
    simulated = run_cli(config, tmp_path / "sim")[0]
    (tmp_path / "fed").mkdir()
    with LocalFederation(files, tmp_path / "fed", timeout=120) as federation:
        join = ["--engine", "flower", "--set", f"study_options.superlink={federation.address}"]
        # another split makes other devices: the server refuses them before any training
        other = runner.invoke(app, ["run", str(config), "--out", str(tmp_path / "other"), *join,
                                    "--set", "study_options.holdout=random"])
        one_line_error(other, "4 of 4 hold data of another federation", "recprivacy devices")
        joined = run_cli(config, tmp_path / "joined", *join)[0]
    assert joined["config"]["study_options"]["superlink"] == federation.address
    assert joined["metrics"].keys() == simulated["metrics"].keys() and len(simulated["metrics"]) > 10
    for key, value in simulated["metrics"].items():
        assert joined["metrics"][key] == pytest.approx(value, abs=1e-6, nan_ok=True), key  # one seed: sd is NaN


def test_a_study_joined_where_no_superlink_listens_fails_with_flowers_reason(config: Path, tmp_path: Path):
    pytest.importorskip("flwr", reason="Flower is in the test extra; install recprivacy[test]")
    import socket

    with socket.socket() as closed:  # a port nothing listens on: bound, never listening
        closed.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{closed.getsockname()[1]}"
        result = runner.invoke(app, ["run", str(config), "--out", str(tmp_path / "o"), "--engine", "flower",
                                     "--set", f"study_options.superlink={address}"])
    one_line_error(result, "the run ended without the ServerApp's record (Connection to the SuperLink is unavailable")
