"""Files in and out, at the bottom of the house: atomic writes and output-folder checks.

Every file recprivacy produces is written to a temporary name beside its target and renamed
into place (``os.replace``), so a reader never sees half a file and a crash leaves the old one.
New files get the permissions the process's umask gives (``0644`` under the usual ``022``),
whichever writer made them.

``check_output_folder`` is called by every command *before* any work: an output that is a
file, that is (or lies inside) an input folder, or that already holds a file the command would
write is refused with one line, so no input is ever overwritten and no finished training is
lost to a late ``--out`` error.

A folder is written the same way: into a hidden *staging* folder beside it
(``.<name>.partial-<host>-<pid>-<random>``, see ``staging_folder``) that is renamed into place
when complete. A writer killed before the rename (SIGKILL, power loss) leaves its staging
folder behind; ``remove_stale_staging`` deletes those whose writer, named by host and pid, is
no longer running, and never one of a live writer (or of a writer on another host, whose
liveness cannot be checked). Readers refuse a staging folder (``is_staging``).
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import uuid
from collections.abc import Iterable
from pathlib import Path

from recprivacy.errors import ConfigError

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
        Files or folders the command reads. ``out`` may not be one of them, lie inside one
        of them (for a file input: inside its folder), or contain one of them among the names
        in ``writes``.
    writes:
        Names, relative to ``out``, of the files or folders the command creates. If any of
        them already exists the folder is refused (nothing is ever overwritten).
    option:
        How the user named the output, for the message.

    Raises
    ------
    ConfigError
        One line naming the option, the path and what was expected.
    """
    target = Path(out).expanduser().resolve()
    if target.exists() and not target.is_dir():
        raise ConfigError(f"{option} {out}: is an existing file; expected a folder (new or holding no output of this command)")
    for source in inputs:
        source_path = Path(source).expanduser().resolve()
        folder = source_path if source_path.is_dir() else source_path.parent
        if _inside(target, folder):
            raise ConfigError(f"{option} {out}: is inside the input {source}; choose a folder outside the input data")
    existing = sorted(name for name in writes if (target / name).exists())
    if existing:
        raise ConfigError(
            f"{option} {out}: already holds {', '.join(existing)}; choose a new or empty folder (nothing is overwritten)"
        )
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
