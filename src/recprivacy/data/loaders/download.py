"""Where datasets live, and the opt-in MovieLens download.

Only MovieLens (``ml-100k``, ``ml-1m``) is downloaded, from the official GroupLens site, and
only when asked (``download=True``). The archive is streamed into the cache folder with a
progress bar, unpacked into a temporary folder, each file the loaders read is checked against
the checksum recorded in the shared datasets' ``SOURCE.md`` (sha256, or the git blob id for
ml-1m ``ratings.dat``), and only then is the folder renamed into place. Offline, one DataError
says where to put the files instead.
"""

from __future__ import annotations

import hashlib
import http.client
import math
import os
import tempfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path

from recprivacy.errors import DataError
from recprivacy.progress import progress

MOVIELENS_URLS = {
    "ml-100k": "https://files.grouplens.org/datasets/movielens/ml-100k.zip",
    "ml-1m": "https://files.grouplens.org/datasets/movielens/ml-1m.zip",
}
"""Official GroupLens archives; each unpacks into a folder of the same name."""

MOVIELENS_CHECKSUMS: dict[str, dict[str, str]] = {
    "ml-100k": {
        "u.data": "sha256:06416e597f82b7342361e41163890c81036900f418ad91315590814211dca490",
        "u.user": "sha256:f120e114da2e8cf314fd28f99417c94ae9ddf1cb6db8ce0e4b5995d40e90e62c",
        "u.item": "sha256:553841ebc7de3a0fd0d6b62a204ea30c1e651aacfb2814c7a6584ac52f2c5701",
    },
    "ml-1m": {
        "ratings.dat": "gitblob:77a7c4b150f588c23bb9e1f068aa996c0b413695",
        "users.dat": "sha256:1dc3a95300cb19f7c10e027daf29b8cdf1d908dab65b5edfb45950aa389a10a3",
        "movies.dat": "sha256:0140fc2356357c1a851d0f52e893a1e4d3696df632c4141cea8d5bc3d621f0b9",
    },
}
"""Checksums of the files the loaders read, as recorded in shared/datasets/*/SOURCE.md."""

_CHUNK = 1 << 16


def cache_root() -> Path:
    """``$RECPRIVACY_CACHE``, else ``~/.cache/recprivacy``."""
    env = os.environ.get("RECPRIVACY_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "recprivacy"


def data_hint(what: str = "the dataset folder") -> str:
    """Where dataset files belong, for error messages."""
    return (
        f"put {what} under the folder given by --data-dir (Python: data_dir=), "
        f"or under $RECPRIVACY_DATA, or under {cache_root()}"
    )


def download_movielens(
    name: str,
    root: Path | None = None,
    *,
    url: str | None = None,
    checksums: Mapping[str, str] | None = None,
    timeout: float = 30.0,
) -> Path:
    """Download, verify and unpack a MovieLens release; return its folder ``root/name``.

    ``url`` and ``checksums`` default to the official archive and the recorded checksums
    (tests point them elsewhere). An existing folder is returned untouched.
    """
    if name not in MOVIELENS_URLS:
        raise DataError(f"only {sorted(MOVIELENS_URLS)} can be downloaded, not {name!r}; {data_hint()}")
    root = Path(root) if root is not None else cache_root()
    target = root / name
    if target.is_dir():
        return target
    root.mkdir(parents=True, exist_ok=True)
    url = url or MOVIELENS_URLS[name]
    with tempfile.TemporaryDirectory(prefix=f".{name}-", dir=root) as tmp:
        archive = Path(tmp) / f"{name}.zip"
        _fetch(url, archive, name, timeout)
        folder = _unpack(archive, Path(tmp) / "unpacked", name)
        verify_checksums(folder, MOVIELENS_CHECKSUMS[name] if checksums is None else checksums)
        os.replace(folder, target)
    return target


def _fetch(url: str, target: Path, name: str, timeout: float) -> None:
    """Stream ``url`` into ``target`` with a progress bar; offline -> one DataError."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response, open(target, "wb") as out:
            size = int(response.headers.get("Content-Length") or 0)
            chunks = progress(_chunks(response), desc=f"downloading {name}", total=math.ceil(size / _CHUNK) or None)
            for chunk in chunks:
                out.write(chunk)
    except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as err:
        reason = getattr(err, "reason", err)
        raise DataError(
            f"could not download {name} from {url} ({reason}); without internet access, "
            + data_hint(f"the unpacked {name} folder")
        ) from err


def _chunks(response) -> Iterator[bytes]:
    while chunk := response.read(_CHUNK):
        yield chunk


def _unpack(archive: Path, dest: Path, name: str) -> Path:
    """Extract ``archive``; return the folder holding the files (``name/`` inside, or the top)."""
    try:
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(dest)
    except zipfile.BadZipFile as err:
        raise DataError(f"the download is not a zip archive ({err})", archive) from err
    inner = dest / name
    return inner if inner.is_dir() else dest


def verify_checksums(folder: Path, checksums: Mapping[str, str]) -> None:
    """Check each ``file -> 'sha256:<hex>' | 'gitblob:<hex>'`` in ``folder``."""
    for filename, expected in checksums.items():
        path = folder / filename
        if not path.is_file():
            raise DataError(f"the archive lacks {filename}", path)
        algo, _, wanted = expected.partition(":")
        actual = git_blob_id(path) if algo == "gitblob" else file_sha256(path)
        if actual != wanted:
            raise DataError(f"{algo} checksum mismatch: expected {wanted}, got {actual}; the download is corrupt", path)


def file_sha256(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def git_blob_id(path: Path) -> str:
    """``git hash-object``: sha1 of ``b"blob <size>\\0"`` followed by the file's bytes."""
    h = hashlib.sha1(f"blob {path.stat().st_size}\0".encode())
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()
