"""No user's data and no process outlives a SIGKILL outside the run's own output folder.

* ``recprivacy run --engine flower`` killed by SIGKILL mid-round: within 10 s no process of
  its deployment runs and no file of it (the devices' files, the server's record) is left in
  the temporary folder (its watchdog); killed together with its watchdog, the next
  deployment's start kills what it left and deletes its files.
* ``recprivacy synthesize`` killed during its final write leaves its staging folder (the
  release and the replacement map) in the output folder; the next run into that folder
  removes it and writes ``public/`` and ``private/`` alone.
* ``recprivacy synthesize`` says whether its release drew any randomness.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

pytest.importorskip("flwr", reason="Flower is in the test extra; install recprivacy[test]")
from test_cli_engine import tiny_federated  # noqa: E402
from test_flower_deployment import _processes_of, _wait_for, _wait_for_none  # noqa: E402
from test_upcsdg_study import TINY_CLI  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from recprivacy.cli import app  # noqa: E402
from recprivacy.defenses.upcsdg.release import PAUSE_VAR  # noqa: E402
from recprivacy.federated.flower_app.deployment import LocalFederation  # noqa: E402
from recprivacy.federated.flower_app.guard import kill_owned  # noqa: E402
from recprivacy.io import is_staging  # noqa: E402

KILL_LIMIT = 10.0
"""Seconds after the SIGKILL within which nothing of the deployment may be left."""


def _environment(tmp: Path) -> dict[str, str]:
    """The environment of a command under test: this interpreter's path, its own temporary folder."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "TMPDIR": str(tmp)}


