"""Per-user privacy preferences: files keyed by original user id, defaults, clear errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from recprivacy.data.interactions import Interactions
from recprivacy.defenses.upcsdg import PrivacyPreferences, load_preferences
from recprivacy.errors import ConfigError, DataError


@pytest.fixture
def data() -> Interactions:
    return Interactions(users=np.array([0, 1, 2, 3]), items=np.array([0, 1, 0, 1]), n_users=4, n_items=2,
                        user_ids=np.array(["alice", "bob", "carol", "dave"]), name="toy")


def test_uniform_preferences_and_range_checks():
    prefs = PrivacyPreferences.uniform(3, 0.2, 0.9)
    assert prefs.k.tolist() == [0.2] * 3 and prefs.gamma.tolist() == [0.9] * 3 and prefs.n_default == 3
    for k, gamma in ((0.0, 0.5), (1.0, 0.5), (0.5, 0.0), (0.5, 1.0), (-0.1, 0.5), ("x", 0.5)):
        with pytest.raises(ConfigError, match="k|gamma"):
            PrivacyPreferences.uniform(3, k, gamma)


def test_csv_preferences_with_defaults_for_missing_users_and_cells(tmp_path, data):
    path = tmp_path / "prefs.csv"
    path.write_text("user_id,k,gamma\nbob,0.5,0.3\ndave,,0.1\n")
    prefs = load_preferences(path, data, k=0.2, gamma=0.9)
    assert prefs.k.tolist() == [0.2, 0.5, 0.2, 0.2]
    assert prefs.gamma.tolist() == [0.9, 0.3, 0.9, 0.1]
    assert prefs.n_default == 2
    assert prefs.describe()["users_with_default"] == 2


def test_csv_with_only_one_knob_and_integer_ids(tmp_path):
    data = Interactions(users=np.array([0, 1]), items=np.array([0, 0]), n_users=2, n_items=1, user_ids=np.array([196, 7]))
    path = tmp_path / "prefs.csv"
    path.write_text("user_id,gamma\n7,0.4\n")
    assert load_preferences(path, data, 0.3, 0.5).gamma.tolist() == [0.5, 0.4]


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("user_id,k\nbob,0.5\nzoe,0.5\n", r"prefs\.csv:3: user 'zoe' is not a user of toy"),
        ("user_id,k\nbob,1.5\n", r"prefs\.csv:2: k: expected a number strictly between 0 and 1, got '1.5'"),
        ("user_id,gamma\nbob,0\n", r"prefs\.csv:2: gamma: expected a number strictly between 0 and 1"),
        ("user_id,k\nbob,abc\n", r"prefs\.csv:2: k: expected"),
        ("user_id,k\nbob,0.5\nbob,0.4\n", r"prefs\.csv:3: user 'bob' is listed twice"),
        ("user,k\nbob,0.5\n", r"prefs\.csv:1: expected a header with user_id"),
        ("user_id,k,epsilon\nbob,0.5,1\n", r"prefs\.csv:1: unknown column\(s\) \['epsilon'\]"),
    ],
)
def test_csv_errors_name_file_and_line(tmp_path, data, text, match):
    path = tmp_path / "prefs.csv"
    path.write_text(text)
    with pytest.raises(DataError, match=match):
        load_preferences(path, data, 0.2, 0.9)


def test_json_layouts(tmp_path, data):
    mapping = tmp_path / "prefs.json"
    mapping.write_text(json.dumps({"default": {"gamma": 0.5}, "users": {"carol": {"k": 0.6}}}))
    prefs = load_preferences(mapping, data, 0.2, 0.9)
    assert prefs.k.tolist() == [0.2, 0.2, 0.6, 0.2] and prefs.gamma.tolist() == [0.5] * 4
    records = tmp_path / "records.json"
    records.write_text(json.dumps([{"user_id": "alice", "k": 0.4, "gamma": 0.7}]))
    prefs = load_preferences(records, data, 0.2, 0.9)
    assert prefs.k[0] == 0.4 and prefs.gamma[0] == 0.7 and prefs.n_default == 3


@pytest.mark.parametrize(
    ("doc", "match"),
    [
        ({"users": {"zoe": {"k": 0.5}}}, r"users\['zoe'\]: user 'zoe' is not a user of toy"),
        ({"users": {"bob": {"k": 2}}}, r"users\['bob'\]: k: expected a number strictly between 0 and 1"),
        ({"users": {"bob": {"kk": 0.5}}}, r"users\['bob'\]: unknown key"),
        ([{"k": 0.5}], r"entry 0: missing user_id"),
        ({"default": {"k": 1.0}}, r"default\.k: expected a number strictly between 0 and 1"),
        ("nonsense", r"expected"),
    ],
)
def test_json_errors_name_the_entry(tmp_path, data, doc, match):
    path = tmp_path / "prefs.json"
    path.write_text(json.dumps(doc))
    with pytest.raises((DataError, ConfigError), match=match):
        load_preferences(path, data, 0.2, 0.9)


def test_unreadable_files(tmp_path, data):
    with pytest.raises(DataError) as err:
        load_preferences(tmp_path / "missing.csv", data, 0.2, 0.9)
    message = str(err.value)  # the option and what the file must hold, no --data-dir advice
    assert message.startswith(f"{tmp_path / 'missing.csv'}: privacy preferences file (--privacy) not found; expected")
    assert "user_id,k,gamma" in message and "data-dir" not in message
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(DataError, match=r"bad\.json:1: not valid JSON"):
        load_preferences(bad, data, 0.2, 0.9)
    with pytest.raises(ConfigError, match="k: expected a number strictly between 0 and 1"):
        load_preferences(bad, data, 1.2, 0.9)
