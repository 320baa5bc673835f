"""Which signals a ``LocalFederation`` takes over while it is up (no process is started here):
SIGTERM and SIGINT with Python or default handlers, never a signal the process ignores (a
background job inherits SIGINT ignored), the handlers found on entry come back, and a signal
deletes the device files it served."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

pytest.importorskip("flwr", reason="Flower is in the test extra; install recprivacy[test]")
from recprivacy.federated.flower_app.deployment import LocalFederation  # noqa: E402


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
