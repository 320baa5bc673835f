"""The audit's reference recommenders fan out through the study kit's executor (issue 47):
``recprivacy audit --executor ray`` (``study_options.executor``, ``Audit(executor=...)``) trains
LiRA's and RMIA's references as one Ray task each and measures the same numbers as in-process.

The Ray run uses the shared two-worker local instance of ``tests/conftest.py`` (``local_ray``, as
``test_membership_golden.py`` does), so Ray starts at most once per test process.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from recprivacy.cli import app
from recprivacy.config import load_config, validate_options
from recprivacy.data.synthetic import make_synthetic
from recprivacy.experiments import run_study
from recprivacy.experiments.audit import Audit, AuditOptions
from recprivacy.experiments.target import Target
from recprivacy.models import make_model

runner = CliRunner()

#: a small BPR-MF target, membership only, four references: two per local Ray worker
CONFIG = {
    "name": "audit-executor",
    "study": "audit",
    "seed": 0,
    "noise": "simulation",
    "dataset": {"name": "synthetic", "options": {"n_users": 240, "n_items": 150, "n_interactions": 9000}},
    "model": {"name": "bpr", "params": {"n_epochs": 3}},
    "eval": {"ks": [10]},
    "study_options": {"sections": ["membership"], "membership": {"k": 20, "n_factors": 16, "n_references": 4}},
}


def invoke(*args: object):
    return runner.invoke(app, [str(a) for a in args])


def membership_metrics(metrics: dict) -> dict:
    return {key: value for key, value in metrics.items() if key.startswith("membership/")}


def test_the_audit_on_local_ray_with_two_workers_gives_the_same_membership_numbers(local_ray, tmp_path):
    inprocess = run_study(load_config(base=CONFIG))
    config = tmp_path / "audit.yaml"
    config.write_text(yaml.safe_dump(CONFIG))
    result = invoke("audit", "--config", config, "--executor", "ray", "--out", tmp_path / "runs")
    assert result.exit_code == 0, result.output
    (run_dir,) = (tmp_path / "runs").iterdir()
    saved = json.loads((run_dir / "results.json").read_text())
    on_ray, here = membership_metrics(saved["metrics"]), membership_metrics(inprocess.metrics)
    calibrated = [key for key in here if key.endswith(("lira/auc", "lira_offline/auc", "rmia/auc"))]
    assert len(calibrated) >= 3, sorted(here)  # LiRA online and offline and RMIA ran, under both protocols
    assert on_ray == here  # every attack's ROC AUC (and TPR, per seed) to the last digit
    # the saved config is the resolved one and says where the references trained; the report says it too
    assert yaml.safe_load((run_dir / "config.yaml").read_text())["study_options"]["executor"] == "ray"
    assert inprocess.config["study_options"]["executor"] == "inprocess"
    assert "trained on the study kit's executor `ray`" in (run_dir / "report.md").read_text()


def test_without_ray_the_audit_stops_with_one_line_before_training(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray fails, as without the extra
    result = invoke("audit", "--sections", "membership", "--executor", "ray", "--out", tmp_path)
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == "error: --executor ray: Ray is not installed; install the extra: pip install 'recprivacy[ray]'"
    assert list(tmp_path.iterdir()) == []  # no run folder left behind


def test_a_ray_address_needs_the_ray_executor(tmp_path):
    result = invoke("audit", "--sections", "membership", "--ray-address", "auto", "--out", tmp_path)
    assert result.exit_code == 2 and "--ray-address auto: only with --executor ray" in result.stderr
    result = invoke("audit", "--sections", "membership", "--executor", "dask", "--out", tmp_path)
    assert result.exit_code == 2 and "study_options.executor" in result.stderr and "'inprocess' or 'ray'" in result.stderr


def test_the_audit_help_lists_the_executor_where_it_runs():
    text = runner.invoke(app, ["audit", "--help"], env={"COLUMNS": "200"}).stdout
    where = text.split("Where it runs", 1)[1].split("╰", 1)[0]
    assert "--executor" in where and "inprocess (default) or ray" in where and "--ray-address" in where


def test_the_public_audit_takes_the_executor_as_kit_studies_name_it():
    data = make_synthetic(n_users=40, n_items=100, n_interactions=1200, seed=0)
    target = Target.from_model(make_model("popularity").fit(data))
    audit = Audit(target, data, list(range(30)), executor="ray", ray_address="auto")
    assert audit.config.study_options["executor"] == "ray" and audit.config.study_options["ray_address"] == "auto"
    default = Audit(target, data, list(range(30))).config.study_options
    assert "executor" not in default  # left to the options' default, written out when the run resolves them
    assert validate_options(AuditOptions, default).executor == "inprocess"
