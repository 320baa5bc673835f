"""The Flower engines reproduce the in-process simulator (seeded ``noise: simulation``):
the protocol core on tiny data, the whole study on a Coat subset, and a SuperNode killed
mid-run ends the run with a clear error instead of a hang, leaving no process behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from recprivacy.data.interactions import Interactions
from recprivacy.defenses.apm import make_defence
from recprivacy.defenses.federated_dp import BASELINES, make_baseline
from recprivacy.errors import RecPrivacyError
from recprivacy.federated.features import user_features
from recprivacy.federated.models import make_federated_model
from recprivacy.federated.protocol import LocalTraining

pytest.importorskip("flwr", reason="Flower is in the test extra; install recprivacy[test]")
from recprivacy.federated.engines import Method, app_spec  # noqa: E402
from recprivacy.federated.flower_app.deployment import LocalFederation, submit, write_devices  # noqa: E402
from recprivacy.federated.flower_app.device import devices  # noqa: E402
from recprivacy.federated.flower_app.run import run_simulation_engine  # noqa: E402
from recprivacy.federated.simulator import FederatedSimulator  # noqa: E402

needs_ray = pytest.mark.skipif(__import__("importlib").util.find_spec("ray") is None, reason="flower-sim needs flwr[simulation]")


def _tiny() -> Interactions:
    rng = np.random.default_rng(0)
    users = np.repeat(np.arange(5), 6)
    items = np.concatenate([rng.choice(12, 6, replace=False) for _ in range(5)])
    return Interactions(users, items, 5, 12, ratings=rng.integers(1, 6, 30).astype(float))


def _tiny_sim(method: str, n_clients: int = 3) -> tuple[FederatedSimulator, Method]:
    train = _tiny()
    feats = user_features(train)
    baseline = make_baseline(method, feats.blocks, eps_dpmf=5.0) if method in BASELINES else None
    model = make_federated_model((baseline and baseline.model) or "fedrec", train.n_items, feats.dim, 4)
    # the Taylor objective's gradient grows with the logit: the baselines take a smaller step and init
    local = LocalTraining(lr=0.01 if baseline else 0.05, local_epochs=2, batch_size=4, n_negatives=2)
    extra = {"objective": baseline.objective, "feature_privacy": baseline.features} if baseline else {}
    sim = FederatedSimulator(model, train, feats.x, local, clients_per_round=n_clients, seed=11,
                             defence=None if baseline else make_defence(method), init_std=0.1 if baseline else 0.3,
                             noise="simulation", **extra)
    return sim, Method(method, {"eps_dpmf": 5.0} if method in BASELINES else {}, feats.blocks)


@needs_ray
@pytest.mark.parametrize("method", ["apm", "fgerai", "fdpmf"])
def test_flower_simulation_engine_equals_the_simulator(method):
    sim, spec_method = _tiny_sim(method)
    # waves of 2 nodes: the 3 sampled devices of a round train in two waves, as in a deployment
    log = run_simulation_engine(app_spec(sim, spec_method, 3, (), False, wave_size=2), devices(sim.raw_features, sim.train_csr))
    for t in range(1, 4):
        assert np.array_equal(np.sort(sim.run_round().users), log.users[t])
    for name, value in sim.params.items():
        torch.testing.assert_close(log.final[name], value, rtol=0, atol=1e-6)


def test_killing_a_supernode_mid_run_fails_the_round_with_a_clear_error(tmp_path: Path):
    sim, method = _tiny_sim("none", n_clients=5)
    spec = app_spec(sim, method, 6, (), False)
    spec = type(spec)(**{**spec.__dict__, "timeout": 45.0, "wave_size": 2})  # 3 waves: the killed device's times out
    files = write_devices(devices(sim.raw_features, sim.train_csr), tmp_path / "devices")
    start = time.monotonic()
    with LocalFederation(files, tmp_path, timeout=120) as federation:
        killer = threading.Thread(target=_kill_when, args=(tmp_path / "logs" / "run.log", "[ROUND 2/", federation.supernodes[3]))
        killer.start()
        with pytest.raises(RecPrivacyError, match="round 2|round 3|did not reply|failed"):
            submit(spec, federation.address, tmp_path, tmp_path / "server-log.pt", timeout=600)
        killer.join(timeout=5)
    assert time.monotonic() - start < 600
    groups = {proc.pid for proc in [federation.superlink, *federation.supernodes]}
    assert _live_processes_in(groups) == []  # nothing a SuperNode started outlives the federation


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_during_a_deployment_stops_every_process_it_started(tmp_path: Path, sig: int):
    # a study process in its own session, so its group holds what it starts outside the federation (flwr run)
    script = f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); " \
             f"from test_federated_flower import _deploy_until_signalled; _deploy_until_signalled({str(tmp_path)!r})"
    study = subprocess.Popen([sys.executable, "-c", script], start_new_session=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    try:
        assert _wait_for(tmp_path / "logs" / "run.log", "[ROUND 2/", study), "the run did not reach round 2"
        study.send_signal(sig)
        code = study.wait(timeout=120)
    finally:
        os.killpg(study.pid, signal.SIGKILL) if study.poll() is None else None
    groups = set(json.loads((tmp_path / "groups.json").read_text())) | {study.pid}
    assert code == -sig  # the signal ends the study as it would without a federation (SIGINT: an uncaught KeyboardInterrupt)
    assert _wait_for_none(groups) == []


def _deploy_until_signalled(workdir: str) -> None:
    """A study's deployment of a long run (2 users, 50 rounds); writes its process groups to
    ``groups.json`` once the federation is up."""
    sim, method = _tiny_sim("none", n_clients=2)
    spec = app_spec(sim, method, 50, (), False)
    files = write_devices(devices(sim.raw_features, sim.train_csr)[:2], Path(workdir) / "devices")
    spec = type(spec)(**{**spec.__dict__, "n_users": 2})
    with LocalFederation(files, Path(workdir), timeout=120) as federation:
        (Path(workdir) / "groups.json").write_text(json.dumps([proc.pid for proc in federation.processes]))
        submit(spec, federation.address, Path(workdir), Path(workdir) / "server-log.pt", timeout=600)


def _wait_for(log: Path, marker: str, proc: subprocess.Popen, limit: float = 300) -> bool:
    """Whether ``marker`` appeared in ``log`` (within ``limit`` seconds, while ``proc`` runs)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and proc.poll() is None:
        if log.exists() and marker in log.read_text(errors="ignore"):
            return True
        time.sleep(0.5)
    return False


