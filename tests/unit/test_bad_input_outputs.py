"""Bad outputs and degenerate inputs are refused with one line before any model is fitted.

Each case runs one command on a tiny CSV dataset in its own input folder, with model
construction in the studies replaced by a function that fails the test if called. Every case
must exit 2 with one ``error:`` line naming what is wrong, without a traceback, without
writing anything under ``--out`` and without touching the input folder.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from recprivacy.cli import app
from recprivacy.errors import DataError
from recprivacy.experiments import load_results
from recprivacy.io import is_staging, remove_stale_staging, staging_folder

runner = CliRunner()

#: 6 users x 24 items, 4 interactions each: enough for a split with test interactions
SMALL = "user_id,item_id\n" + "".join(f"{u},{(4 * u + j) % 24 + 1}\n" for u in range(1, 7) for j in range(4))
ONE_USER = "user_id,item_id\n" + "".join(f"7,{i}\n" for i in range(1, 6))
ONE_ITEM = "user_id,item_id\n" + "".join(f"{u},3\n" for u in range(1, 6))
SINGLETONS = "user_id,item_id\n" + "".join(f"{u},{u}\n" for u in range(1, 6))  # train keeps each user's only row


def _snapshot(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*") if p.is_file()}


def _no_fit(*args, **kwargs):
    raise AssertionError("a model was built although the command should have stopped before training")


CASES = {
    "out is an existing file": (SMALL, ["train", "--out", "{tmp}/taken"], ["--out", "is an existing file"]),
    "out inside the input folder": (SMALL, ["train", "--out", "{data}/runs"], ["--out", "is inside the input"]),
    "eval k above the catalogue": (SMALL, ["train", "--set", "eval.ks=[5,100000]"], ["eval.ks", "[100000]", "(24 items)"]),
    "one user": (ONE_USER, ["train"], ["1 user(s)", "at least 2"]),
    "one item": (ONE_ITEM, ["train"], ["1 item(s)", "at least 2"]),
    "split without test interactions": (SINGLETONS, ["train"], ["leaves no test interactions"]),
    "audit k set above the catalogue": (
        SMALL,
        ["audit", "--set", "study_options.sections=[utility]", "--set", "study_options.utility.k=25"],
        ["study_options.utility.k=25", "24 items", "expected k <= 24"],
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_refused_before_training(case, tmp_path, monkeypatch):
    monkeypatch.setattr("recprivacy.experiments.train.make_model", _no_fit)
    table, args, fragments = CASES[case]
    data = tmp_path / "input"
    data.mkdir()
    (data / "ratings.csv").write_text(table)
    (tmp_path / "taken").write_text("not a folder\n")
    before = _snapshot(data)
    args = [a.format(tmp=tmp_path, data=data) for a in args]
    if "--out" not in args:
        args += ["--out", str(tmp_path / "runs")]
    result = runner.invoke(app, [*args[:1], "--dataset", str(data / "ratings.csv"), *args[1:]])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert all(fragment in lines[0] for fragment in fragments), lines[0]
    assert "Traceback" not in result.output
    assert _snapshot(data) == before and sorted(p.name for p in data.iterdir()) == ["ratings.csv"]
    assert not (tmp_path / "runs").exists()
    assert (tmp_path / "taken").read_text() == "not a folder\n"


# ---------------------------------------------------------------------------- staging folders


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _staging_of(pid: int, parent: Path) -> Path:
    """A staging folder as the writer ``pid`` on this host would have named it."""
    mine = staging_folder(parent, "20260101-000000-run")
    name = mine.name.replace(f"-{os.getpid()}-", f"-{pid}-")
    path = parent / name
    path.mkdir()
    (path / "results.json").write_text("{}")
    return path


def test_stale_staging_is_removed_and_live_is_kept(tmp_path):
    dead, live = _staging_of(_dead_pid(), tmp_path), _staging_of(os.getpid(), tmp_path)
    foreign = tmp_path / ".20260101-000000-run.partial-otherhost-1-abcdef12"
    legacy = tmp_path / ".20260101-000000-run.partial-abcdef12"
    foreign.mkdir(), legacy.mkdir()
    assert remove_stale_staging(tmp_path) == [dead]
    assert not dead.exists() and live.is_dir() and foreign.is_dir() and legacy.is_dir()


@pytest.mark.parametrize("command", ["api", "cli"])
def test_a_staging_folder_is_not_a_run(tmp_path, command):
    staging = _staging_of(os.getpid(), tmp_path)
    assert is_staging(staging) and not is_staging(tmp_path)
    if command == "api":
        with pytest.raises(DataError, match="staging folder"):
            load_results(staging)
        return
    result = runner.invoke(app, ["report", str(staging)])
    assert result.exit_code == 2 and result.stderr.startswith("error: ") and "staging folder" in result.stderr
    assert sorted(p.name for p in staging.iterdir()) == ["results.json"]