def _start_flower_study(tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    """``recprivacy run --engine flower`` on 2 users, in a session of its own, its temporary
    folder ``tmp_path/tmp``, once it has reached round 1 (its ClientApps run)."""
    (tmp_path / "study.yaml").write_text(tiny_federated(rounds=50, eval_every=50, methods=["none"], max_users=2,
                                                        attack_clients="round", engine="flower"))
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    with open(tmp_path / "study.log", "wb") as log:
        study = subprocess.Popen([sys.executable, "-m", "recprivacy", "run", str(tmp_path / "study.yaml"), "--out",
                                  str(tmp_path / "runs")], env=_environment(tmp), start_new_session=True,
                                 stdout=log, stderr=subprocess.STDOUT)
    reached = _wait_for(tmp, ".recprivacy-flower*/logs/run.log", "[ROUND 1/", study)
    assert reached, f"the run did not reach round 1: {(tmp_path / 'study.log').read_text()[-2000:]}"
    assert len(_processes_of(tmp)) > 4  # the SuperLink, the 2 SuperNodes, their superexecs, flwr run, the watchdog...
    assert len(list(tmp.rglob("user-*.npz"))) == 2  # each device's file: one user's items and attributes
    return study, tmp


def _left_in(tmp: Path) -> list[str]:
    """Every file left in the temporary folder ``tmp`` (the empty folder torch makes for its
    compile cache, ``torchinductor_<user>``, holds nothing)."""
    return sorted(str(p.relative_to(tmp)) for p in tmp.rglob("*") if not p.is_dir())


def _kill(proc: subprocess.Popen) -> float:
    """SIGKILL ``proc``, reap it as a shell would; the monotonic time of the kill."""
    proc.send_signal(signal.SIGKILL)
    killed = time.monotonic()
    proc.wait()
    return killed


def test_sigkill_of_a_flower_study_leaves_no_process_and_no_file_within_10_s(tmp_path: Path):
    study, tmp = _start_flower_study(tmp_path)
    try:
        killed = _kill(study)
        left = _wait_for_none(lambda: _processes_of(tmp) + _left_in(tmp), limit=KILL_LIMIT)
        elapsed = time.monotonic() - killed
    finally:
        os.killpg(study.pid, signal.SIGKILL) if study.poll() is None else None
    print(f"\nflower SIGKILL: nothing left {elapsed:.1f} s after the kill")
    assert left == [], left  # no SuperLink, SuperNode, superexec, ServerApp, ClientApp, flwr run; no device file
    assert elapsed < KILL_LIMIT


def test_what_a_flower_study_killed_with_its_watchdog_left_goes_at_the_next_deployment_start(tmp_path: Path, monkeypatch):
    for attempt in range(ORPHAN_ATTEMPTS):
        study, tmp, survivors = _orphan_a_flower_study(tmp_path / f"attempt-{attempt}")
        if survivors:
            break
        kill_owned(lambda owner, pid=study.pid: owner == pid)
    try:
        assert survivors, f"in {ORPHAN_ATTEMPTS} attempts no process outlived its owner 2 s"  # without a watchdog they do
        print(f"\nflower SIGKILL with the watchdog: {len(survivors)} processes alive 2 s later")
        monkeypatch.setattr(tempfile, "tempdir", str(tmp))  # the next deployment, with the same temporary folder
        with LocalFederation([], tmp_path / "next", timeout=120):
            assert _processes_of(tmp) == [] and _left_in(tmp) == []
    finally:  # whatever failed, nothing of the study outlives the test
        kill_owned(lambda owner: owner == study.pid)


ORPHAN_ATTEMPTS = 3
"""Attempts at orphaning a study's processes: any deployment that starts meanwhile on this machine
(another test worker's) kills them as its first step, which is the behaviour under test but
leaves this test nothing to observe, so it starts again."""


def _orphan_a_flower_study(tmp_path: Path) -> tuple[subprocess.Popen, Path, list[str]]:
    """A Flower study SIGKILLed together with its watchdog; its processes still running 2 s
    later (with the devices' files) or ``[]`` when none are."""
    tmp_path.mkdir()
    study, tmp = _start_flower_study(tmp_path)
    try:
        (watchdog,) = [p for p in _processes_of(tmp) if p.split()[0] in _watchdogs_of(study.pid)]
        os.kill(int(watchdog.split()[0]), signal.SIGKILL)
        _kill(study)
        time.sleep(2)
        survivors = _processes_of(tmp)
        return study, tmp, survivors if list(tmp.rglob("user-*.npz")) else []
    except BaseException:
        study.kill() if study.poll() is None else None
        kill_owned(lambda owner: owner == study.pid)
        raise


def _watchdogs_of(owner: int) -> set[str]:
    """Pids (as text) of the watchdogs that watch ``owner``."""
    found = set()
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue
        if b"recprivacy.federated.flower_app.guard" in args and str(owner).encode() in args:
            found.add(cmdline.parent.name)
    return found


def test_a_synthesize_killed_during_its_final_write_is_cleaned_up_by_the_next_run(tmp_path: Path):
    out, tmp, fifo = tmp_path / "release", tmp_path / "tmp", tmp_path / "pause"
    tmp.mkdir()
    os.mkfifo(fifo)
    command = [sys.executable, "-m", "recprivacy", "synthesize", "--out", str(out), *TINY_CLI]
    first = subprocess.Popen(command, env={**_environment(tmp), PAUSE_VAR: str(fifo)},
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        writer = _when_paused(fifo, first)  # the release is staged, its renames not begun
        _kill(first)
        os.close(writer)
    finally:
        first.kill() if first.poll() is None else None
    (staging,) = out.iterdir()  # what the kill left: a staging folder, named as one, and nothing that looks released
    assert is_staging(staging) and (staging / "private" / "replacements.csv").is_file() and (staging / "public").is_dir()
    second = subprocess.run(command, env=_environment(tmp), capture_output=True, timeout=600)
    assert second.returncode == 0, second.stderr.decode(errors="replace")
    assert sorted(p.name for p in out.iterdir()) == ["private", "public"]  # the dead writer's staging folder is gone
    assert _left_in(tmp) == []  # and nothing was written to the temporary folder


def _when_paused(fifo: Path, proc: subprocess.Popen, limit: float = 300) -> int:
    """A write end of ``fifo``, opened once ``proc`` waits on it for reading (before that, opening
    it without blocking fails with ENXIO); fails if ``proc`` ends or ``limit`` seconds pass first."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as err:
            assert err.errno == errno.ENXIO, err
        time.sleep(0.1)
    raise AssertionError(f"synthesize did not reach its final write (exit code {proc.poll()})")


def test_synthesize_says_whether_the_randomness_changed_its_release(tmp_path: Path):
    runner = CliRunner()
    releases = {}
    for name, extra in (("first", []), ("again", []), ("gumbel", ["--set", "study_options.generator.export_sampling=gumbel"])):
        result = runner.invoke(app, ["synthesize", "--out", str(tmp_path / name), *TINY_CLI, *extra])
        assert result.exit_code == 0, result.output
        noise = json.loads((tmp_path / name / "private" / "privacy_summary.json").read_text())["method"]["noise"]
        assert "randomness of the release │ " + noise[:30] in " ".join(result.stdout.split())  # the summary it prints
        releases[name] = (noise, {p.name: p.read_bytes() for p in (tmp_path / name / "public").iterdir()})
    # 90 items, argmax export: no pool, no draw; the default secure noise changes nothing, and the release says so
    assert releases["first"][0].startswith("none: no random draw;") and releases["first"][0].endswith("(noise secure: unused)")
    assert releases["first"][1] == releases["again"][1]  # two secure runs: the same release, byte for byte
    # a Gumbel draw at export: secure entropy, and how much of the release a second draw changed
    assert releases["gumbel"][0].startswith("secure: operating-system entropy; a second export with fresh draws changed ")
