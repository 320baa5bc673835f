"""Answers an endpoint gave, kept on disk so that a resumed or repeated audit asks nothing twice.

One JSON line per answered request, ``{"key": ..., "answer": ...}``, appended and flushed as
each answer arrives; ``key`` is the SHA-256 of the request (method, full URL and JSON body,
never the headers, so no credential reaches the file). The file lives in the run folder's
``private/`` part (mode 0700): the requests carry users' ids and histories. A last line cut
short by a kill is ignored (that request is asked again).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import IO, Any

from recprivacy.errors import DataError

#: the cache file inside a run folder
CACHE_FILE = Path("private") / "endpoint-cache.jsonl"


def request_key(method: str, url: str, body: Any) -> str:
    """The cache key of one request."""
    text = json.dumps([method, url, body], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ResponseCache:
    """The cache file at ``path`` (created with a private parent folder), read once, appended to."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.answers = _read(self.path)
        self._file: IO[str] | None = None

    def __contains__(self, key: str) -> bool:
        return key in self.answers

    def get(self, key: str) -> Any:
        """The stored answer of a request."""
        return self.answers[key]

    def put(self, key: str, answer: Any) -> None:
        """Store an answer and flush it to disk."""
        self.answers[key] = answer
        if self._file is None:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            self._file = os.fdopen(fd, "a", encoding="utf-8")
        self._file.write(json.dumps({"key": key, "answer": answer}, separators=(",", ":")) + "\n")
        self._file.flush()

    def close(self) -> None:
        """Close the file (it is reopened by the next ``put``)."""
        if self._file is not None:
            self._file.close()
            self._file = None


def _read(path: Path) -> dict[str, Any]:
    """Every complete line of the cache file (none when it does not exist)."""
    if not path.exists():
        return {}
    *complete, _cut_short = path.read_text(encoding="utf-8").split("\n")
    answers = {}
    for number, line in enumerate(complete, 1):
        try:
            entry = json.loads(line)
            answers[entry["key"]] = entry["answer"]
        except (json.JSONDecodeError, KeyError, TypeError):
            raise DataError("not a line of an endpoint cache; expected {\"key\": ..., \"answer\": ...}", path, number) from None
    return answers
