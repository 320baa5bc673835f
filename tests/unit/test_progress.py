"""Progress output: plain stamped lines on stderr off a terminal, nothing when quiet."""

from __future__ import annotations

import io

import pytest

from recprivacy import progress as progress_module
from recprivacy.progress import progress, progress_mode, stage


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("quiet", "ci", "tty", "mode"),
    [(None, None, False, "lines"), (None, None, True, "bar"), (None, "1", True, "lines"), ("1", None, False, "quiet")],
)
def test_mode_follows_terminal_ci_and_quiet(monkeypatch, quiet, ci, tty, mode):
    for name, value in (("RECPRIVACY_QUIET", quiet), ("CI", ci)):
        monkeypatch.delenv(name, raising=False)
        if value:
            monkeypatch.setenv(name, value)
    monkeypatch.setattr("sys.stderr", _Terminal() if tty else io.StringIO())
    assert progress_mode() == mode


def test_off_a_terminal_a_loop_reports_every_tenth_and_stages_one_line(monkeypatch, capsys):
    monkeypatch.delenv("RECPRIVACY_QUIET")
    stage("fit bpr")
    assert list(progress(range(30), desc="BPRMF", total=30, unit="epoch")) == list(range(30))
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("[recprivacy +") and lines[0].endswith("] fit bpr")
    assert [line.split("] ", 1)[1] for line in lines[1:]] == [f"BPRMF: epoch {n}/30" for n in range(3, 31, 3)]


def test_off_a_terminal_a_slow_loop_without_total_reports_by_time(monkeypatch, capsys):
    monkeypatch.delenv("RECPRIVACY_QUIET")
    monkeypatch.setattr(progress_module, "INTERVAL", 0.0)
    list(progress(iter("abc"), desc="downloading"))
    assert [line.split("] ", 1)[1] for line in capsys.readouterr().err.splitlines()] == [
        "downloading: 1/?", "downloading: 2/?", "downloading: 3/?"]  # fmt: skip


def test_quiet_prints_nothing(capsys):
    stage("load")
    assert list(progress(range(5), desc="x", total=5)) == list(range(5))
    assert capsys.readouterr().err == ""
