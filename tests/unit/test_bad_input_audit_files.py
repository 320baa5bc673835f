"""Bad input to ``recprivacy audit --interactions ... --lists ...`` and to ``Audit``: one table row
per case. A refused case prints one line ``error: <file>[:<line>]: ...`` and exits 2 with no
traceback; a case with a correct result says what it dropped. Inputs are never modified.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_bad_input_data import _fingerprints
from typer.testing import CliRunner

from recprivacy import Audit, Target
from recprivacy.cli import app
from recprivacy.data.interactions import Interactions
from recprivacy.errors import DataError
from recprivacy.experiments.audit.inputs import features_by_internal_id

USERS, ITEMS, MEMBERS = range(1, 13), range(100, 115), range(1, 9)


def _history(user: int) -> list[int]:
    return [100 + (3 * user + j) % 15 for j in range(6)]


def _csv(header: str, rows: list[tuple]) -> str:
    return header + "\n" + "".join(",".join(map(str, row)) + "\n" for row in rows)


def _served(user: int) -> list[int]:
    """The logged list of ``user``: the first five items of the catalogue it never interacted with."""
    return [i for i in ITEMS if i not in _history(user)][:5]


INTERACTIONS = _csv("user_id,item_id,timestamp", [(u, i, t) for u in USERS for t, i in enumerate(_history(u))])
LISTS = _csv("user_id,rank,item_id", [(u, r + 1, i) for u in USERS for r, i in enumerate(_served(u))])
FEATURES = _csv("user_id,gender,age", [(u, "FM"[u % 2], 20 + 3 * u) for u in USERS])
TEST = _csv("user_id,item_id", [(u, _history(u)[-1]) for u in MEMBERS])
GOOD = {"interactions.csv": INTERACTIONS, "lists.csv": LISTS, "members.csv": _csv("user_id", [(u,) for u in MEMBERS]),
        "users.csv": FEATURES, "test.csv": TEST}  # fmt: skip
OPTIONS = ["--set", "eval.ks=[2]", "--set", "study_options.sections=[utility]", "--set", "study_options.utility.k=2"]


@dataclass(frozen=True)
class Bad:
    """Files (name -> text) replacing the good ones, the file and line the error names, its text
    (``{folder}``: the folder of the files)."""

    name: str
    files: dict[str, str]
    where: str
    line: int | None
    expected: str
    options: list[str] = field(default_factory=list)


BAD = [
    Bad("list_item_twice", {"lists.csv": LISTS.replace(f"\n1,2,{_served(1)[1]}\n", f"\n1,2,{_served(1)[0]}\n", 1)},
        "lists.csv", 3, f"the list of user 1 holds item {_served(1)[0]} twice (ranks 1 and 2); expected distinct items "
        "in a list"),
    Bad("user_features_twice", {"users.csv": FEATURES + "4,M,40\n"}, "users.csv", 14,
        "user 4 is listed twice; expected one row per user"),
    Bad("user_features_other_id_name", {"users.csv": FEATURES.replace("user_id,", "uid,", 1)}, "users.csv", None,
        "missing column 'user_id' (--user-col); columns present: ['uid', 'gender', 'age']"),
    Bad("user_features_without_ids", {"users.csv": _csv("gender,age", [("FM"[u % 2], 20 + 3 * u) for u in USERS])},
        "users.csv", None, "missing column 'user_id' (--user-col); columns present: ['gender', 'age']"),
    Bad("user_features_of_other_users", {"users.csv": _csv("user_id,gender", [(u + 100, "F") for u in USERS])}, "users.csv", None,
        "none of the 12 user ids is in the interactions; expected the audited users' ids"),
    Bad("repeated_rows_with_dedup_false", {"interactions.csv": INTERACTIONS + f"1,{_history(1)[0]},9\n"}, "interactions.csv",
        74, f"user 1 and item {_history(1)[0]} repeat an earlier row; expected one row per (user, item) pair, as "
        "dataset.preprocessing.dedup is false", ["--set", "dataset.preprocessing.dedup=false"]),
    Bad("test_pairs_all_absent", {"test.csv": _csv("user_id,item_id", [(u, _served(u)[0]) for u in MEMBERS])}, "test.csv", None,
        "none of the 8 rows is a member's interaction (8 (user, item) pairs not in the interactions, 0 of non-members); "
        "expected rows of the interactions held out of the members' training"),
    Bad("test_of_non_members_only", {"test.csv": _csv("user_id,item_id", [(12, _history(12)[0])])}, "test.csv", None,
        "none of the 1 rows is a member's interaction (0 (user, item) pairs not in the interactions, 1 of non-members); "
        "expected rows of the interactions held out of the members' training"),
    Bad("text_item_id_in_interactions", {"interactions.csv": INTERACTIONS.replace(f"\n2,{_history(2)[0]},", "\n2,n12,", 1)},
        "interactions.csv", None, "item id 'n12' is not a number, so all its item ids are compared as text and none "
        "equals a numeric item id of {folder}/lists.csv; expected one id type in every file"),
    Bad("text_item_id_in_test", {"test.csv": TEST.replace(f"\n2,{_history(2)[-1]}\n", "\n2,n12\n", 1)}, "test.csv", 3,
        "item id 'n12' is not a number, so all its item ids are compared as text and none equals a numeric "
        "item id of {folder}/interactions.csv; expected one id type in every file"),
    Bad("text_user_id_in_features", {"users.csv": FEATURES.replace("\n5,", "\nu5,", 1)}, "users.csv", 6,
        "user id 'u5' is not a number, so all its user ids are compared as text and none equals a numeric "
        "user id of {folder}/interactions.csv; expected one id type in every file"),
    Bad("unknown_member", {"members.csv": "user_id\n1\n99\n"}, "members.csv", 3, "user id 99 is not in the interactions"),
]  # fmt: skip


def _write(folder: Path, files: dict[str, str]) -> dict[str, tuple[str, int]]:
    folder.mkdir()
    for name, text in {**GOOD, **files}.items():
        (folder / name).write_text(text)
    return _fingerprints(folder)


def _audit(folder: Path, *options: str):
    args = ["--interactions", "interactions.csv", "--lists", "lists.csv", "--members", "members.csv",
            "--user-features", "users.csv", "--test", "test.csv"]  # fmt: skip
    paths = [str(folder / a) if a.endswith(".csv") else a for a in args]
    return CliRunner().invoke(app, ["audit", *paths, *OPTIONS, *options, "--out", str(folder.parent / "runs")])


@pytest.mark.parametrize("case", BAD, ids=lambda c: c.name)
def test_bad_audit_file_is_one_line_exit_2_and_unchanged(tmp_path, case):
    folder = tmp_path / "in"
    before = _write(folder, case.files)
    result = _audit(folder, *case.options)
    where = f"{folder / case.where}:{case.line}: " if case.line is not None else f"{folder / case.where}: "
    assert result.exit_code == 2, result.output
    assert result.stderr == f"error: {where}{case.expected.format(folder=folder)}\n"
    assert "Traceback" not in result.output
    assert _fingerprints(folder) == before
    assert not (tmp_path / "runs").exists()


def _run(tmp_path: Path, files: dict[str, str], monkeypatch) -> tuple[dict, str]:
    """A successful audit of the good files with ``files`` replaced: its results.json and stderr."""
    monkeypatch.delenv("RECPRIVACY_QUIET")
    folder = tmp_path / "in"
    before = _write(folder, files)
    result = _audit(folder)
    assert result.exit_code == 0, result.output
    assert _fingerprints(folder) == before
    (run,) = (tmp_path / "runs").iterdir()
    return json.loads((run / "results.json").read_text()), result.stderr


def test_repeated_interactions_are_dropped_as_the_config_says_and_counted(tmp_path, monkeypatch):
    repeated = "".join(f"{u},{_history(u)[0]},{9}\n" for u in (1, 2, 3))
    results, stderr = _run(tmp_path, {"interactions.csv": INTERACTIONS + repeated}, monkeypatch)
    assert results["config"]["dataset"]["preprocessing"]["dedup"] is True
    assert results["dataset"]["interactions"] == 72  # 12 users x 6 distinct items
    assert {"step": "deduplicate", "keep": "last", "removed": 3} in results["dataset"]["provenance"]
    assert "interactions.csv: 3 repeated (user, item) rows of 75 dropped, the latest kept" in stderr


def test_test_rows_not_in_the_interactions_are_dropped_and_counted(tmp_path, monkeypatch):
    extra = "".join(f"{u},{_served(u)[0]}\n" for u in (1, 2))
    results, stderr = _run(tmp_path, {"test.csv": TEST + extra}, monkeypatch)
    step = next(s for s in results["dataset"]["provenance"] if s["step"] == "hold_out")
    assert (step["rows"], step["held"], step["not_in_interactions"], step["non_members"]) == (10, 8, 2, 0)
    assert "test.csv: 2 of 10 rows dropped (2 (user, item) pairs not in the interactions, 0 of non-members)" in stderr
    assert "utility" in {key.split("/")[0] for key in results["metrics"]}


DATA = Interactions(users=[0, 1, 2], items=[0, 0, 0], n_users=3, n_items=1, user_ids=np.array([7, 8, 9]))


def test_user_features_are_matched_by_id_never_by_position():
    shuffled = pd.DataFrame({"user_id": [9, 7, 8], "gender": ["M", "F", "M"]})
    assert list(features_by_internal_id(shuffled, DATA)["gender"]) == ["F", "M", "M"]
    assert list(features_by_internal_id(shuffled.set_index("user_id"), DATA)["gender"]) == ["F", "M", "M"]
    with pytest.raises(DataError) as err:
        features_by_internal_id(shuffled.drop(columns="user_id"), DATA)
    assert str(err.value) == ("user_features: no user id column: expected a 'user_id' column (or an index named "
                              "'user_id'); columns present: ['gender']")  # fmt: skip


LOGGED = Target.from_lists(pd.DataFrame({"user_id": [7], "rank": [1], "item_id": [0]}))
PAIRS = pd.DataFrame({"user_id": [7, 8, 9], "item_id": [0, 1, 2]})


def _api_refuses(expected: str, interactions: pd.DataFrame = PAIRS, **options) -> None:
    with pytest.raises(DataError) as err:
        Audit(LOGGED, interactions, [7, 8], **options).run()
    assert str(err.value) == expected


def test_the_python_api_names_the_argument_and_row():
    _api_refuses("interactions: index 1: user 8 and item 1 repeat an earlier row; expected one row per (user, item) "
                 "pair, as dataset.preprocessing.dedup is false", PAIRS.iloc[[0, 1, 1, 2]], dedup=False)  # fmt: skip
    _api_refuses("test: item id 'a' is not a number, so all its item ids are compared as text and none equals a "
                 "numeric item id of interactions; expected one id type in every file",
                 test=PAIRS.assign(item_id=list("abc")))  # fmt: skip
    _api_refuses("test: none of the 1 rows is a member's interaction (1 (user, item) pairs not in the interactions, "
                 "0 of non-members); expected rows of the interactions held out of the members' training",
                 test=pd.DataFrame({"user_id": [7], "item_id": [1]}))  # fmt: skip
