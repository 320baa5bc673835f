"""Progress output: one stamped line per stage on stderr off a terminal, loops and details only
when verbose, the run's ETA from its planned stages, nothing when quiet."""

from __future__ import annotations

import io
import re

import pytest

from recprivacy import progress as progress_module
from recprivacy.progress import advance, detail, duration, eta, plan, progress, progress_mode, stage, tracked


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


@pytest.fixture(autouse=True)
def fresh_run(monkeypatch):
    """Each test starts outside any run: stages planned by tests that ran earlier in this worker
    (a study run without the command line's run context) must not show in its lines."""
    monkeypatch.setattr(progress_module, "_RUN", [progress_module.Run()])


@pytest.fixture
def verbose():
    progress_module.set_verbose(True)
    yield
    progress_module.set_verbose(False)


def _texts(err: str) -> list[str]:
    return [line.split("] ", 1)[1] for line in err.splitlines()]


def test_off_a_terminal_a_loop_is_silent_and_a_stage_is_one_line(monkeypatch, capsys):
    monkeypatch.delenv("RECPRIVACY_QUIET")
    stage("fit bpr")
    assert list(progress(range(30), desc="BPRMF", total=30, unit="epoch")) == list(range(30))
    detail("membership lists: ('synthetic', 'bpr')")
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and re.fullmatch(r"\[recprivacy \+\d+\.\ds\] fit bpr", lines[0]), lines


def test_verbose_adds_a_loop_line_every_tenth_and_the_details(monkeypatch, capsys, verbose):
    monkeypatch.delenv("RECPRIVACY_QUIET")
    list(progress(range(30), desc="BPRMF", total=30, unit="epoch"))
    detail("membership lists: synthetic")
    assert _texts(capsys.readouterr().err) == [*(f"BPRMF: epoch {n}/30" for n in range(3, 31, 3)),
                                               "membership lists: synthetic"]  # fmt: skip


def test_verbose_slow_loop_without_total_reports_by_time(monkeypatch, capsys, verbose):
    monkeypatch.delenv("RECPRIVACY_QUIET")
    monkeypatch.setattr(progress_module, "INTERVAL", 0.0)
    list(progress(iter("abc"), desc="downloading"))
    assert _texts(capsys.readouterr().err) == ["downloading: 1/?", "downloading: 2/?", "downloading: 3/?"]


@pytest.mark.parametrize(("elapsed", "done", "total", "left"),
                         [(10.0, 0, 8, None), (10.0, 2, 8, 30.0), (30.0, 3, 3, 0.0), (5.0, 1, 0, None), (8.0, 4, 2, 0.0)])
def test_eta_is_the_remaining_share_at_the_pace_so_far(elapsed, done, total, left):
    assert eta(elapsed, done, total) == left


@pytest.mark.parametrize(("seconds", "text"), [(0.4, "0s"), (41.2, "41s"), (185, "3m 05s"), (7620, "2h 07m")])
def test_durations_read_as_words(seconds, text):
    assert duration(seconds) == text


def test_a_run_plans_its_stages_and_each_line_carries_progress_and_eta(monkeypatch, capsys):
    """Stages planned during a stage come before the stage planned last; a line reads
    ``[recprivacy +<elapsed> | <done>/<planned> | ETA <left>] <words>``; steps do not move the
    run; a stage begun marks every stage before it done (a skipped one too)."""
    monkeypatch.delenv("RECPRIVACY_QUIET")
    now = [100.0]
    monkeypatch.setattr(progress_module.time, "monotonic", lambda: now[0])
    with tracked() as run:
        plan(["write"], last=True)
        stage("run demo")
        plan(["fit", "section:a"])
        plan(["section:b", "section:c", "fit"])
        assert run.keys == ["fit", "section:a", "section:b", "section:c", "write"]
        for at, words, key in [(100.0, "fit: bpr", "fit"), (110.0, "a", "section:a"), (112.0, "a: training 8 models", None),
                               (130.0, "c", "section:c"), (190.0, "write", "write")]:  # fmt: skip
            now[0] = at
            stage(words, key=key)
    assert capsys.readouterr().err.splitlines() == [
        "[recprivacy +0.0s | 0/1 | ETA unknown] run demo",
        "[recprivacy +0.0s | 0/5 | ETA unknown] fit: bpr",
        "[recprivacy +10.0s | 1/5 | ETA 40s] a",
        "[recprivacy +12.0s | 1/5 | ETA 48s] a: training 8 models",
        "[recprivacy +30.0s | 3/5 | ETA 20s] c",
        "[recprivacy +90.0s | 4/5 | ETA 22s] write",
    ]


def test_cells_advance_the_run_without_lines(monkeypatch, capsys):
    monkeypatch.delenv("RECPRIVACY_QUIET")
    with tracked() as run:
        plan(["c1", "c2", "c3"])
        advance("c2")
        advance("not planned")
        assert run.n_done == 1 and " | 1/3 | ETA " in run.status()
    assert capsys.readouterr().err == ""


def test_quiet_prints_nothing(capsys):
    stage("load")
    assert list(progress(range(5), desc="x", total=5)) == list(range(5))
    assert capsys.readouterr().err == ""
