"""``deployment.last_error``: what ``flwr run`` said last, as the one line a failed Flower run's
error quotes (its log is often in a temporary folder that is gone by the time the error is read)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("flwr", reason="Flower is in the test extra; install recprivacy[test]")
from recprivacy.federated.flower_app.deployment import last_error  # noqa: E402

BOX = """\
Using SuperLink: federation (127.0.0.1:1)
╭─ Error ──────────────────────────────────────────────────────────────────────╮
│ Connection to the SuperLink is unavailable. Please check your network        │
│ connection and 'address' in the SuperLink connection configuration.          │
╰──────────────────────────────────────────────────────────────────────────────╯
"""


def test_the_last_error_box_becomes_one_line(tmp_path: Path):
    (tmp_path / "run.log").write_text(BOX.replace("Connection", "Old", 1) + "more output\n" + BOX)
    assert last_error(tmp_path / "run.log") == ("Connection to the SuperLink is unavailable. Please check your network "
                                                "connection and 'address' in the SuperLink connection configuration.")


def test_without_a_box_the_last_line_is_quoted(tmp_path: Path):
    (tmp_path / "run.log").write_text("Starting run\n  ServerApp   exited with   code 1  \n\n")
    assert last_error(tmp_path / "run.log") == "ServerApp exited with code 1"
    (tmp_path / "empty.log").write_text("")
    assert last_error(tmp_path / "empty.log") == "flwr run printed nothing"
    assert last_error(tmp_path / "missing.log") == "flwr run printed nothing"
