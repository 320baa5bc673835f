"""The command line starts light: importing it loads no torch, pandas, scipy.stats or sklearn
(they are imported inside the commands that need them)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
HEAVY = ("torch", "pandas", "scipy.stats", "sklearn")


def _loaded_after(statement: str) -> list[str]:
    code = f"import sys\n{statement}\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return out.stdout.split()


def test_importing_the_cli_loads_no_heavy_library():
    assert _loaded_after("import recprivacy.cli") == []


def test_validating_a_config_with_a_model_name_loads_no_heavy_library():
    statement = "from recprivacy.config import load_config; load_config(base={'model': {'name': 'als'}})"
    assert _loaded_after(statement) == []
