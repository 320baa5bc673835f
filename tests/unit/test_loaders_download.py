"""MovieLens download: offline failure, checksum verification and unpacking of a local zip."""

from __future__ import annotations

import hashlib
import zipfile

import pytest

from recprivacy.data.loaders import download
from recprivacy.data.loaders.download import download_movielens, git_blob_id
from recprivacy.data.registry import load_dataset
from recprivacy.errors import DataError

FILES = {
    "u.data": b"1\t10\t3\t100\n2\t10\t4\t200\n",
    "u.user": b"1|30|F|other|00000\n2|40|M|writer|11111\n",
    "u.item": b"10|A (1990)|01-Jan-1990||u|" + b"|".join([b"0"] * 19) + b"\n",
}
SHA256 = {name: "sha256:" + hashlib.sha256(content).hexdigest() for name, content in FILES.items()}
UNREACHABLE = "http://127.0.0.1:9/ml-100k.zip"


@pytest.fixture
def archive(tmp_path):
    """A small ml-100k.zip laid out like GroupLens' (files inside ``ml-100k/``)."""
    path = tmp_path / "served" / "ml-100k.zip"
    path.parent.mkdir()
    with zipfile.ZipFile(path, "w") as zf:
        for name, content in FILES.items():
            zf.writestr(f"ml-100k/{name}", content)
    return path


def test_offline_download_fails_with_one_clear_error(tmp_path):
    with pytest.raises(DataError) as err:
        download_movielens("ml-100k", tmp_path / "cache", url=UNREACHABLE, timeout=5)
    message = str(err.value)
    assert "\n" not in message
    for part in ("could not download ml-100k", UNREACHABLE, "--data-dir", "RECPRIVACY_DATA"):
        assert part in message
    assert list((tmp_path / "cache").iterdir()) == []


def test_download_verifies_and_unpacks(archive, tmp_path):
    folder = download_movielens("ml-100k", tmp_path / "cache", url=archive.as_uri(), checksums=SHA256)
    assert folder == tmp_path / "cache" / "ml-100k"
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == FILES
    assert [p.name for p in (tmp_path / "cache").iterdir()] == ["ml-100k"]


def test_checksum_mismatch_leaves_nothing_behind(archive, tmp_path):
    wrong = {**SHA256, "u.data": "sha256:" + "0" * 64}
    with pytest.raises(DataError, match="sha256 checksum mismatch"):
        download_movielens("ml-100k", tmp_path / "cache", url=archive.as_uri(), checksums=wrong)
    assert list((tmp_path / "cache").iterdir()) == []


def test_git_blob_id_matches_git_hash_object(tmp_path):
    file = tmp_path / "hello.txt"
    file.write_bytes(b"hello\n")
    assert git_blob_id(file) == "ce013625030ba8dba906f756967f9e9ca394464a"


def test_load_dataset_downloads_only_when_asked(archive, tmp_path, monkeypatch):
    monkeypatch.delenv("RECPRIVACY_DATA", raising=False)
    monkeypatch.setenv("RECPRIVACY_CACHE", str(tmp_path / "cache"))
    monkeypatch.setitem(download.MOVIELENS_URLS, "ml-100k", UNREACHABLE)
    with pytest.raises(DataError, match="download=True"):
        load_dataset("ml-100k")
    with pytest.raises(DataError, match="could not download"):
        load_dataset("ml-100k", download=True)
    monkeypatch.setitem(download.MOVIELENS_URLS, "ml-100k", archive.as_uri())
    monkeypatch.setitem(download.MOVIELENS_CHECKSUMS, "ml-100k", SHA256)
    data = load_dataset("ml-100k", download=True)
    assert len(data) == 2 and data.provenance[0]["source"] == str(tmp_path / "cache" / "ml-100k" / "u.data")
    assert len(load_dataset("ml-100k")) == 2  # now found in the cache
