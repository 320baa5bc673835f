"""The ``flower`` engine: a real Flower deployment (SuperLink and SuperNodes as separate
processes, the run submitted with ``flwr run``).

``LocalFederation`` starts one on this machine, bound to 127.0.0.1: a ``flower-superlink`` (its
one HTTP port serves the Fleet, Control and runtime APIs) and one ``flower-supernode`` per
device, whose node config ``data`` names that device's file and nothing else. A port is taken
by starting the process on it and waiting until it listens (a SuperNode: and until the
SuperLink has activated it), a few per core at a time; a process that exits first (the port
was taken meanwhile, or the SuperNode gave up registering) is retried on another port,
``attempts`` times, then ``RecPrivacyError`` says so. Every wait is bounded and a failed wait stops everything started
so far: nothing is started after a failed wait. Runtime dependency installation is off (each
machine has recprivacy installed; installing would need the network).

``run_deployment`` writes the device files and the run config (``AppSpec`` JSON, output path),
runs ``flwr run`` on the app folder ``deploy/`` against the local federation or, with
``superlink="host:port"``, joins one that runs elsewhere (its SuperNodes are started by the
devices' owners with ``--node-config 'data="user-<u>.npz"'``, files that ``recprivacy devices``
writes; ``out`` must then be a path the SuperLink's machine writes and this one reads: run the
study on the SuperLink's machine). The ServerApp's record comes back as a
``ServerLog``. Inside ``engines.shared_deployments``, runs on the same devices join one local
deployment, started by the first and stopped when the block ends.
"""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

import psutil
import tomli_w
import torch

from recprivacy.errors import RecPrivacyError
from recprivacy.federated.flower_app import FLOWER_ENV
from recprivacy.federated.flower_app.device import Device, federation_tag
from recprivacy.federated.flower_app.guard import owner_environment, private_folder, reap_leftovers, start_watchdog, stop_watchdog
from recprivacy.federated.flower_app.server import ServerLog
from recprivacy.federated.flower_app.spec import AppSpec

if TYPE_CHECKING:
    from recprivacy.federated.engines import Deployments

APP_DIR = Path(__file__).parent / "deploy"
Command = Callable[[int], list[str]]
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def flower_environment(home: Path) -> dict[str, str]:
    """Environment of every Flower process: no telemetry or update check, ``FLWR_HOME`` in
    ``home``, this interpreter's scripts first on ``PATH`` (the SuperLink starts helpers) and,
    unless the environment says otherwise, one OpenMP thread per process (a device trains a
    batch of one, and a wave of ClientApps with torch's default threads each oversubscribes
    the machine's cores). It names this process as the owner (``guard.owner_environment``), so
    whatever Flower starts can be found and stopped should this process die without cleaning up."""
    env = {"OMP_NUM_THREADS": "1", **os.environ, **FLOWER_ENV, **owner_environment(), "FLWR_HOME": str(home)}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


STARTING_PER_CORE = 4
"""Processes a ``LocalFederation`` starts at once per core. Starting them all at once overloads a
small machine: with 80 SuperNodes at once on 2 cores, the SuperLink answered some registrations
after the SuperNode had given up waiting; its retry then found its key already registered, and
a third of the SuperNodes exited (2026-11-27, one run)."""


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        return True
    except OSError:
        return False


