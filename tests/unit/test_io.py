"""Atomic writes and the output-folder check (recprivacy.io)."""

from __future__ import annotations

import os
import stat

import pandas as pd
import pytest

from recprivacy.data.interactions import Interactions
from recprivacy.data.loaders.recbole import write_recbole
from recprivacy.errors import ConfigError
from recprivacy.io import check_output_folder, write_text_atomic


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_written_files_get_the_umask_mode_not_mkstemps_0600(tmp_path, umask_022):
    write_text_atomic(tmp_path / "a.txt", "x")
    data = Interactions.from_frame(pd.DataFrame({"user_id": ["1", "2"], "item_id": ["5", "6"]}), name="rel")
    written = write_recbole(data, tmp_path)
    for path in [tmp_path / "a.txt", *written.values()]:
        assert stat.S_IMODE(path.stat().st_mode) == 0o644, path
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary left behind


def test_atomic_write_replaces_whole_file(tmp_path):
    target = tmp_path / "f.txt"
    target.write_text("old and longer")
    write_text_atomic(target, "new")
    assert target.read_text() == "new"


@pytest.mark.parametrize(
    ("setup", "kwargs", "message"),
    [
        (lambda d: (d / "out").write_text("x"), {}, "is an existing file"),
        (lambda d: (d / "data").mkdir(), {"inputs": ["data"]}, "is inside the input"),
        (lambda d: (d / "out" / "public").mkdir(parents=True), {"writes": ["public", "private"]}, "already holds public"),
    ],
)
def test_unsafe_outputs_are_refused(tmp_path, setup, kwargs, message):
    setup(tmp_path)
    out = tmp_path / ("data/sub" if kwargs.get("inputs") else "out")
    kwargs = {**kwargs, "inputs": [tmp_path / p for p in kwargs.get("inputs", [])]}
    with pytest.raises(ConfigError, match=message):
        check_output_folder(out, **kwargs)


def test_a_new_folder_beside_the_input_is_accepted(tmp_path):
    (tmp_path / "data").mkdir()
    assert check_output_folder(tmp_path / "out", inputs=[tmp_path / "data"], writes=["public"]) == (tmp_path / "out").resolve()
