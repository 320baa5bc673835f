"""Nothing of a local Flower deployment outlives the process that started it, not even a SIGKILL.

A deployment's files (the devices' files, each one user's items and attributes, the server's
record of Θ and the uploads, its config and logs) live in a *private folder*
(``private_folder``): mode 0700 in the system's temporary folder, named as a staging folder
(``recprivacy.io.staging_folder``: host and pid of its owner), so ``io.remove_stale_staging``
deletes it once its owner is dead. Every process of the deployment (SuperLink, SuperNodes,
``flwr run``, and what Flower starts from them in sessions of their own: superexecs, the
ServerApp, ClientApps) inherits ``OWNER_VAR=<owner pid>`` in its environment
(``owner_environment``), so it can be found without its parent.

Two things remove them when the owner dies without cleaning up (SIGKILL, SIGHUP, the OOM killer):

* the *watchdog* (``start_watchdog``), a small process in a session of its own that every
  ``LocalFederation`` starts first and stops last: it waits for its owner to end (a pidfd)
  and then kills every process naming it and deletes the stale private folders (``watch``);
* the next private folder or deployment started on this machine (``reap_leftovers``) does the
  same for every dead owner, in case the watchdog was killed as well.

An owner that has ended counts as dead for its processes at once, but for its folders (as for
every staging folder, ``io``) only once its parent has read its exit status: a shell does so at
once, and the watchdog waits up to 10 s for it; a parent that takes longer leaves the folders to
the next start after it has.

Linux only (``/proc``, ``pidfd_open``).
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from recprivacy.io import remove_stale_staging, staging_folder

OWNER_VAR = "RECPRIVACY_FLOWER_OWNER"
"""Environment variable naming the pid of the process a deployment's process belongs to."""


def owner_environment() -> dict[str, str]:
    """What a deployment's process carries in its environment to be found as this process's."""
    return {OWNER_VAR: str(os.getpid())}


@contextmanager
def private_folder(name: str) -> Iterator[Path]:
    """A new folder only this user can read, named for this process (module docstring), in
    the system's temporary folder and deleted on exit; first removes what dead owners left."""
    root = Path(tempfile.gettempdir())
    reap_leftovers(root)
    folder = staging_folder(root, name)
    folder.mkdir(mode=0o700)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def reap_leftovers(root: Path | None = None) -> None:
    """Kill the deployment processes whose owner is dead and delete the private folders in
    ``root`` (default: the system's temporary folder) whose owner is dead."""
    kill_owned(lambda owner: not _alive(owner))
    remove_stale_staging(Path(root or tempfile.gettempdir()))


def kill_owned(orphaned: Callable[[int], bool], limit: float = 5.0) -> None:
    """SIGKILL every process of this user whose ``OWNER_VAR`` names an owner with
    ``orphaned(owner)``, scanning again until none is found (a superexec may start a ClientApp
    between two scans) or ``limit`` seconds have passed."""
    deadline = time.monotonic() + limit
    while (found := [pid for pid, owner in _owned_processes().items() if orphaned(owner)]) and time.monotonic() < deadline:
        for pid in found:
            _kill(pid)
        time.sleep(0.05)


def start_watchdog() -> subprocess.Popen:
    """Start the watchdog of this process (module docstring) in a session of its own, so that
    a signal to this process's group (a closing terminal's SIGHUP) leaves it running."""
    command = [sys.executable, "-m", __name__, str(os.getpid()), tempfile.gettempdir()]
    return subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, start_new_session=True)


def stop_watchdog(watchdog: subprocess.Popen | None) -> None:
    """End a watchdog whose owner has cleaned up itself (safe to call again)."""
    if watchdog is not None and watchdog.poll() is None:
        watchdog.terminate()
        watchdog.wait()


def watch(owner: int, root: Path, reaped_within: float = 10.0) -> None:
    """Wait until ``owner`` has ended, kill every process naming it, and once its parent has read
    its exit status (``reaped_within`` seconds at most: until then ``io`` counts it as running)
    delete the stale private folders in ``root``. Race-free: a pidfd opened after the owner
    ended refers to no process (or to another one, but then this process's parent is no longer
    ``owner``), so the wait is skipped."""
    try:
        fd = os.pidfd_open(owner)
    except ProcessLookupError:
        fd = None
    if fd is not None and os.getppid() == owner:
        select.select([fd], [], [])
    kill_owned(lambda pid: pid == owner)
    deadline = time.monotonic() + reaped_within
    while Path(f"/proc/{owner}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    remove_stale_staging(root)


def _owned_processes() -> dict[int, int]:
    """``{pid: owner}`` of this user's running processes (other than this one) whose environment
    names an owner."""
    found = {}
    prefix = f"{OWNER_VAR}=".encode()
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if proc.stat().st_uid != os.getuid():
                continue
            variables = (proc / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        owner = next((v[len(prefix):] for v in variables if v.startswith(prefix)), b"")
        if owner.isdigit() and int(proc.name) != os.getpid():
            found[int(proc.name)] = int(owner)
    return found


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie has ended: it only waits for its parent to read
    its exit status)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in "ZX"


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


if __name__ == "__main__":
    watch(int(sys.argv[1]), Path(sys.argv[2]))
