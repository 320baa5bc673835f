"""MovieLens 100K / 1M parsers on small hand-made files in the original formats."""

from __future__ import annotations

import gzip
import warnings

import numpy as np
import pytest

from recprivacy.data.loaders.movielens import (
    ML1M_PARTIAL_RATINGS,
    ML100K_GENRES,
    load_ml1m,
    load_ml1m_users,
    load_ml100k,
    load_ml100k_users,
)


def _item_line(item: int, title: str, genres: list[str]) -> str:
    flags = "|".join("1" if g in genres else "0" for g in ML100K_GENRES)
    return f"{item}|{title}|01-Jan-1997||http://us.imdb.com/x|{flags}\n"


@pytest.fixture
def ml100k(tmp_path):
    (tmp_path / "u.data").write_text("196\t302\t3\t881250949\n186\t302\t4\t891717742\n196\t242\t5\t881250950\n")
    (tmp_path / "u.user").write_text("186|39|F|executive|00000\n196|49|M|writer|55105\n999|20|M|student|T8H1N\n")
    items = _item_line(242, "Café Society (1996)", ["Comedy"]) + _item_line(
        302, "L.A. Confidential (1997)", ["Crime", "Film-Noir", "Thriller"]
    )
    (tmp_path / "u.item").write_bytes(items.encode("latin-1"))
    return tmp_path


def test_ml100k_maps_ids_ratings_times_and_features(ml100k):
    data = load_ml100k(ml100k)
    assert list(data.user_ids) == [186, 196] and list(data.item_ids) == [242, 302]
    frame = data.to_frame()
    assert frame[["user_id", "item_id"]].values.tolist() == [[196, 302], [186, 302], [196, 242]]
    assert list(frame["rating"]) == [3.0, 4.0, 5.0]
    assert list(frame["timestamp"]) == [881250949, 891717742, 881250950]
    users = data.user_features
    assert list(users.columns) == ["gender", "age", "occupation", "zip_code"]
    assert users.to_dict("list") == {
        "gender": ["F", "M"],
        "age": [39, 49],
        "occupation": ["executive", "writer"],
        "zip_code": ["00000", "55105"],
    }
    items = data.item_features
    assert list(items["title"]) == ["Café Society (1996)", "L.A. Confidential (1997)"]
    assert list(items["genres"]) == ["Comedy", "Crime|Film-Noir|Thriller"]
    columns = {"user": "user_id", "item": "item_id", "rating": "rating", "timestamp": "timestamp"}
    assert data.provenance == (
        {"step": "load", "format": "ml-100k", "source": str(ml100k / "u.data"), "columns": columns},
    )


def test_ml100k_users_table_keeps_users_without_ratings(ml100k):
    users = load_ml100k_users(ml100k)
    assert list(users.index) == [186, 196, 999]
    assert users.loc[999, "zip_code"] == "T8H1N"


@pytest.fixture
def ml1m(tmp_path):
    (tmp_path / "users.dat").write_text("1::F::1::10::48067\n2::M::56::16::70072\n3::M::25::15::55117\n")
    movies = (
        "1::Toy Story (1995)::Animation|Children's|Comedy\n"
        "260::Star Wars: Episode IV - A New Hope (1977)::Action|Sci-Fi\n"
    )
    (tmp_path / "movies.dat").write_bytes(movies.encode("latin-1"))
    return tmp_path


RATINGS_1M = "1::1::5::978300760\n1::260::3::978302109\n2::260::4::978298413\n"


def test_ml1m_reads_double_colon_files_without_warning(ml1m):
    (ml1m / "ratings.dat").write_text(RATINGS_1M)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        data = load_ml1m(ml1m)
    assert list(data.user_ids) == [1, 2] and list(data.item_ids) == [1, 260]
    np.testing.assert_array_equal(data.ratings, [5.0, 3.0, 4.0])
    np.testing.assert_array_equal(data.timestamps, [978300760, 978302109, 978298413])
    assert data.user_features.to_dict("list") == {
        "gender": ["F", "M"],
        "age": [1, 56],
        "occupation": [10, 16],
        "zip_code": ["48067", "70072"],
    }
    assert list(data.item_features["title"]) == ["Toy Story (1995)", "Star Wars: Episode IV - A New Hope (1977)"]
    assert list(data.item_features["genres"]) == ["Animation|Children's|Comedy", "Action|Sci-Fi"]
    assert "partial" not in data.provenance[0]


def test_ml1m_partial_gzip_is_read_with_a_warning(ml1m):
    with gzip.open(ml1m / ML1M_PARTIAL_RATINGS, "wt") as fh:
        fh.write(RATINGS_1M)
    with pytest.warns(UserWarning, match="only users 1-2 are present"):
        data = load_ml1m(ml1m)
    assert len(data) == 3 and data.n_users == 2
    assert data.provenance[0]["source"].endswith(ML1M_PARTIAL_RATINGS)
    assert data.provenance[0]["partial"].startswith("users 1-2")


def test_ml1m_users_table_has_every_user(ml1m):
    users = load_ml1m_users(ml1m)
    assert list(users.index) == [1, 2, 3]
    assert list(users.columns) == ["gender", "age", "occupation", "zip_code"]
