"""The bad inputs of the issue-46 probe (docs/status-notes.md, "Bad-input probe (issue 46)")
that were a traceback, an unclear error or a silent wrong result: each is now one line
``error: ...`` with exit code 2, no traceback, and every file that was there unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_bad_input_audit_files import GOOD, INTERACTIONS, LISTS, MEMBERS, OPTIONS, _history
from test_bad_input_config import _tree
from typer.testing import CliRunner

from recprivacy.cli import app

runner = CliRunner()
OWN = ["audit", "--interactions", "{tmp}/in/interactions.csv", "--lists", "{tmp}/in/lists.csv", "--members",
       "{tmp}/in/members.csv", *OPTIONS, "--out", "{tmp}/runs"]  # fmt: skip
RATED = INTERACTIONS.replace("\n", ",4\n").replace("timestamp,4\n", "timestamp,rating\n", 1)
SMALL = "user_id,item_id,timestamp\n" + "".join(f"{u},{(4 * u + j) % 24 + 1},{100 + j}\n" for u in range(1, 7) for j in range(4))
TRAIN = ["train", "--dataset", "{tmp}/in/small.csv", "--model", "popularity", "--out", "{tmp}/runs"]
EXPOSURES = "user_id,slate_id,item_id,clicked\n"
LISTS_ROLES = "the user, rank and item columns are ['user_id', 'user_id', 'item_id']; expected three different columns"

CASES = [
    # (id, files replacing the good ones under in/, extra arguments, the error after 'error: ' ({tmp}: the folder))
    ("trailing-separator", {"interactions.csv": INTERACTIONS.replace("\n", ",\n").replace("timestamp,\n", "timestamp\n", 1)},
     [], "{tmp}/in/interactions.csv:2: 4 fields but the header names 3 columns; expected one field per column (no "
         "separator at the end of the line)"),
    ("latin-1-byte", {"interactions.csv": INTERACTIONS.replace("\n2,106,", "\n2,caf\xe9,", 1).encode("latin-1")}, [],
     "{tmp}/in/interactions.csv:8: byte 79 is not valid utf-8 text; expected a utf-8 text file"),
    ("empty-interactions", {"interactions.csv": ""}, [],
     "{tmp}/in/interactions.csv: the file is empty; expected a header line naming the columns"),
    ("empty-members", {"members.csv": ""}, [], "{tmp}/in/members.csv: the file is empty; expected a header line naming "
                                               "the columns"),
    ("column-twice", {"interactions.csv": INTERACTIONS.replace("user_id,item_id,timestamp", "user_id,user_id,item_id", 1)},
     [], "{tmp}/in/interactions.csv:1: column 'user_id' appears twice in the header; expected unique names"),
    ("huge-timestamp", {"interactions.csv": RATED.replace(",1,4\n", ",1e30,4\n", 1)}, [],
     "{tmp}/in/interactions.csv:3: field 'timestamp': 1e+30 is outside the range of a 64-bit number of seconds; "
     "expected a Unix time"),
    ("lists-header-only", {"lists.csv": "user_id,rank,item_id\n"}, [],
     "{tmp}/in/lists.csv: no served lists after the header line; expected one row per served item"),
    ("rank-col-is-user-col", {}, ["--rank-col", "user_id"], "{tmp}/in/lists.csv: " + LISTS_ROLES),
    ("lists-of-members-only", {"lists.csv": "".join(line for line in LISTS.splitlines(True) if line[:2] not in ("9,", "10", "11", "12"))},
     [], "{tmp}/in/lists.csv: no served list for user 9 (4 users without one); expected a list for every member and "
         "non-member audited"),
    ("members-header-only", {"members.csv": "user_id\n"}, [],
     "{tmp}/in/members.csv: no user ids after the header line; expected the members' ids (without --members every user "
     "counts as a member)"),
    ("exposures-header-only", {"exposures.csv": EXPOSURES}, ["--exposures", "{tmp}/in/exposures.csv"],
     "{tmp}/in/exposures.csv: no exposures after the header line; expected one row per shown item"),
    ("option-of-a-section-not-run", {}, ["--set", "study_options.attribute.zeta=2"],
     "config: study_options.attribute.zeta: Input should be less than 1 (got 2)"),
    ("shadow-model-of-a-section-not-run", {}, ["--shadow-model", "svdpp"],
     "config: study_options.membership.shadow_algorithm: expected a built-in recommender that serves new users: "
     "popularity, itemcf, lfm, bpr, als, neumf, ncf, gmf, mlp, lightgcn, sasrec, srgnn (got 'svdpp')"),
    ("no-sections", {}, ["--set", "study_options.sections=[]"],
     "config: study_options.sections: List should have at least 1 item after validation, not 0 (got [])"),
    ("holdout-above-1", {}, ["--set", "study_options.holdout_users=1.5"],
     "config: study_options.holdout_users: Input should be less than 1 (got 1.5)"),
    ("test-is-every-member-row", {"test.csv": "user_id,item_id\n" + "".join(f"{u},{i}\n" for u in MEMBERS for i in _history(u))},
     ["--test", "{tmp}/in/test.csv"], "{tmp}/in/test.csv: holds every interaction of the 8 members, so the target's "
     "training data would be empty; expected rows of the interactions held out of the members' training, not all"),
    ("model-with-interactions", {}, ["--model", "lightgcn"],
     "--dataset, --data-dir and --model choose a built-in target the audit trains; with --interactions the target is "
     "--lists or --target, expected without them"),
    ("fit-with-lists", {}, ["--fit"], "--fit: expected --target module:name naming a training function (not --lists)"),
]  # fmt: skip


@pytest.mark.parametrize(("files", "extra", "error"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_own_audit_input_is_one_line(tmp_path, files, extra, error):
    _write(tmp_path / "in", {**GOOD, **files})
    assert _refused(tmp_path, [*OWN, *extra]) == f"error: {error.format(tmp=tmp_path)}"


def test_train_huge_timestamp(tmp_path):
    _write(tmp_path / "in", {"small.csv": SMALL.replace(",10,101\n", ",10,1e30\n", 1)})
    assert _refused(tmp_path, TRAIN) == (f"error: {tmp_path}/in/small.csv:7: field 'timestamp': 1e+30 is outside the "
                                         "range of a 64-bit number of seconds; expected a Unix time")  # fmt: skip


def test_empty_config(tmp_path):
    _write(tmp_path / "in", {"c.yaml": "# nothing yet\n"})
    line = _refused(tmp_path, ["run", "{tmp}/in/c.yaml", "--out", "{tmp}/runs"])
    assert line == f"error: {tmp_path}/in/c.yaml: the config is empty (no keys); expected a mapping such as 'study: train'"


def _edit_results(results: dict) -> None:
    """Drop the sections of a results file."""
    del results["sections"]


def _short_row(results: dict) -> None:
    """Cut the first row of the first table to one cell."""
    table = next(iter(results["tables"].values()))
    table["rows"][0] = table["rows"][0][:1]


@pytest.mark.parametrize(("edit", "problem"), [
    (_edit_results, "sections: missing; expected the metrics, tables, sections every run writes"),
    (_short_row, "tables.metrics.rows.0: 1 cells; expected 3, one per column"),
], ids=["sections-removed", "short-row"])  # fmt: skip
def test_report_on_an_edited_results_file(tmp_path, edit, problem):
    run = _finished_run(tmp_path)
    results = json.loads((run / "results.json").read_text())
    edit(results)
    (run / "results.json").write_text(json.dumps(results))
    for name in ("report.md", "report.html"):
        (run / name).unlink()
    line = _refused(tmp_path, ["report", str(run)])
    assert line == f"error: {run}/results.json: not a recprivacy results file: {problem}"


def test_report_on_the_results_file_itself(tmp_path):
    run = _finished_run(tmp_path)
    line = _refused(tmp_path, ["report", str(run / "results.json")])
    assert line == f"error: {run}/results.json: is a file; expected a run folder (the folder holding results.json)"


def _finished_run(tmp_path: Path) -> Path:
    """A popularity training run on a tiny table, under ``tmp_path/runs``."""
    _write(tmp_path / "in", {"small.csv": SMALL})
    result = runner.invoke(app, [a.format(tmp=tmp_path) for a in TRAIN])
    assert result.exit_code == 0, result.output
    (run,) = (tmp_path / "runs").iterdir()
    return run


def _write(folder: Path, files: dict[str, str | bytes]) -> None:
    folder.mkdir(parents=True)
    for name, content in files.items():
        (folder / name).write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))


def _refused(tmp_path: Path, args: list[str]) -> str:
    """The one error line of the command: exit code 2, no traceback, nothing under ``tmp_path``
    written or changed."""
    before = _tree(tmp_path)
    result = runner.invoke(app, [a.format(tmp=tmp_path) for a in args])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    assert _tree(tmp_path) == before
    return lines[0]
