"""`recprivacy synthesize` refuses a bad --out or --privacy before any work: exit code 2, one
line naming the option and what was expected, no data loaded or model trained, and every file
that was there before (the input dataset above all) unchanged byte for byte."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from typer.testing import CliRunner

import recprivacy.experiments.upcsdg.release as upcsdg_release
from recprivacy.cli import app
from recprivacy.data.synthetic import make_synthetic
from recprivacy.defenses.upcsdg.release import lightgcn_text

runner = CliRunner()


def _tree(folder: Path) -> dict[str, str]:
    """sha256 of every file under ``folder`` by relative path (folders listed with an empty hash)."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else ""
            for p in sorted(folder.rglob("*"))}


def _lightgcn_input(tmp_path: Path) -> None:
    """``data/``: a LightGCN dataset folder (the issue's case: its train.txt was overwritten)."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "train.txt").write_text(lightgcn_text(make_synthetic(n_users=20, n_items=60, n_interactions=450)))


def _movielens_input(tmp_path: Path) -> None:
    """``ml/ml-100k/``: a named dataset found through --data-dir (never read: refused first)."""
    (tmp_path / "ml" / "ml-100k").mkdir(parents=True)
    (tmp_path / "ml" / "ml-100k" / "u.data").write_text("1\t10\t5\t881250949\n")


def _old_release(tmp_path: Path, part: str) -> None:
    """``old/PART/``: a folder that already holds a release's folder."""
    (tmp_path / "old" / part).mkdir(parents=True)
    (tmp_path / "old" / part / "train.txt").write_text("0 1 2\n")


CASES = [
    # (id, set-up, command-line arguments, fragment of the one-line error)
    ("out-is-the-input", _lightgcn_input, ["--dataset", "{tmp}/data", "--out", "{tmp}/data"],
     "--out {tmp}/data: is inside the input {tmp}/data"),
    ("out-inside-the-input", _lightgcn_input, ["--dataset", "{tmp}/data", "--out", "{tmp}/data/release"],
     "is inside the input {tmp}/data; choose a folder outside the input data"),
    ("out-inside-a-named-dataset", _movielens_input,
     ["--dataset", "ml-100k", "--data-dir", "{tmp}/ml", "--out", "{tmp}/ml/ml-100k/release"], "is inside the input"),
    ("out-holds-public", lambda t: _old_release(t, "public"), ["--out", "{tmp}/old"],
     "--out {tmp}/old: already holds public; choose a new or empty folder"),
    ("out-holds-private", lambda t: _old_release(t, "private"), ["--out", "{tmp}/old"], "already holds private"),
    ("out-is-a-file", lambda t: (t / "notes.txt").write_text("mine\n"), ["--out", "{tmp}/notes.txt"],
     "--out {tmp}/notes.txt: is an existing file; expected a folder"),
    ("privacy-file-missing", lambda t: None, ["--privacy", "{tmp}/prefs.csv", "--out", "{tmp}/new"],
     "{tmp}/prefs.csv: privacy preferences file (--privacy) not found; expected a CSV with a header user_id,k,gamma"),
]


@pytest.mark.parametrize(("setup", "args", "fragment"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_output_or_preferences_is_refused_before_any_work(tmp_path, monkeypatch, setup, args, fragment):
    setup(tmp_path)
    before = _tree(tmp_path)
    loaded: list[object] = []
    monkeypatch.setattr(upcsdg_release, "prepare_data", lambda *a, **kw: loaded.append(a))
    result = runner.invoke(app, ["synthesize", *(a.format(tmp=tmp_path) for a in args)])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert fragment.format(tmp=tmp_path) in lines[0]
    assert not loaded                                    # refused before loading, so before training
    assert _tree(tmp_path) == before                     # nothing written, nothing changed
