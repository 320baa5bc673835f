"""RecBole atomic files: reading RecBole's own layout, round trips, atomic writes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recprivacy.data.interactions import Interactions
from recprivacy.data.loaders.recbole import load_recbole, read_atomic, write_recbole
from recprivacy.errors import DataError


def test_reads_recbole_ml100k_layout(tmp_path):
    folder = tmp_path / "ml-100k"
    folder.mkdir()
    (folder / "ml-100k.inter").write_text(
        "user_id:token\titem_id:token\trating:float\ttimestamp:float\n196\t242\t3\t881250949\n186\t302\t3\t891717742\n"
    )
    (folder / "ml-100k.user").write_text(
        "user_id:token\tage:token\tgender:token\toccupation:token\tzip_code:token\n"
        "186\t39\tF\texecutive\t00000\n196\t49\tM\twriter\t55105\n"
    )
    (folder / "ml-100k.item").write_text(
        "item_id:token\tmovie_title:token_seq\trelease_year:token\tclass:token_seq\n"
        "242\tKolya\t1996\tComedy\n302\tL.A. Confidential\t1997\tCrime Film-Noir Thriller\n"
    )
    data = load_recbole(folder)
    assert data.name == "ml-100k"
    assert list(data.user_ids) == [186, 196] and data.user_ids.dtype == np.int64
    np.testing.assert_array_equal(data.ratings, [3.0, 3.0])
    np.testing.assert_array_equal(data.timestamps, [881250949, 891717742])
    assert data.user_features.to_dict("list") == {
        "age": [39, 49],
        "gender": ["F", "M"],
        "occupation": ["executive", "writer"],
        "zip_code": ["00000", "55105"],
    }
    assert list(data.item_features["movie_title"]) == [("Kolya",), ("L.A.", "Confidential")]
    assert list(data.item_features["class"]) == [("Comedy",), ("Crime", "Film-Noir", "Thriller")]
    assert data.provenance[0] == {
        "step": "load",
        "format": "recbole-atomic",
        "source": str(folder / "ml-100k.inter"),
        "columns": {"user": "user_id", "item": "item_id", "rating": "rating", "timestamp": "timestamp"},
    }


def _rich_interactions() -> Interactions:
    users = pd.DataFrame(
        {
            "gender": pd.Series(["F", "M", "F"], dtype=str),
            "age": [18, 25, 56],
            "score": [0.1 + 0.2, np.nan, -1e-300],
            "quote": pd.Series(['say "hi"', "", "a b"], dtype=str),
        }
    )
    items = pd.DataFrame({"tags": [(1, 2), (), (7,)], "weights": [(0.5, 1.5), (2.0,), (0.25,)]})
    return Interactions(
        users=[0, 1, 2, 2],
        items=[1, 0, 2, 1],
        n_users=3,
        n_items=3,
        ratings=[1.0, 2.5, 5.0, 3.0],
        timestamps=[30, 10, 20, 40],
        user_ids=np.array(["u1", "u2", "u3"], dtype=object),
        item_ids=np.array([5, 7, 9]),
        user_features=users,
        item_features=items,
        name="toy",
    )


def test_write_then_read_round_trips(tmp_path):
    original = _rich_interactions()
    written = write_recbole(original, tmp_path / "toy")
    assert sorted(written) == ["inter", "item", "user"]
    assert written["inter"].read_text().splitlines()[0] == "user_id:token\titem_id:token\trating:float\ttimestamp:float"
    assert (
        written["user"].read_text().splitlines()[0]
        == "user_id:token\tgender:token\tage:token\tscore:float\tquote:token"
    )
    assert written["item"].read_text().splitlines()[0] == "item_id:token\ttags:token_seq\tweights:float_seq"
    back = load_recbole(tmp_path / "toy")
    for field in ("users", "items", "ratings", "timestamps", "user_ids", "item_ids"):
        np.testing.assert_array_equal(getattr(back, field), getattr(original, field))
    pd.testing.assert_frame_equal(back.user_features, original.user_features)
    pd.testing.assert_frame_equal(back.item_features, original.item_features)


def test_write_is_atomic_and_leaves_no_temporary_files(tmp_path):
    original = _rich_interactions()
    write_recbole(original, tmp_path, name="toy")
    before = (tmp_path / "toy.user").read_bytes()
    bad = original.with_changes(user_features=original.user_features.assign(quote=["tab\there", "", ""]))
    with pytest.raises(DataError, match="contains a tab or line break"):
        write_recbole(bad, tmp_path, name="toy")
    assert (tmp_path / "toy.user").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["toy.inter", "toy.item", "toy.user"]


def test_read_atomic_types(tmp_path):
    file = tmp_path / "x.item"
    file.write_text("item_id:token\tprice:float\tcodes:token_seq\n007\t\tA B\n8\t1.5\t\n")
    frame = read_atomic(file, required=("item_id",))
    assert list(frame["item_id"]) == ["007", "8"]  # not all canonical integers: kept as text
    assert np.isnan(frame["price"].iloc[0]) and frame["price"].iloc[1] == 1.5
    assert list(frame["codes"]) == [("A", "B"), ()]
    assert list(frame.index) == [2, 3]
