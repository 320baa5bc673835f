"""Bad configs are refused with one line before any model is fitted, naming the file and line
or the setting and what was expected; exit code 2, no traceback, nothing written or changed.

A YAML key given twice in one mapping (PyYAML would keep the last silently) is refused in every
config a command reads: ``run CONFIG``, ``--config``, ``devices CONFIG`` and the saved config of
``run --resume``. A ``dataset.split.leave_last`` most users are too short for is refused; when
only some are, the report describes the split that was made.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from recprivacy.cli import app
from recprivacy.config import load_config
from recprivacy.experiments import load_results

runner = CliRunner()

#: noise given twice at the top level: the last (seeded noise) would win silently
TWICE = "study: train\nnoise: secure\ndataset: {name: synthetic}\nnoise: simulation\n"
TWICE_NESTED = "study: audit\ndataset:\n  name: synthetic\n  split:\n    kind: random\n    kind: temporal\n"
NOISE_TWICE = "error: {cfg}:4: invalid YAML: key 'noise' appears twice in one mapping (first on line 2); expected each key once"
KIND_TWICE = "error: {cfg}:6: invalid YAML: key 'kind' appears twice in one mapping (first on line 5); expected each key once"


def _tree(folder: Path) -> dict[str, str]:
    """sha256 of every file under ``folder`` ('' for a folder), by relative path."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else ""
            for p in sorted(folder.rglob("*"))}


def _no_fit(*args, **kwargs):
    raise AssertionError("a model was built although the command should have stopped before training")


def _refused(tmp_path: Path, args: list[str]) -> str:
    """The one error line of the command (exit code 2, no traceback); nothing under
    ``tmp_path`` written or changed."""
    before = _tree(tmp_path)
    result = runner.invoke(app, [a.format(tmp=tmp_path) for a in args])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in result.output, result.output
    assert _tree(tmp_path) == before
    return lines[0]


YAML_CASES = [
    # (id, command line, config text, where the config is, the exact error)
    ("run", ["run", "{tmp}/c.yaml", "--out", "{tmp}/runs"], TWICE, "c.yaml", NOISE_TWICE),
    ("audit-config-nested", ["audit", "--config", "{tmp}/c.yaml", "--out", "{tmp}/runs"], TWICE_NESTED, "c.yaml", KIND_TWICE),
    ("matrix-config", ["matrix", "--config", "{tmp}/c.yaml", "--out", "{tmp}/runs"], TWICE, "c.yaml", NOISE_TWICE),
    ("synthesize-config", ["synthesize", "--config", "{tmp}/c.yaml", "--out", "{tmp}/synth"], TWICE, "c.yaml", NOISE_TWICE),
    ("devices", ["devices", "{tmp}/c.yaml", "--out", "{tmp}/fed"], TWICE, "c.yaml", NOISE_TWICE),
    ("run-resume", ["run", "--resume", "{tmp}/old"], TWICE, "old/config.yaml", NOISE_TWICE),
]


@pytest.mark.parametrize(("args", "text", "where", "error"), [c[1:] for c in YAML_CASES], ids=[c[0] for c in YAML_CASES])
def test_a_yaml_key_given_twice_is_refused(tmp_path, monkeypatch, args, text, where, error):
    monkeypatch.setattr("recprivacy.experiments.train.load_dataset", _no_fit)
    config = tmp_path / where
    config.parent.mkdir(exist_ok=True)
    config.write_text(text)
    assert _refused(tmp_path, args) == error.format(cfg=config)


def test_a_merged_key_may_still_be_overridden(tmp_path):
    """``<<: {...}`` followed by one of its keys is YAML's override, not a key given twice."""
    path = tmp_path / "c.yaml"
    path.write_text("study: train\ndataset:\n  split:\n    <<: {kind: temporal, leave_last: 3}\n    leave_last: 1\n")
    split = load_config(path).dataset.split
    assert (split.kind, split.leave_last) == ("temporal", 1)


# ---------------------------------------------------------------------------- leave_last

#: 6 users with 4 interactions each
FOUR_EACH = "user_id,item_id\n" + "".join(f"{u},{(4 * u + j) % 24 + 1}\n" for u in range(1, 7) for j in range(4))
#: 6 users with 2 interactions each
TWO_EACH = "user_id,item_id\n" + "".join(f"{u},{(2 * u + j) % 24 + 1}\n" for u in range(1, 7) for j in range(2))
#: 5 users with 12 interactions, 1 with 3
MIXED = "user_id,item_id\n" + "".join(f"{u},{(5 * u + j) % 40 + 1}\n" for u in range(1, 7) for j in range(12 if u < 6 else 3))
TEMPORAL = ["--set", "dataset.split.kind=temporal", "--set"]


@pytest.mark.parametrize(("table", "leave_last", "error"), [
    (FOUR_EACH, 100, "error: dataset.split.leave_last=100: 6 of 6 users of ratings have fewer than 201 interactions "
                     "(100 test + 100 validation + 1 training), so they would keep 1 training row; "
                     "expected leave_last <= 1 for this dataset"),
    (TWO_EACH, 1, "error: dataset.split.leave_last=1: 6 of 6 users of ratings have fewer than 3 interactions "
                  "(1 test + 1 validation + 1 training), so they would keep 1 training row; "
                  "expected kind: random (most users have fewer than 3 interactions)"),
], ids=["leave-last-100", "no-leave-last-fits"])
def test_a_leave_last_most_users_are_too_short_for_is_refused(tmp_path, monkeypatch, table, leave_last, error):
    monkeypatch.setattr("recprivacy.experiments.train.make_model", _no_fit)
    (tmp_path / "ratings.csv").write_text(table)
    args = ["train", "--dataset", "{tmp}/ratings.csv", *TEMPORAL, f"dataset.split.leave_last={leave_last}",
            "--out", "{tmp}/runs"]  # fmt: skip
    assert _refused(tmp_path, args) == error


def test_the_report_describes_the_split_that_was_made(tmp_path):
    """leave_last=2 with one user of 3 interactions: that user keeps 1 for training, 2 for test."""
    (tmp_path / "ratings.csv").write_text(MIXED)
    result = runner.invoke(app, ["train", "--dataset", str(tmp_path / "ratings.csv"), "--model", "popularity",
                                 *TEMPORAL, "dataset.split.leave_last=2", "--out", str(tmp_path / "runs")])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert (tmp_path / "ratings.csv").read_text() == MIXED
    (run_dir,) = (tmp_path / "runs").iterdir()
    results = load_results(run_dir)
    sizes = {row[0]: row[3] for row in results.tables["data_splits"].rows}
    assert sizes == {"all (preprocessed)": 63, "train": 5 * 8 + 1, "validation": 5 * 2, "test": 5 * 2 + 2}
    text = next(s.text for s in results.sections if s.title == "Data and model")
    assert ("temporal split: each user's last 2 interactions held out for test and the 2 before them for validation "
            "(1 of 6 users have fewer than 5 interactions: they keep only their first for training and hold out the "
            "rest, test first)") in text  # fmt: skip