def _wait_for_none(groups: set[int], limit: float = 10) -> list[str]:
    """The processes of ``groups`` still running after at most ``limit`` seconds (SIGKILL is
    delivered asynchronously)."""
    deadline = time.monotonic() + limit
    while (live := _live_processes_in(groups)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return live


def _live_processes_in(groups: set[int]) -> list[str]:
    """Processes of these process groups that are running (zombies excepted: this machine's
    init may not reap them), read from ``/proc/<pid>/stat`` (state, ppid, pgrp after the name)."""
    live = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            name, rest = stat.read_text().rsplit(")", 1)
        except OSError:
            continue
        state, _, pgrp = rest.split()[:3]
        if int(pgrp) in groups and state not in "ZX":
            live.append(f"{stat.parent.name} {name.split('(', 1)[1]}")
    return live


def _kill_when(log: Path, marker: str, proc) -> None:
    if _wait_for(log, marker, proc, limit=400):
        proc.kill()


# ------------------------------------------------------------------ the study on a Coat subset

DATA = os.environ.get("RECPRIVACY_DATA")


def _coat_config(engine: str, users: int):
    from recprivacy.config import load_config

    return load_config(base={
        "name": f"coat-{engine}", "study": "federated", "seed": 0, "noise": "simulation",
        "dataset": {"name": "coat", "data_dir": DATA}, "eval": {"ks": [20]},
        "study_options": {"rounds": 2, "eval_every": 1, "clients_per_round": 0.5, "holdout": "random", "dims": [16],
                          "local_epochs": 2, "max_users": users, "methods": ["none", "apm"], "zetas": [0.2],
                          "attackers": ["dnn", "knn"], "attack_seeds": 2, "attack_clients": "all", "engine": engine,
                          "attributes": ["age"]},  # Coat's first 40 users are all women: gender has one class
    })  # fmt: skip


@pytest.mark.realdata
@pytest.mark.skipif(DATA is None, reason="set RECPRIVACY_DATA to the shared datasets")
@pytest.mark.parametrize("engine", [pytest.param("flower-sim", marks=needs_ray), "flower"])
def test_coat_study_on_flower_gives_the_simulator_numbers(engine):
    from recprivacy.experiments.runner import run_study

    # the acceptance run is 40 devices. For flower that is 40 SuperNode processes (the ServerApp
    # sends each round in waves of the study's wave_size, 8, so at most 8 ClientApps run at once):
    # about 20 minutes and 11 GB on a 2-core machine (docs/flower.md), beyond the suite's budget, so
    # the suite deploys 8 devices and RECPRIVACY_FLOWER_USERS=40 runs the acceptance size
    users = 40 if engine == "flower-sim" else int(os.environ.get("RECPRIVACY_FLOWER_USERS", "8"))
    expected = run_study(_coat_config("simulator", users)).metrics
    got = run_study(_coat_config(engine, users)).metrics
    assert expected.keys() == got.keys()
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, abs=1e-6), key
