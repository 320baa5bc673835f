"""Exceptions with one-line messages a user can act on.

Every error names where the problem is (file, line, field or config key) and what was
expected. The CLI prints ``str(error)`` alone unless ``--debug`` is given.
"""

from __future__ import annotations

from pathlib import Path


class RecPrivacyError(Exception):
    """Base class for errors recprivacy reports to users in one line."""


class DataError(RecPrivacyError, ValueError):
    """A dataset file or table is missing, malformed, or empty after processing."""

    def __init__(self, message: str, path: str | Path | None = None, line: int | None = None):
        where = ""
        if path is not None:
            where = f"{path}"
            if line is not None:
                where += f":{line}"
            where += ": "
        super().__init__(where + message)
        self.path = None if path is None else Path(path)
        self.line = line


class ConfigError(RecPrivacyError, ValueError):
    """A configuration file or override is invalid."""


class NotFittedError(RecPrivacyError, RuntimeError):
    """An estimator was used before ``fit``."""
