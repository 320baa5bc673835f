"""A Flower deployment (SuperLink and SuperNodes as processes) that loses a SuperNode mid-run
ends with a clear error instead of a hang, and a ``recprivacy run --engine flower`` stopped by
SIGTERM or SIGINT leaves no process and no run file behind, ending as the command would
without a federation."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from recprivacy.errors import RecPrivacyError

pytest.importorskip("flwr", reason="Flower is in the test extra; install recprivacy[test]")
from test_cli_engine import tiny_federated  # noqa: E402
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
    assert _wait_for_none(lambda: _live_processes_in(groups)) == []  # nothing a SuperNode started outlives the federation


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_during_a_flower_study_stops_every_process_and_leaves_no_run_file(tmp_path: Path, sig: int):
    # `recprivacy run --engine flower` as a user runs it, in a session of its own, its temporary folders in `tmp`
    (tmp_path / "study.yaml").write_text(tiny_federated(rounds=50, eval_every=50, methods=["none"], max_users=2,
                                                        attack_clients="round", engine="flower"))
    (tmp_path / "tmp").mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "TMPDIR": str(tmp_path / "tmp")}
    if sig == signal.SIGINT:  # as in a terminal, also where this test runs as a background job (SIGINT ignored)
        command = [sys.executable, "-c", "import signal, runpy; signal.signal(signal.SIGINT, signal.default_int_handler); "
                   "runpy.run_module('recprivacy', run_name='__main__')"]
    else:
        command = [sys.executable, "-m", "recprivacy"]
    study = subprocess.Popen([*command, "run", str(tmp_path / "study.yaml"), "--out", str(tmp_path / "runs")], env=env,
                             start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        # signalled as round 1 starts, while the ClientApps that tell the server their user run: they must go too
        assert _wait_for(tmp_path / "tmp", ".recprivacy-flower*/logs/run.log", "[ROUND 1/", study), "the run did not reach round 1"
        started = _processes_of(tmp_path / "tmp")
        assert len(started) > 4  # the SuperLink, the 2 SuperNodes, their superexecs, flwr run...
        study.send_signal(sig)
        output = study.communicate(timeout=120)[0].decode(errors="replace")
    finally:
        os.killpg(study.pid, signal.SIGKILL) if study.poll() is None else None
    # SIGTERM ends it by the signal, as it would without a federation; Ctrl-C with the shell's 130; no traceback
    assert study.returncode == (-sig if sig == signal.SIGTERM else 130) and "Traceback" not in output, (study.returncode, output)
    assert _wait_for_none(lambda: _processes_of(tmp_path / "tmp")) == []  # no SuperLink, SuperNode, ClientApp or flwr run outlives it
    # nor any run file: the device files (the users' data), the server's record of Θ and the uploads, the run config,
    # the logs (SIGTERM's default action would have skipped every cleanup)
    assert sorted(p.name for p in (tmp_path / "tmp").glob(".recprivacy-flower*")) == []


def _wait_for(folder: Path, pattern: str, marker: str, proc: subprocess.Popen, limit: float = 300) -> bool:
    """Whether ``marker`` appeared in a file of ``folder`` matching ``pattern`` (within ``limit``
    seconds, while ``proc`` runs)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and proc.poll() is None:
        if any(marker in log.read_text(errors="ignore") for log in folder.glob(pattern)):
            return True
        time.sleep(0.5)
    return False


def _wait_for_none(running: Callable[[], list[str]], limit: float = 10) -> list[str]:
    """The processes ``running()`` still finds after at most ``limit`` seconds (SIGKILL is
    delivered asynchronously)."""
    deadline = time.monotonic() + limit
    while (live := running()) and time.monotonic() < deadline:
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


def _processes_of(tmp: Path) -> list[str]:
    """Running processes (zombies excepted: this machine's init may not reap them) whose
    environment has ``TMPDIR=tmp``: the study's and everything it started, which inherits it."""
    marker = f"TMPDIR={tmp}".encode() + b"\0"
    live = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            name, rest = (proc / "stat").read_text().rsplit(")", 1)
            environ = (proc / "environ").read_bytes() + b"\0"
        except OSError:
            continue
        if rest.split()[0] not in "ZX" and (b"\0" + marker) in (b"\0" + environ):
            live.append(f"{proc.name} {name.split('(', 1)[1]}")
    return live


def _kill_when(log: Path, marker: str, proc) -> None:
    if _wait_for(log.parent, log.name, marker, proc, limit=400):
        proc.kill()
