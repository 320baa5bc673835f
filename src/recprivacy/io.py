"""Files in and out, at the bottom of the house: atomic writes and output-folder checks.

Every file recprivacy produces is written to a temporary name beside its target and renamed
into place (``os.replace``), so a reader never sees half a file and a crash leaves the old one.
New files get the permissions the process's umask gives (``0644`` under the usual ``022``),
whichever writer made them.

``check_output_folder`` is called by every command *before* any work: a missing input, an
output that is a file, that is (or lies inside) an input folder, that already holds a file the
command would write, or that cannot be written (a probe file is created and removed) is
refused with one line, so no input is ever overwritten and no finished training is lost to a
late ``--out`` error. A new folder beside an input *file* is accepted.

A folder is written the same way: into a hidden *staging* folder beside it
(``.<name>.partial-<host>-<pid>-<random>``, see ``staging_folder``) that is renamed into place
when complete. A writer killed before the rename (SIGKILL, power loss) leaves its staging
folder behind; ``remove_stale_staging`` deletes those whose writer, named by host and pid, is
no longer running, and never one of a live writer (or of a writer on another host, whose
liveness cannot be checked). Readers refuse a staging folder (``is_staging``).
"""

from __future__ import annotations

import errno
import os
import shutil
import socket
import tempfile
import uuid
from collections.abc import Iterable
from pathlib import Path

from recprivacy.errors import ConfigError, DataError

__all__ = [
    "check_output_folder",
    "is_staging",
    "remove_stale_staging",
    "staging_folder",
    "write_bytes_atomic",
    "write_text_atomic",
]

#: marks a staging folder: ``.<final name>.partial-<host>-<pid>-<random hex>``
STAGING_MARK = ".partial-"


def _umask_mode() -> int:
    """``0o666`` less the process's umask (read without changing it for other threads)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def write_bytes_atomic(path: str | Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path`` and rename it over ``path``."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, _umask_mode())  # mkstemp creates 0600; released files are ordinary files
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8) atomically, as ``write_bytes_atomic``."""
    write_bytes_atomic(path, text.encode("utf-8"))


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _resolved(path: Path, label: str) -> Path:
    """``path`` made absolute with its links followed; a symbolic link loop on the way is a
    ``ConfigError`` naming ``label`` (pathlib raises ``RuntimeError`` or ``OSError(ELOOP)``)."""
    try:
        return path.expanduser().resolve()
    except (RuntimeError, OSError) as err:
        if isinstance(err, OSError) and err.errno != errno.ELOOP:
            raise
        raise ConfigError(f"{label}: is a symbolic link loop (the link leads back to itself); "
                          "expected a real file or folder, or a link to one") from None  # fmt: skip


def _input_folder(source: str | Path) -> Path | None:
    """The resolved folder an input is, or None for a file input; a missing input is a
    ``DataError`` naming it (so it is not mistaken for an output problem)."""
    path = _resolved(Path(source), str(source))
    if not path.exists():
        raise DataError("not found (no such file or folder); expected an existing input (the dataset file or folder, "
                        "or another file this command reads)", source)  # fmt: skip
    return path if path.is_dir() else None


def _check_writable(target: Path, label: str) -> None:
    """Create and remove a probe file where ``target``'s files will go: in ``target``, or in its
    nearest existing ancestor when it does not exist yet (the folder it will be created in).
    An actual file is made, so a read-only file system is caught even for root."""
    folder = next(p for p in (target, *target.parents) if p.exists())
    if not folder.is_dir():
        raise ConfigError(f"{label}: {folder} is a file, so no folder can be created under it; expected a folder path")
    try:
        handle, probe = tempfile.mkstemp(prefix=".recprivacy-write-probe-", dir=folder)
    except OSError as err:
        raise ConfigError(f"{label}: cannot create files in {folder} ({err.strerror}); expected a writable folder") from None
    os.close(handle)
    os.unlink(probe)


def check_output_folder(
    out: str | Path,
    *,
    inputs: Iterable[str | Path] = (),
    writes: Iterable[str] = (),
    option: str = "--out",
) -> Path:
    """Refuse an output folder before any work is done; return it resolved.

    Parameters
    ----------
    out:
        The folder the command will write into (it may not exist yet).
    inputs:
        Files or folders the command reads; each must exist. ``out`` may not be an input
        folder or lie inside one. A new folder beside a file input is a normal place for output
        (what would clash with an input is caught by ``writes``).
    writes:
        Names, relative to ``out``, of the files or folders the command creates. If any of
        them already exists the folder is refused (nothing is ever overwritten).
    option:
        How the user named the output, for the message.

    Raises
    ------
    DataError
        An input does not exist: one line naming it.
    ConfigError
        One line naming the option, the path and what was expected: ``out`` is a file, an
        input folder or inside one, holds one of ``writes``, or cannot be written (checked by
        creating and removing a probe file); or ``out`` or an input is a symbolic link loop.
    """
    inputs = list(inputs)
    folders = [_input_folder(source) for source in inputs]
    label = f"{option} {out}"
    target = _resolved(Path(out), label)
    if target.exists() and not target.is_dir():
        raise ConfigError(f"{label}: is an existing file; expected a folder (new or holding no output of this command)")
    for source, folder in zip(inputs, folders):
        if folder is not None and _inside(target, folder):
            raise ConfigError(f"{label}: is inside the input {source}; choose a folder outside the input data")
    existing = sorted(name for name in writes if (target / name).exists())
    if existing:
        raise ConfigError(f"{label}: already holds {', '.join(existing)}; choose a new or empty folder (nothing is overwritten)")
    _check_writable(target, label)
    return target


# ---------------------------------------------------------------------------- staging folders


def _host() -> str:
    """This machine's name as it appears in staging names (no '-' or '.', which delimit them)."""
    return "".join(c for c in socket.gethostname() if c.isalnum()) or "host"


def staging_folder(parent: str | Path, final: str) -> Path:
    """A fresh path for the staging folder of ``parent / final``, naming this writer's host and pid."""
    return Path(parent) / f".{final}{STAGING_MARK}{_host()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


def is_staging(path: str | Path) -> bool:
    """True for a staging folder's path (a run still being written, or left by a killed writer)."""
    name = Path(path).resolve().name
    return name.startswith(".") and STAGING_MARK in name


def _writer_alive(pid: int) -> bool:
    """Whether process ``pid`` exists on this host (one owned by another user counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _is_stale(path: Path) -> bool:
    """A staging folder whose writer ran on this host and has ended; unknown formats are kept."""
    host, _, rest = path.name.rpartition(STAGING_MARK)[2].partition("-")
    pid = rest.partition("-")[0]
    return host == _host() and pid.isdigit() and not _writer_alive(int(pid))


def remove_stale_staging(parent: str | Path) -> list[Path]:
    """Delete the staging folders in ``parent`` whose writer is gone; return what was removed."""
    parent = Path(parent)
    if not parent.is_dir():
        return []
    stale = [p for p in parent.glob(f".*{STAGING_MARK}*") if p.is_dir() and _is_stale(p)]
    for path in stale:
        shutil.rmtree(path, ignore_errors=True)
    return stale
