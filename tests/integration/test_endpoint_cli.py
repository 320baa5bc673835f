"""``recprivacy audit --endpoint`` and ``recprivacy serve`` on the command line (issue 50): a
lasting fault is one line and leaves no report; an audit killed mid-way resumes with
``--resume`` and sends no request whose answer it cached (counted by the server)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("httpx")
pytest.importorskip("fastapi")

from endpoint_server import Faulty, running  # noqa: E402
from test_endpoint_audit import CONFIG  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from recprivacy.cli import app  # noqa: E402
from recprivacy.config import load_config  # noqa: E402
from recprivacy.experiments.endpoint.cache import CACHE_FILE, request_key  # noqa: E402
from recprivacy.experiments.endpoint.service import create_app, fit_run_model  # noqa: E402


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    folder = tmp_path_factory.mktemp("run")
    (folder / "config.yaml").write_text(load_config(base=CONFIG).to_yaml())
    return (folder / "config.yaml", *fit_run_model(folder))


def _one_error_line(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and "Traceback" not in result.stderr
    errors = [line for line in lines if line.startswith("error: ")]
    assert len(errors) == 1 and errors[0] == lines[-1], result.stderr
    return errors[0]


def test_a_lasting_5xx_is_one_line_and_no_report(served, tmp_path):
    config, model, data = served
    with running(Faulty(create_app(model, data), fault="500")) as url:
        result = CliRunner().invoke(app, ["audit", "--endpoint", url, "--config", str(config), "--retries", "1",
                                          "--qps", "500", "--out", str(tmp_path)])  # fmt: skip
    line = _one_error_line(result)
    assert line.startswith(f"error: {url}: HTTP 500 after 1 retries (") and "results would be partial" in line
    assert not list(tmp_path.rglob("results.json"))


def test_bad_endpoint_options_and_runs_are_one_line(tmp_path):
    assert "expected an http:// or https:// URL" in _one_error_line(
        CliRunner().invoke(app, ["audit", "--endpoint", "ftp://x", "--out", str(tmp_path)]))
    assert "the URL holds credentials" in _one_error_line(
        CliRunner().invoke(app, ["audit", "--endpoint", "http://me:pw@x", "--out", str(tmp_path)]))
    assert "not a run folder (no config.yaml)" in _one_error_line(CliRunner().invoke(app, ["serve", str(tmp_path)]))
    assert not list(tmp_path.iterdir())


def test_a_killed_audit_resumes_without_asking_again(served, tmp_path):
    config, model, data = served
    first = Faulty(create_app(model, data))
    with running(first) as url:
        command = [sys.executable, "-m", "recprivacy", "audit", "--endpoint", url, "--config", str(config), "--qps", "100",
                   "--out", str(tmp_path)]  # fmt: skip
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   env={**os.environ, "RECPRIVACY_QUIET": "1"})  # fmt: skip
        deadline = time.monotonic() + 60
        while first.sent < 40 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        process.send_signal(signal.SIGKILL)
        process.wait()
    (folder,) = tmp_path.iterdir()
    cached = {json.loads(line)["key"] for line in (folder / CACHE_FILE).read_text().splitlines()[:-1]}  # last: maybe cut
    assert len(cached) >= 30 and not (folder / "results.json").exists()
    second = Faulty(create_app(model, data))
    with running(second, port=int(url.rsplit(":", 1)[1])):
        result = CliRunner().invoke(app, ["audit", "--resume", str(folder), "--qps", "1000"])
    assert result.exit_code == 0, result.stderr
    assert second.sent and not cached & {request_key(m, url + p, b) for m, p, b in second.requests}
    assert (folder / "results.json").exists()


def test_your_own_files_are_audited_against_your_endpoint(served, tmp_path):
    """``--interactions`` with ``--endpoint``: the members are asked for by id, the rest by history."""
    _, model, data = served
    data.to_frame()[["user_id", "item_id"]].to_csv(tmp_path / "interactions.csv", index=False)
    trained = data.user_ids[np.flatnonzero(model.train_csr_.getnnz(axis=1) > 0)]
    pd.DataFrame({"user_id": trained}).to_csv(tmp_path / "members.csv", index=False)
    app_ = Faulty(create_app(model, data))
    with running(app_) as url:
        result = CliRunner().invoke(app, [
            "audit", "--interactions", str(tmp_path / "interactions.csv"), "--members", str(tmp_path / "members.csv"),
            "--endpoint", url, "--sections", "membership", "--qps", "2000", "--out", str(tmp_path / "runs"),
            "--set", "study_options.membership.k=10", "--set", "study_options.membership.n_factors=8",
            "--set", "study_options.membership.n_references=2", "--shadow-model", "itemcf"])  # fmt: skip
    assert result.exit_code == 0, result.output + result.stderr
    (run,) = (tmp_path / "runs").iterdir()
    verdicts = json.loads((run / "results.json").read_text())["verdicts"]
    assert any("membership" in v["attack"] and v["metric"] == "ROC AUC" for v in verdicts)
    assert app_.sent > 0 and not list(Path(os.environ.get("TMPDIR", "/tmp")).glob("recprivacy-endpoint-*/*.jsonl"))
