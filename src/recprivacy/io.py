"""Files in and out, at the bottom of the house: atomic writes and output-folder checks.

Every file recprivacy produces is written to a temporary name beside its target and renamed
into place (``os.replace``), so a reader never sees half a file and a crash leaves the old one.
New files get the permissions the process's umask gives (``0644`` under the usual ``022``),
whichever writer made them.

``check_output_folder`` is called by every command *before* any work: an output that is a
file, that is (or lies inside) an input folder, or that already holds a file the command would
write is refused with one line, so no input is ever overwritten and no finished training is
lost to a late ``--out`` error.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from recprivacy.errors import ConfigError

__all__ = ["check_output_folder", "write_bytes_atomic", "write_text_atomic"]


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
