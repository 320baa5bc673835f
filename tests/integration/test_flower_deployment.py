"""A Flower deployment (SuperLink and SuperNodes as processes) that loses a SuperNode mid-run
ends with a clear error instead of a hang, and one whose study is stopped by SIGTERM or SIGINT
leaves no process behind; both ending as the study would without a federation."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from recprivacy.errors import RecPrivacyError

pytest.importorskip("flwr", reason="Flower is in the test extra; install recprivacy[test]")
from test_federated_flower import _tiny_sim  # noqa: E402

from recprivacy.federated.engines import app_spec  # noqa: E402
from recprivacy.federated.flower_app.deployment import LocalFederation, submit, write_devices  # noqa: E402
from recprivacy.federated.flower_app.device import devices  # noqa: E402


@pytest.mark.slow
def test_killing_a_supernode_mid_run_fails_the_round_with_a_clear_error(tmp_path: Path):
    sim, method = _tiny_sim("none", n_clients=3)
    spec = app_spec(sim, method, 6, (), False)
    # 3 devices in 2 waves: the killed device's wave times out, the other is still sent
    spec = type(spec)(**{**spec.__dict__, "n_users": 3, "timeout": 30.0, "wave_size": 2})
    files = write_devices(devices(sim.raw_features, sim.train_csr)[:3], tmp_path / "devices")
    start = time.monotonic()
    with LocalFederation(files, tmp_path, timeout=120) as federation:
        killer = threading.Thread(target=_kill_when, args=(tmp_path / "logs" / "run.log", "[ROUND 2/", federation.supernodes[0]))
        killer.start()
        with pytest.raises(RecPrivacyError, match=r"round [23]: 1 of 3 devices failed \(node \d+ \(user 0\) did not reply"):
            submit(spec, federation.address, tmp_path, tmp_path / "server-log.pt", timeout=600)
        killer.join(timeout=5)
    assert time.monotonic() - start < 600
    groups = {proc.pid for proc in [federation.superlink, *federation.supernodes]}
    assert _wait_for_none(groups) == []  # nothing a SuperNode started outlives the federation


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_during_a_deployment_stops_every_process_it_started(tmp_path: Path, sig: int):
    # a study process in its own session, so its group holds what it starts outside the federation (flwr run)
    script = f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); " \
             f"from test_flower_deployment import _deploy_until_signalled; _deploy_until_signalled({str(tmp_path)!r})"
    study = subprocess.Popen([sys.executable, "-c", script], start_new_session=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    try:
        assert _wait_for(tmp_path / "groups.json", "run", study), "the federation did not start"
        up = json.loads((tmp_path / "groups.json").read_text())
        # signalled as round 1 starts, while the ClientApps that tell the server their user run: they must go too
        assert _wait_for(Path(up["run"]) / "logs" / "run.log", "[ROUND 1/", study), "the run did not reach round 1"
        study.send_signal(sig)
        code = study.wait(timeout=120)
    finally:
        os.killpg(study.pid, signal.SIGKILL) if study.poll() is None else None
    assert code == -sig  # the signal ends the study as it would without a federation (SIGINT: an uncaught KeyboardInterrupt)
    assert _wait_for_none(set(up["pids"]) | {study.pid}) == []
    assert sorted((tmp_path / "devices").iterdir()) == []  # the users' data go
    # and the run's temporary folder, with the server's record, the run config and the logs (SIGTERM's default
    # action would skip every cleanup)
    assert not Path(up["run"]).exists()


def _deploy_until_signalled(workdir: str) -> None:
    """A study's deployment of a long run (2 users, 50 rounds) in a temporary run folder, as
    ``engines.train_federation`` runs one; writes its process groups and the run folder to
    ``groups.json`` once the federation is up. SIGINT raises ``KeyboardInterrupt``, as in a
    terminal, even where this test runs as a background job (which inherits SIGINT ignored)."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sim, method = _tiny_sim("none", n_clients=2)
    spec = app_spec(sim, method, 50, (), False)
    files = write_devices(devices(sim.raw_features, sim.train_csr)[:2], Path(workdir) / "devices")
    spec = type(spec)(**{**spec.__dict__, "n_users": 2})
    with tempfile.TemporaryDirectory(dir=workdir, prefix="run-") as run, \
            LocalFederation(files, Path(run), timeout=120) as federation:
        up = {"pids": [proc.pid for proc in federation.processes], "run": run}
        (Path(workdir) / "groups.json").write_text(json.dumps(up))
        submit(spec, federation.address, Path(run), Path(run) / "server-log.pt", timeout=600)


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
