"""How a ``LocalFederation`` starts its processes (``deployment.LocalFederation._start``): ready
means listening and, for a SuperNode, activated by the SuperLink (its log says so); a process
that exits first is started again, one that keeps exiting is named at once; only a few start at
a time. Small Python servers stand in for Flower's processes (no Flower process is started)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from recprivacy.errors import RecPrivacyError

pytest.importorskip("flwr", reason="Flower is in the test extra; install recprivacy[test]")
from recprivacy.federated.flower_app import deployment  # noqa: E402

# listens on argv[1], logs its start time, after argv[2] seconds logs argv[3]; with argv[4], exits
# at once unless that file exists (and creates it): the first start of such a process fails
SERVER = """
import os, socket, sys, time
if len(sys.argv) > 4 and not os.path.exists(sys.argv[4]):
    open(sys.argv[4], "w").close()
    sys.exit(1)
s = socket.socket()
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen()
print("started", time.monotonic(), flush=True)
time.sleep(float(sys.argv[2]))
print(sys.argv[3], flush=True)
time.sleep(60)
"""


def _server(delay: float, marker: str = "SuperNode ID: 7", fail_once: Path | None = None):
    return lambda port: [sys.executable, "-c", SERVER, str(port), str(delay), marker, *([str(fail_once)] if fail_once else [])]


@pytest.fixture
def federation(tmp_path: Path):
    federation = deployment.LocalFederation([], tmp_path, timeout=20, attempts=3)
    yield federation
    federation.stop()


def test_a_supernode_is_ready_once_it_logs_its_activation(federation):
    start = time.monotonic()
    ready = federation._start({"supernode-0": _server(1.0)}, marker=b"SuperNode ID:")
    assert time.monotonic() - start >= 1.0  # it listened at once, but was not activated until it said so
    (port, proc), = ready.values()
    assert proc.poll() is None and deployment._listening(port)


def test_a_process_that_exits_before_it_is_ready_is_started_again(federation, tmp_path: Path):
    ready = federation._start({"supernode-0": _server(0.0, fail_once=tmp_path / "tried")}, marker=b"SuperNode ID:")
    assert len(federation.processes) == 2 and federation.processes[0].poll() == 1
    assert ready["supernode-0"][1] is federation.processes[1]


def test_a_process_that_keeps_exiting_is_named_without_waiting_for_the_timeout(federation):
    start = time.monotonic()
    with pytest.raises(RecPrivacyError, match=r"supernode-1 exited 3 time\(s\) before it was ready; see .*supernode-1\.log"):
        federation._start({"supernode-0": _server(0.0), "supernode-1": lambda port: [sys.executable, "-c", "raise SystemExit(3)"]},
                          marker=b"SuperNode ID:")
    assert time.monotonic() - start < federation.timeout
    assert all(proc.poll() is not None for proc in federation.processes)  # everything started so far is stopped


def test_a_few_start_at_a_time_and_come_back_in_order(federation, monkeypatch, tmp_path: Path):
    monkeypatch.setattr(deployment, "STARTING_PER_CORE", 1)
    monkeypatch.setattr(deployment.os, "cpu_count", lambda: 2)  # two at a time
    names = [f"supernode-{i}" for i in range(4)]
    ready = federation._start({name: _server(0.5) for name in names}, marker=b"SuperNode ID:")
    assert list(ready) == names
    starts = sorted(float((tmp_path / "logs" / f"{n}.log").read_text().split()[1]) for n in names)
    assert starts[2] - starts[1] >= 0.4  # the third waited for one of the first two to be ready
