"""``AuditInputs``: the audit's files are read once, their columns renamed in one place, and the
same data give the same inputs from files, from a Python call and through ``Audit``; the audit's
config is built once, the same from the command line's settings and from ``Audit``'s keywords."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from recprivacy import Audit, Target
from recprivacy.config import load_config
from recprivacy.data import tables
from recprivacy.experiments.audit import audit_inputs, files
from recprivacy.experiments.audit.audit_inputs import AuditInputs

USERS, MEMBERS = range(1, 7), [1, 2, 3, 4]
INTERACTIONS = pd.DataFrame([(u, 10 + (u + j) % 8, j) for u in USERS for j in range(4)], columns=["uid", "iid", "timestamp"])
TEST = INTERACTIONS[INTERACTIONS["uid"].isin(MEMBERS) & (INTERACTIONS["timestamp"] == 3)][["uid", "iid"]]
FEATURES = pd.DataFrame({"uid": list(USERS), "gender": list("FMFMFM")})
LISTS = pd.DataFrame([(u, r, 10 + (u + 4 + r) % 8) for u in USERS for r in (1, 2)], columns=["uid", "pos", "iid"])
EXPOSURES = pd.DataFrame([(u, s, 10 + (u + s + j) % 8, int(j == 0)) for u in USERS for s in (1, 2) for j in range(3)],
                         columns=["uid", "slate_id", "iid", "clicked"])  # fmt: skip
COLUMNS = {"user_col": "uid", "item_col": "iid", "rank_col": "pos"}
CANONICAL = {"uid": "user_id", "iid": "item_id", "pos": "rank"}


def _files(folder: Path) -> dict[str, Path]:
    """The tables above as CSV files in ``folder``, by ``from_files`` argument."""
    frames = {"interactions": INTERACTIONS, "members": pd.DataFrame({"uid": MEMBERS}), "test": TEST,
              "user_features": FEATURES, "exposures": EXPOSURES, "lists": LISTS}  # fmt: skip
    paths = {name: folder / f"{name}.csv" for name in frames}
    for name, frame in frames.items():
        frame.to_csv(paths[name], index=False)
    return paths


def _python_call() -> AuditInputs:
    """The same data given from Python, under recprivacy's column names."""
    lists = Target.from_lists(LISTS.rename(columns=CANONICAL)).lists
    return AuditInputs(INTERACTIONS.rename(columns=CANONICAL), MEMBERS, [5, 6], test=TEST.rename(columns=CANONICAL),
                       user_features=FEATURES.rename(columns=CANONICAL), exposures=EXPOSURES.rename(columns=CANONICAL),
                       lists=lists)  # fmt: skip


def test_each_file_is_read_once(tmp_path, monkeypatch):
    paths = _files(tmp_path)
    opened: Counter[str] = Counter()
    read_table = tables.read_table

    def counted(path):
        opened[str(path)] += 1
        return read_table(path)

    monkeypatch.setattr(tables, "read_table", counted)  # lists and exposures (data.tables.table_source)
    monkeypatch.setattr(files, "read_table", counted)  # interactions, members, test, user features
    AuditInputs.from_files(**paths, **COLUMNS)
    assert opened == Counter({str(path): 1 for path in paths.values()})


def test_files_and_a_python_call_give_equal_inputs(tmp_path):
    read = AuditInputs.from_files(**_files(tmp_path), **COLUMNS)
    assert list(read.interactions.columns) == ["user_id", "item_id", "timestamp"]
    assert list(read.user_features.columns) == ["user_id", "gender"]
    assert read.interactions.attrs["source"] == str(tmp_path / "interactions.csv")  # rows stay located
    assert read == _python_call()
    assert read != AuditInputs(read.interactions, MEMBERS[:3], [4, 5, 6], test=read.test, user_features=read.user_features,
                               exposures=read.exposures, lists=read.lists)  # fmt: skip
    assert read != AuditInputs(read.interactions.assign(timestamp=0), read.members, read.non_members, test=read.test,
                               user_features=read.user_features, exposures=read.exposures, lists=read.lists)  # fmt: skip


def test_audit_holds_the_inputs_of_its_keywords_and_its_target_lists(tmp_path):
    read = AuditInputs.from_files(**_files(tmp_path), **COLUMNS)
    given = _python_call()
    audit = Audit(Target.from_lists(read.lists), given.interactions, MEMBERS, [5, 6], test=given.test,
                  user_features=given.user_features, exposures=EXPOSURES.rename(columns=CANONICAL))  # fmt: skip
    assert audit.inputs == read
    assert audit.inputs.lists is read.lists


def test_members_default_to_every_user_and_the_others_are_non_members(tmp_path):
    paths = _files(tmp_path)
    read = AuditInputs.from_files(paths["interactions"], user_col="uid", item_col="iid")
    assert list(read.members) == list(USERS)
    assert read.non_members.empty
    assert read.test is read.user_features is read.exposures is read.lists is None


def test_the_config_is_built_once_the_same_from_settings_and_from_keywords(tmp_path):
    read = AuditInputs.from_files(**_files(tmp_path), **COLUMNS)
    target = Target.from_lists(read.lists)
    settings = load_config(base={"name": "mine", "study": "audit", "seed": 3, "noise": "simulation", "threads": 1,
                                 "dataset": {"preprocessing": {"dedup": False}}, "eval": {"ks": [2]},
                                 "study_options": {"sections": ["utility"], "utility": {"k": 2}}})  # fmt: skip
    from_settings = Audit.from_inputs(target, read, settings)
    keywords = Audit(target, read.interactions, read.members, read.non_members, sections=["utility"],
                     options={"utility": {"k": 2}}, seed=3, noise="simulation", ks=[2], name="mine", dedup=False)  # fmt: skip
    assert from_settings.config.dataset.name == keywords.config.dataset.name == audit_inputs.INTERACTIONS
    assert from_settings.config.threads == 1  # the command line's settings are kept, not rebuilt
    assert from_settings.config.model_copy(update={"threads": None}) == keywords.config
    with pytest.raises(AttributeError):
        read.members = MEMBERS  # frozen
