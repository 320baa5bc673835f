"""What every benchmark record carries about where and how it was measured, and how it is written."""

from __future__ import annotations

import json
import os
import platform
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from recprivacy.io import write_text_atomic


def provenance() -> dict[str, Any]:
    """Date (UTC), machine (platform, Python, CPUs, load average at the end) and the command."""
    return {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": {"platform": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count(),
                    "loadavg_at_end": os.getloadavg()},  # fmt: skip
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
    }


def write_record(record: dict[str, Any], path: str | Path) -> None:
    """``record`` with its provenance as indented JSON at ``path`` (atomically; folders created)."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out, json.dumps({**record, **provenance()}, indent=2))
    print(f"wrote {out}")
