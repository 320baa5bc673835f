"""``recprivacy devices``: a federated study's device files for SuperNodes on other machines,
and the study joining that federation at its address (docs/flower.md, "Across machines").

The devices' machine is a network namespace of this one (``device_host``): its SuperNodes run
the documented ``flower-supernode --node-config 'data="user-<u>.npz"'`` with the command's files
and reach the SuperLink over a veth pair; the study only joins them
(``study_options.superlink``). Joined, it gives the in-process simulator's numbers, and devices
written from another config are refused by the server with one line instead of training on the
wrong data."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import warnings
from collections.abc import Iterator
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


@pytest.fixture
def device_host() -> Iterator[tuple[list[str], str]]:
    """Another host for the devices: a network namespace joined to this one by a veth pair, so
    the SuperNodes reach the SuperLink over a network interface (they cannot reach this
    machine's loopback). Yields the command prefix that runs a program there and the
    SuperLink's address as the devices see it; without the rights to make one (root, iproute2),
    the devices run on this host's loopback, with a warning."""
    name, net = f"rp{os.getpid()}", f"10.231.{os.getpid() % 250}"  # one namespace and subnet per test process
    made = subprocess.run(["ip", "netns", "add", name], capture_output=True, check=False) if shutil.which("ip") else None
    if made is None or made.returncode != 0:
        warnings.warn("no network namespace (needs root and iproute2): the devices run on this host's loopback")
        yield [], "127.0.0.1"
        return
    try:
        for command in (f"link add {name}a type veth peer name {name}b", f"link set {name}b netns {name}",
                        f"addr add {net}.1/24 dev {name}a", f"link set {name}a up",
                        f"netns exec {name} ip addr add {net}.2/24 dev {name}b",
                        f"netns exec {name} ip link set {name}b up", f"netns exec {name} ip link set lo up"):
            subprocess.run(["ip", *command.split()], check=True, capture_output=True)
        yield ["ip", "netns", "exec", name], f"{net}.1"
    finally:
        subprocess.run(["ip", "link", "del", f"{name}a"], capture_output=True, check=False)
        subprocess.run(["ip", "netns", "del", name], capture_output=True, check=False)


@pytest.mark.slow
def test_the_recipe_across_hosts_gives_the_simulator_numbers(config: Path, tmp_path: Path, device_host):
    """docs/flower.md, "Across machines": device files from the command, a SuperLink on 0.0.0.0,
    one SuperNode per device on the devices' host started with the documented command, and the
    study joined on the SuperLink's host."""
    pytest.importorskip("flwr", reason="Flower is in the test extra; install recprivacy[test]")
    from recprivacy.federated.flower_app.deployment import LocalFederation, _port, flower_environment, stop_groups

    written = runner.invoke(app, ["devices", str(config), "--out", str(tmp_path / "out")])
    assert written.exit_code == 0, written.output
    files = sorted((tmp_path / "out" / "devices").glob("user-*.npz"))
    simulated = run_cli(config, tmp_path / "sim")[0]
    prefix, server_ip = device_host
    (tmp_path / "fed").mkdir()
    with LocalFederation([], tmp_path / "fed", timeout=120, host="0.0.0.0") as superlink:  # a SuperLink alone
        port = superlink.address.rsplit(":", 1)[1]
        # the devices' host is fresh: ports 9094.. are free there (on loopback, as free as any)
        nodes = [subprocess.Popen([*prefix, "flower-supernode", "--insecure", "--superlink", f"{server_ip}:{port}",
                                   "--port", str(_port() if not prefix else 9094 + i), "--node-config", f'data="{path}"'],
                                  env=flower_environment(tmp_path / "devices-home"), start_new_session=True,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                 for i, path in enumerate(files)]
        try:
            join = ["--engine", "flower", "--set", f"study_options.superlink={superlink.address}"]
            # another split makes other devices: the server refuses them before any training
            other = runner.invoke(app, ["run", str(config), "--out", str(tmp_path / "other"), *join,
                                        "--set", "study_options.holdout=random"])
            one_line_error(other, "4 of 4 hold data of another federation", "recprivacy devices")
            joined = run_cli(config, tmp_path / "joined", *join)[0]
        finally:
            stop_groups(nodes)
    assert joined["metrics"].keys() == simulated["metrics"].keys() and len(simulated["metrics"]) > 10
    for key, value in simulated["metrics"].items():
        assert joined["metrics"][key] == pytest.approx(value, abs=1e-6, nan_ok=True), key  # one seed: sd is NaN


def test_a_study_joined_where_no_superlink_listens_fails_with_flowers_reason(config: Path, tmp_path: Path):
    pytest.importorskip("flwr", reason="Flower is in the test extra; install recprivacy[test]")
    with socket.socket() as closed:  # a port nothing listens on: bound, never listening
        closed.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{closed.getsockname()[1]}"
        result = runner.invoke(app, ["run", str(config), "--out", str(tmp_path / "o"), "--engine", "flower",
                                     "--set", f"study_options.superlink={address}"])
    one_line_error(result, "the run ended without the ServerApp's record (Connection to the SuperLink is unavailable")
