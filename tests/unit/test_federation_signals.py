"""Which signals a ``LocalFederation`` takes over while it is up (no process is started here):
SIGTERM and SIGINT with Python or default handlers, never a signal the process ignores (a
background job inherits SIGINT ignored), the handlers found on entry come back, and a signal
deletes the device files it served."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("flwr", reason="Flower is in the test extra; install recprivacy[test]")
from recprivacy.federated.flower_app.deployment import LocalFederation, Stopped  # noqa: E402


@pytest.fixture
def saved_handlers():
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    yield
    for sig, handler in saved.items():
        signal.signal(sig, handler)


def test_an_ignored_signal_stays_ignored_and_the_others_are_restored(tmp_path: Path, saved_handlers):
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    federation = LocalFederation([], tmp_path)
    federation._install_handlers()
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    assert signal.getsignal(signal.SIGTERM) == federation._on_signal
    federation._restore_handlers()
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL and signal.getsignal(signal.SIGINT) is signal.SIG_IGN


def test_sigint_with_pythons_handler_raises_keyboard_interrupt_after_stopping(tmp_path: Path, saved_handlers):
    signal.signal(signal.SIGINT, signal.default_int_handler)
    federation = LocalFederation([], tmp_path)
    federation._install_handlers()
    with pytest.raises(KeyboardInterrupt):
        federation._on_signal(signal.SIGINT, None)  # nothing started: stop() has nothing to stop
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_signal_deletes_the_device_files_and_leaves_the_rest(tmp_path: Path, saved_handlers):
    """The users' data go before the signal acts (SIGTERM's default action would skip every cleanup)."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    devices = [tmp_path / "devices" / f"user-{u}.npz" for u in range(2)]
    devices[0].parent.mkdir()
    for path in [*devices, tmp_path / "run.log"]:
        path.write_bytes(b"x")
    federation = LocalFederation(devices, tmp_path)
    federation._install_handlers()
    with pytest.raises(KeyboardInterrupt):
        federation._on_signal(signal.SIGINT, None)
    assert not any(path.exists() for path in devices) and (tmp_path / "run.log").exists()


def test_sigterm_by_default_unwinds_then_ends_the_process_by_the_signal(tmp_path: Path):
    """With SIGTERM's default action, the handler raises ``Stopped`` (cleanups on the way out run:
    a temporary folder goes), and when nothing catches it the process ends by SIGTERM, not by an
    exit code; a caught one leaves the process running."""
    script = textwrap.dedent(f"""
        import signal, sys, tempfile
        from pathlib import Path
        from recprivacy.federated.flower_app.deployment import LocalFederation, Stopped
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        federation = LocalFederation([], Path({str(tmp_path)!r}))  # entered only as far as its handlers
        federation._install_handlers()
        try:
            federation._on_signal(signal.SIGTERM, None)
        except Stopped as caught:
            print("caught", caught.signum == signal.SIGTERM, signal.getsignal(signal.SIGTERM) is signal.SIG_DFL)
        if sys.argv[1] == "uncaught":
            federation._install_handlers()
            with tempfile.TemporaryDirectory(dir={str(tmp_path)!r}, prefix="run-"):
                federation._on_signal(signal.SIGTERM, None)
        print("still running")
    """)
    caught = subprocess.run([sys.executable, "-c", script, "caught"], capture_output=True, text=True, timeout=120)
    assert caught.returncode == 0 and caught.stdout.split() == ["caught", "True", "True", "still", "running"], caught.stderr
    uncaught = subprocess.run([sys.executable, "-c", script, "uncaught"], capture_output=True, text=True, timeout=120)
    assert uncaught.returncode == -signal.SIGTERM, uncaught.stderr
    assert "still running" not in uncaught.stdout and "Traceback" not in uncaught.stderr
    assert not list(tmp_path.glob("run-*"))  # unwound before the signal ended it
    assert issubclass(Stopped, BaseException) and not issubclass(Stopped, Exception)