class Stopped(BaseException):
    """A stopping signal whose default action ends the process, raised in the main thread so that
    every ``finally`` and context manager on the way out runs first (a ``BaseException``, like
    ``KeyboardInterrupt``: ``except Exception`` does not swallow it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum


def end_by_signal_when_uncaught() -> None:
    """Make an uncaught ``Stopped`` end the process by its signal's default action (after the
    stack has unwound), as the signal would have without a federation; other exceptions reach
    the hook found here. Installed once per process."""
    found = sys.excepthook
    if getattr(found, "ends_by_signal", False):
        return

    def hook(kind: type[BaseException], value: BaseException, tb: object) -> None:
        if isinstance(value, Stopped):
            signal.signal(value.signum, signal.SIG_DFL)
            signal.raise_signal(value.signum)
        found(kind, value, tb)

    hook.ends_by_signal = True  # type: ignore[attr-defined]
    sys.excepthook = hook


class LocalFederation:
    """A SuperLink and one SuperNode per device on 127.0.0.1 (module docstring); use as a
    context manager, which stops every process it started. ``host``: the address the SuperLink
    listens on (``"0.0.0.0"`` lets devices on other machines join it too; its ``address`` for
    this machine stays ``127.0.0.1:<port>``).

    While it is up (entered in the main thread), SIGTERM and SIGINT first stop its process
    groups and delete the device files (they hold the users' data), then restore the handlers
    found on entry and hand the signal on: a Python handler is called (SIGINT's raises
    ``KeyboardInterrupt``); a default action is reached through ``Stopped``, which unwinds the
    study first, so the temporary folders around the run (the server's record of Θ and the
    uploads, the run config, the logs) are deleted too, and then ends the process by the signal.
    A study stopped by ``kill`` or Ctrl-C leaves no SuperLink, SuperNode, ClientApp or run file
    behind, and ends as it would have ended without the federation.

    A study that dies without cleaning up (SIGKILL) is cleaned up after: entering first kills
    what dead studies left (``guard.reap_leftovers``) and starts this process's watchdog
    (``guard.start_watchdog``), which kills every process of the federation once this process
    has died and deletes its private folders (``guard.private_folder``); ``stop`` ends it."""

    def __init__(self, device_files: list[Path], workdir: Path, timeout: float = 120.0, attempts: int = 3,
                 host: str = "127.0.0.1") -> None:  # fmt: skip
        self.device_files = device_files
        self.host = host
        self.workdir = workdir
        self.timeout = timeout
        self.attempts = attempts
        self.env = flower_environment(workdir / "home")
        self.superlink: subprocess.Popen | None = None
        self.supernodes: list[subprocess.Popen] = []
        self.address = ""
        self.processes: list[subprocess.Popen] = []  # every process launched, stored at once for a signal handler
        self.watchdog: subprocess.Popen | None = None
        self.previous_handlers: dict[int, object] = {}

    def __enter__(self) -> "LocalFederation":
        reap_leftovers()
        self._install_handlers()
        try:
            self.watchdog = start_watchdog()
            port, self.superlink = self._start({"superlink": lambda p: [
                "flower-superlink", "--insecure", "--host", self.host, "--port", str(p),
                "--disable-runtime-dependency-installation"]})["superlink"]
            self.address = f"127.0.0.1:{port}"
            nodes = {f"supernode-{i}": (lambda p, path=path: [
                "flower-supernode", "--insecure", "--superlink", self.address, "--port", str(p),
                "--max-wait-time", str(self.timeout), "--node-config", f'data="{path}"'])
                for i, path in enumerate(self.device_files)}
            self.supernodes = [proc for _, proc in self._start(nodes, marker=b"SuperNode ID:").values()]
        except BaseException:
            self.stop()
            self._restore_handlers()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
        self._restore_handlers()

    def _install_handlers(self) -> None:
        """Stop the federation on SIGTERM / SIGINT (class docstring); Python lets only the
        main thread install handlers, so elsewhere the context manager alone cleans up; nor
        does it replace a handler installed outside Python, which it could not restore, or a
        signal the process ignores (a background job of a non-interactive shell inherits SIGINT
        ignored: Ctrl-C is not meant to stop it)."""
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in STOP_SIGNALS:
            if signal.getsignal(sig) not in (None, signal.SIG_IGN):  # an ignored signal stays ignored
                self.previous_handlers[sig] = signal.signal(sig, self._on_signal)

    def _restore_handlers(self) -> None:
        for sig, handler in self.previous_handlers.items():
            signal.signal(sig, handler)
        self.previous_handlers = {}

    def _on_signal(self, signum: int, frame: object) -> None:
        """Stop, delete the device files, restore, then act as the handler found on entry would
        have: a Python handler (SIGINT's ``default_int_handler`` raises ``KeyboardInterrupt``) is
        called here, in the main thread, so its exception leaves whatever the main thread was
        waiting on (re-raising the signal instead would let that wait finish first: ``flwr run``
        returns once its SuperLink is gone). ``SIG_DFL`` would end the process at once and skip
        the cleanup of the folders around the run (the server's record, its config and logs), so
        ``Stopped`` is raised instead: it unwinds like ``KeyboardInterrupt``, and if nothing
        catches it the process then ends by the signal itself (``end_by_signal_when_uncaught``)."""
        previous = self.previous_handlers.get(signum)
        self.stop()
        for path in self.device_files:
            path.unlink(missing_ok=True)
        self._restore_handlers()
        if callable(previous):
            previous(signum, frame)
        else:
            end_by_signal_when_uncaught()
            raise Stopped(signum)

    def _launch(self, name: str, command: Command) -> tuple[int, subprocess.Popen, int]:
        """Start ``command`` on a free port; its port, process and where its log starts."""
        port = _port()
        with open(self.workdir / "logs" / f"{name}.log", "ab") as out:
            start = out.tell()
            proc = subprocess.Popen(command(port), env=self.env, stdout=out, stderr=subprocess.STDOUT, cwd=self.workdir,
                                    start_new_session=True)
        self.processes.append(proc)
        return port, proc, start

    def _ready(self, name: str, port: int, start: int, marker: bytes | None) -> bool:
        """Listening on ``port`` and, with ``marker``, having logged it since ``start``."""
        if not _listening(port):
            return False
        if marker is None:
            return True
        with open(self.workdir / "logs" / f"{name}.log", "rb") as log:
            log.seek(start)
            return marker in log.read()

    def _start(self, commands: dict[str, Command], marker: bytes | None = None) -> dict[str, tuple[int, subprocess.Popen]]:
        """Start every ``command(port)``, at most ``STARTING_PER_CORE`` per core at a time, and
        wait until each is ready: listening on its port and, with ``marker``, having logged it
        (a SuperNode logs ``SuperNode ID`` once the SuperLink has registered and activated it).
        One that exits first (its port was taken, or it gave up registering) is started again
        on another port; after ``attempts`` starts, or ``timeout`` seconds in all, RecPrivacyError
        names it. Returns them in the order of ``commands``."""
        (self.workdir / "logs").mkdir(parents=True, exist_ok=True)
        waiting, pending, ready = list(commands), {}, {}
        tries = dict.fromkeys(commands, 0)
        deadline = time.monotonic() + self.timeout
        while (waiting or pending) and time.monotonic() < deadline:
            while waiting and len(pending) < STARTING_PER_CORE * (os.cpu_count() or 1):
                name = waiting.pop(0)
                tries[name] += 1
                pending[name] = self._launch(name, commands[name])
            for name, (port, proc, start) in list(pending.items()):
                if proc.poll() is not None:
                    del pending[name]
                    if tries[name] >= self.attempts:
                        self._fail(f"{name} exited {self.attempts} time(s) before it was ready", name)
                    waiting.insert(0, name)
                elif self._ready(name, port, start, marker):
                    ready[name] = pending.pop(name)[:2]
            time.sleep(0.2)
        if waiting or pending:
            late = [*pending, *waiting]
            self._fail(f"{len(late)} process(es) not ready within {self.timeout:g} s ({self.attempts} attempt(s) each), "
                       f"first {late[0]}", late[0])
        return {name: ready[name] for name in commands}

    def _fail(self, what: str, name: str) -> None:
        """Stop everything started so far and raise RecPrivacyError saying ``what``."""
        stop_groups(self.processes)
        raise RecPrivacyError(f"flower engine: {what}; see {self.workdir / 'logs' / (name + '.log')}")

    def stop(self) -> None:
        """Stop every process started, then the watchdog (safe to call again)."""
        stop_groups(self.processes)
        stop_watchdog(self.watchdog)


def stop_groups(procs: list[subprocess.Popen], grace: float = 10.0) -> None:
    """Terminate ``procs`` and every process they started, kill what is left after ``grace``
    seconds, and reap ``procs``.

    Each SuperLink and SuperNode runs in its own session, so its group holds most of the
    processes it starts (a SuperNode's ``flower-superexec`` and ClientApp processes): they go
    with it, also when the SuperNode itself has already died. The SuperLink starts its
    ``flower-superexec`` in a session of its own, and that starts the ServerApp (which holds Θ
    and the uploads): those are found as the procs' descendants (``psutil``) before anything
    is signalled, and stopped with them. Safe to call again, and from a signal handler (a reap
    that cannot finish is left to the next call)."""
    detached = _descendants(procs)
    for proc in procs:
        _signal_group(proc, signal.SIGTERM)
    for child in detached:
        _signal_process(child, signal.SIGTERM)
    deadline = time.monotonic() + grace
    for proc in procs:
        _wait(proc, max(0.0, deadline - time.monotonic()))
    _, alive = psutil.wait_procs(detached, timeout=max(0.0, deadline - time.monotonic()))
    for proc in procs:
        _signal_group(proc, signal.SIGKILL)
    for child in alive:
        _signal_process(child, signal.SIGKILL)
    for proc in procs:
        _wait(proc, grace)


def _descendants(procs: list[subprocess.Popen]) -> list[psutil.Process]:
    """Every running process started by ``procs`` or by their descendants, in any session."""
    found = []
    for proc in procs:
        try:
            found += psutil.Process(proc.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            pass
    return found


def _signal_process(proc: psutil.Process, sig: int) -> None:
    """``sig`` to ``proc`` unless it has ended (psutil checks that its pid was not reused)."""
    try:
        proc.send_signal(sig)
    except psutil.NoSuchProcess:
        pass


def _wait(proc: subprocess.Popen, timeout: float) -> None:
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        pass


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass


def write_devices(devices: list[Device], folder: Path) -> list[Path]:
    """Each device's file ``user-<u>.npz`` in ``folder`` (what its owner's SuperNode reads)."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"user-{d.user}.npz" for d in devices]
    for d, path in zip(devices, paths):
        d.save(path)
    return paths


def submit(spec: AppSpec, address: str, workdir: Path, out: Path, timeout: float) -> ServerLog:
    """``flwr run`` the app against the SuperLink at ``address`` and read the server's record."""
    home = workdir / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(tomli_w.dumps({"superlink": {"default": "federation",
                                                                   "federation": {"address": address, "insecure": True}}}))
    (workdir / "run.toml").write_text(tomli_w.dumps({"spec": spec.to_json(), "out": str(out)}))
    app = workdir / "app"
    shutil.copytree(APP_DIR, app, dirs_exist_ok=True)
    command = ["flwr", "run", str(app), "federation", "--run-config", str(workdir / "run.toml"), "--stream"]
    run_log = workdir / "logs" / "run.log"
    try:
        with open(run_log, "ab") as log:
            subprocess.run(command, env=flower_environment(home), stdout=log, stderr=subprocess.STDOUT, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise RecPrivacyError(f"flower engine: the run did not finish within {timeout:g} s ({last_error(run_log)}); "
                              f"log: {run_log}") from None
    if not out.exists():
        raise RecPrivacyError(f"flower engine: the run ended without the ServerApp's record ({last_error(run_log)}); "
                              f"log: {run_log}")
    log = ServerLog(**torch.load(out, weights_only=False))
    if log.error or not log.final:
        raise RecPrivacyError(f"engine flower: {log.error or 'the server finished without a model'}")
    return log


def last_error(log: Path) -> str:
    """What ``flwr run`` said last in ``log``, as one line: its last error box (``╭─ Error``), or
    else its last line (the log itself is often in a temporary folder that is gone when the
    error is read)."""
    lines = log.read_text(errors="replace").splitlines() if log.exists() else []
    boxes = [i for i, line in enumerate(lines) if line.startswith("╭─ Error")]
    if boxes:
        box = itertools.takewhile(lambda line: not line.startswith("╰"), lines[boxes[-1] + 1 :])
        return " ".join(" ".join(line.strip("│ ") for line in box).split())
    return " ".join(next((line for line in reversed(lines) if line.strip()), "flwr run printed nothing").split())


def run_deployment(spec: AppSpec, devices: list[Device], workdir: Path, superlink: str | None = None,
                   timeout: float = 3600.0, shared: Deployments | None = None) -> ServerLog:
    """Train on a Flower deployment (module docstring); the whole run is bounded by ``timeout``.
    With ``shared`` and no ``superlink``, the run joins the local deployment of these devices
    that ``shared`` keeps up, starting it first if there is none yet."""
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "logs").mkdir(exist_ok=True)
    out = workdir / "server-log.pt"
    if superlink is None and shared is not None:
        superlink = shared.address(federation_tag(devices), lambda stack: _start_kept(stack, devices, min(timeout, 300.0)))
    if superlink is not None:
        return submit(spec, superlink, workdir, out, timeout)
    with LocalFederation(write_devices(devices, workdir / "devices"), workdir, timeout=min(timeout, 300.0)) as federation:
        return submit(spec, federation.address, workdir, out, timeout)


def _start_kept(stack: ExitStack, devices: list[Device], timeout: float) -> str:
    """Start a local deployment of ``devices`` in a private folder (``guard.private_folder``),
    both left to ``stack``."""
    folder = stack.enter_context(private_folder("recprivacy-flower-federation"))
    return stack.enter_context(LocalFederation(write_devices(devices, folder / "devices"), folder, timeout)).address
