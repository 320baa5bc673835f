"""Dataset names, the data-folder search order, and names that are paths."""

from __future__ import annotations

import numpy as np
import pytest

from recprivacy.data.loaders.recbole import write_recbole
from recprivacy.data.registry import list_datasets, load_dataset, load_exposure, resolve_data_dir
from recprivacy.errors import ConfigError, DataError


def _ml100k(folder, rating: int = 3):
    folder.mkdir(parents=True)
    (folder / "u.data").write_text(f"1\t10\t{rating}\t100\n2\t10\t4\t200\n")
    (folder / "u.user").write_text("1|30|F|other|00000\n2|40|M|writer|11111\n")
    (folder / "u.item").write_text("10|A (1990)|01-Jan-1990||u|" + "|".join(["0"] * 19) + "\n")
    return folder


@pytest.fixture
def places(tmp_path, monkeypatch):
    """Three empty search places: an explicit folder, $RECPRIVACY_DATA and the cache."""
    roots = {name: tmp_path / name for name in ("explicit", "env", "cache")}
    for root in roots.values():
        root.mkdir()
    monkeypatch.setenv("RECPRIVACY_DATA", str(roots["env"]))
    monkeypatch.setenv("RECPRIVACY_CACHE", str(roots["cache"]))
    return roots


def test_search_order_explicit_then_env_then_cache(places):
    cache = _ml100k(places["cache"] / "ml-100k", rating=1)
    assert resolve_data_dir("ml-100k") == cache
    env = _ml100k(places["env"] / "ml-100k", rating=2)
    assert resolve_data_dir("ml-100k") == env
    explicit = _ml100k(places["explicit"] / "ml-100k", rating=5)
    assert resolve_data_dir("ml-100k", places["explicit"]) == explicit
    assert resolve_data_dir("ml-100k", explicit) == explicit  # the dataset's own folder
    assert load_dataset("ml-100k", places["explicit"]).ratings[0] == 5.0
    assert load_dataset("ml-100k").ratings[0] == 2.0


def test_missing_dataset_says_where_to_put_it(places):
    with pytest.raises(DataError) as err:
        load_dataset("ml-100k", places["explicit"])
    message = str(err.value)
    for part in (
        str(places["explicit"]),
        str(places["env"]),
        str(places["cache"]),
        "--data-dir",
        "RECPRIVACY_DATA",
        "download=True",
    ):
        assert part in message
    with pytest.raises(DataError) as err:
        load_dataset("s3rec-beauty")
    assert "Beauty.txt" in str(err.value) and "download" not in str(err.value)


def test_unknown_name_and_wrong_kind_are_config_errors(places):
    with pytest.raises(ConfigError, match="unknown dataset 'ml-42'"):
        load_dataset("ml-42")
    with pytest.raises(ConfigError, match="load_exposure"):
        load_dataset("mind")
    with pytest.raises(ConfigError, match="no exposure log"):
        load_exposure("ml-100k")


def test_exposure_and_patterned_names(places):
    mind = places["env"] / "mind-small-subset" / "MINDsmall_train"
    mind.mkdir(parents=True)
    (mind / "behaviors.tsv").write_text("1\tU1\t11/11/2019 9:05:58 AM\tN1\tN2-1 N3-0\n")
    assert len(load_exposure("mind")) == 1
    s3 = places["explicit"] / "s3rec-sequences"
    s3.mkdir()
    (s3 / "LastFM.txt").write_text("1 2 3\n")
    assert load_dataset("s3rec-lastfm", places["explicit"]).name == "s3rec-lastfm"
    amazon = places["cache"] / "amazon-5core-digital-music"
    amazon.mkdir()
    (amazon / "Digital_Music.json").write_text('{"reviewerID": "a", "asin": "b", "overall": 5, "unixReviewTime": 1}\n')
    assert load_dataset("amazon-digital-music").name == "amazon-digital-music"


def test_names_that_are_paths(places, tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("user_id,item_id\n1,2\n3,2\n")
    assert len(load_dataset(str(table))) == 2
    custom = tmp_path / "c.tsv"
    custom.write_text("u\ti\tr\n1\t2\t0.5\n")
    assert load_dataset(custom, user_col="u", item_col="i", rating_col="r").ratings[0] == 0.5
    data = load_dataset("ml-100k", _ml100k(tmp_path / "raw" / "ml-100k"))
    written = write_recbole(data, tmp_path / "atomic")
    from_folder = load_dataset(tmp_path / "atomic")
    from_file = load_dataset(str(written["inter"]))
    np.testing.assert_array_equal(from_folder.ratings, data.ratings)
    np.testing.assert_array_equal(from_file.user_ids, data.user_ids)
    with pytest.raises(DataError, match="file not found"):
        load_dataset(str(tmp_path / "absent.csv"))


def test_list_datasets_reports_what_is_found(places):
    _ml100k(places["explicit"] / "ml-100k")
    rows = {row["name"]: row for row in list_datasets(places["explicit"])}
    assert rows["ml-100k"]["found"] and rows["ml-100k"]["path"] == str(places["explicit"] / "ml-100k")
    assert not rows["ml-1m"]["found"] and rows["ml-1m"]["path"] is None
    assert {"mind", "synthetic", "amazon-musical-instruments", "s3rec-yelp"} <= set(rows)
    assert rows["mind"]["kind"] == "exposure"
    assert all({"description", "formats", "features"} <= set(row) for row in rows.values())


def test_synthetic_dispatches_to_the_generator():
    from recprivacy.data.synthetic import make_synthetic

    options = dict(n_users=40, n_items=60, n_interactions=900, seed=3)
    assert load_dataset("synthetic", **options).fingerprint() == make_synthetic(**options).fingerprint()
