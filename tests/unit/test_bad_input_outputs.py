"""Bad outputs and degenerate inputs are refused with one line before any model is fitted.

Each case runs one command on a tiny CSV dataset in its own input folder, with model
construction in the studies replaced by a function that fails the test if called. Every case
must exit 2 with one ``error:`` line naming what is wrong, without a traceback, without
writing anything under ``--out`` and without touching the input folder. Paths that are wrong
as such (a symbolic link loop, a missing dataset, an ``--out`` that is an input folder or
cannot be written) are refused before any data are loaded; a new folder beside an input file
is a normal output.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
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


def _error_line(result) -> str:
    """The one ``error:`` line of a refused command: exit code 2, no traceback."""
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output
    return lines[0]


CASES = {
    "out is an existing file": (SMALL, ["train", "--out", "{tmp}/taken"], ["--out", "is an existing file"]),
    "out inside the --data-dir": (SMALL, ["train", "--data-dir", "{data}", "--out", "{data}/runs"],
                                  ["--out", "is inside the input"]),
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
    line = _error_line(result)
    assert all(fragment in line for fragment in fragments), line
    assert _snapshot(data) == before and sorted(p.name for p in data.iterdir()) == ["ratings.csv"]
    assert not (tmp_path / "runs").exists()
    assert (tmp_path / "taken").read_text() == "not a folder\n"


# ---------------------------------------------------------------------------- paths refused before loading


def _tree(folder: Path) -> dict[str, str]:
    """Every entry under ``folder``: sha256 of a file, the target of a link, '' for a folder."""
    return {str(p.relative_to(folder)): os.readlink(p) if p.is_symlink() else
            hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "" for p in sorted(folder.rglob("*"))}


def _no_load(*args, **kwargs):
    raise AssertionError("data were loaded although the command should have stopped before")


def _refused_before_loading(monkeypatch, tmp_path: Path, args: list[str]) -> str:
    """Run the command on the tree under ``tmp_path``; its one error line, with nothing loaded,
    written or changed."""
    monkeypatch.setattr("recprivacy.experiments.train.load_dataset", _no_load)
    before = _tree(tmp_path)
    args = [a.format(tmp=tmp_path) for a in args]
    line = _error_line(runner.invoke(app, [*args, *([] if "--out" in args else ["--out", f"{tmp_path}/runs"])]))
    assert _tree(tmp_path) == before
    return line


def _inputs(tmp: Path) -> None:
    """``input/ratings.csv``, ``loop.csv`` and ``loop`` (links to themselves), ``datasets/ml-100k/`` (named, via
    --data-dir)."""
    (tmp / "input").mkdir()
    (tmp / "input" / "ratings.csv").write_text(SMALL)
    (tmp / "loop.csv").symlink_to("loop.csv")
    (tmp / "loop").symlink_to("loop")
    (tmp / "datasets" / "ml-100k").mkdir(parents=True)
    (tmp / "datasets" / "ml-100k" / "u.data").write_text("1\t10\t5\t881250949\n")


LOOP = ("error: {tmp}/loop.csv: is a symbolic link loop (the link leads back to itself); expected a real file or folder, "
        "or a link to one")
MISSING = ("error: {tmp}/gone{suffix}: not found (no such file or folder); expected an existing input (the dataset file or "
           "folder, or another file this command reads)")
UNDER_FILE = ("error: --out {tmp}/input/ratings.csv/sub: {tmp}/input/ratings.csv is a file, so no folder can be created under "
              "it; expected a folder path")
IN_DATA_DIR = "error: --out {tmp}/datasets{sub}: is inside the input {tmp}/datasets; choose a folder outside the input data"
ML100K = ["--dataset", "ml-100k", "--data-dir", "{tmp}/datasets"]

PATH_CASES = [
    # (id, command line (--out {tmp}/runs unless given), the exact error line)
    ("train-dataset-is-a-link-loop", ["train", "--dataset", "{tmp}/loop.csv"], LOOP),
    ("audit-dataset-is-a-link-loop", ["audit", "--dataset", "{tmp}/loop.csv"], LOOP),
    ("train-dataset-bare-name-is-a-link-loop", ["train", "--dataset", "loop"], LOOP.replace("{tmp}/loop.csv", "loop")),
    ("train-dataset-file-missing", ["train", "--dataset", "{tmp}/gone.csv"], MISSING.replace("{suffix}", ".csv")),
    ("audit-dataset-folder-missing", ["audit", "--dataset", "{tmp}/gone"], MISSING.replace("{suffix}", "")),
    ("synthesize-dataset-file-missing", ["synthesize", "--dataset", "{tmp}/gone.csv"], MISSING.replace("{suffix}", ".csv")),
    ("train-out-under-a-file", ["train", "--dataset", "{tmp}/input/ratings.csv", "--out", "{tmp}/input/ratings.csv/sub"],
     UNDER_FILE),
    ("audit-out-under-a-file", ["audit", "--dataset", "{tmp}/input/ratings.csv", "--out", "{tmp}/input/ratings.csv/sub"],
     UNDER_FILE),
    ("synthesize-out-under-a-file",
     ["synthesize", "--dataset", "{tmp}/input/ratings.csv", "--out", "{tmp}/input/ratings.csv/sub"], UNDER_FILE),
    ("synthesize-out-is-the-data-dir", ["synthesize", *ML100K, "--out", "{tmp}/datasets"], IN_DATA_DIR.replace("{sub}", "")),
    ("synthesize-out-in-the-dataset-folder", ["synthesize", *ML100K, "--out", "{tmp}/datasets/ml-100k"],
     IN_DATA_DIR.replace("{sub}", "/ml-100k")),
    ("train-out-is-the-data-dir", ["train", *ML100K, "--out", "{tmp}/datasets"], IN_DATA_DIR.replace("{sub}", "")),
    ("audit-out-inside-the-data-dir", ["audit", *ML100K, "--out", "{tmp}/datasets/runs"], IN_DATA_DIR.replace("{sub}", "/runs")),
]


@pytest.mark.parametrize(("args", "error"), [c[1:] for c in PATH_CASES], ids=[c[0] for c in PATH_CASES])
def test_bad_paths_are_refused_before_loading(tmp_path, monkeypatch, args, error):
    _inputs(tmp_path)
    monkeypatch.chdir(tmp_path)  # for a bare name
    assert _refused_before_loading(monkeypatch, tmp_path, args) == error.format(tmp=tmp_path)


@pytest.fixture
def read_only_folder(tmp_path):
    """``ro/``, a folder no file can be created in, even by root (immutable, ``chattr +i``); and
    the error number creating one gives."""
    folder = tmp_path / "ro"
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o555)
        yield folder, errno.EACCES
        folder.chmod(0o755)
        return
    if not shutil.which("chattr") or subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode:
        pytest.skip("root, and this file system has no immutable folders (chattr +i)")
    try:
        yield folder, errno.EPERM
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True)


@pytest.mark.parametrize("command", ["train", "audit", "synthesize"])
@pytest.mark.parametrize("out", ["{tmp}/ro", "{tmp}/ro/sub"])
def test_a_read_only_out_is_refused_before_loading(tmp_path, monkeypatch, read_only_folder, command, out):
    _inputs(tmp_path)
    folder, number = read_only_folder
    line = _refused_before_loading(monkeypatch, tmp_path, [command, "--dataset", "{tmp}/input/ratings.csv", "--out", out])
    assert line == f"error: --out {out.format(tmp=tmp_path)}: cannot create files in {folder} ({os.strerror(number)}); " \
                   "expected a writable folder"


@pytest.mark.parametrize("command", ["synthesize", "train"])
def test_a_new_folder_beside_an_input_file_is_an_output(tmp_path, monkeypatch, command):
    """``--dataset logs.csv --out synth`` in the folder holding logs.csv: written, logs.csv untouched."""
    (tmp_path / "logs.csv").write_text(SMALL)
    monkeypatch.chdir(tmp_path)
    extra = ["--model", "popularity"] if command == "train" else []
    result = runner.invoke(app, [command, "--dataset", "logs.csv", "--out", "synth", *extra])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "logs.csv").read_text() == SMALL
    assert sorted(p.name for p in tmp_path.iterdir()) == ["logs.csv", "synth"]
    written = sorted(p.name for p in (tmp_path / "synth").iterdir())
    if command == "synthesize":
        assert written == ["private", "public"] and (tmp_path / "synth" / "private" / "replacements.csv").is_file()
    else:
        assert len(written) == 1 and (tmp_path / "synth" / written[0] / "results.json").is_file()


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
