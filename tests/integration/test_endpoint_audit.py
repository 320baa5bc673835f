"""``recprivacy audit --endpoint`` against the reference service on 127.0.0.1 (issue 50): the
numbers equal the in-process audit of the same fitted model; a service without a history request
gets the membership section skipped with the reason; a stopped or killed audit resumes without
sending a request whose answer it holds; the token never reaches the run folder."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("httpx")
pytest.importorskip("fastapi")

from endpoint_server import Faulty, running  # noqa: E402

from recprivacy.config import load_config  # noqa: E402
from recprivacy.experiments.endpoint import BudgetSpent, EndpointSpec, Politeness  # noqa: E402
from recprivacy.experiments.endpoint.audit import audit_endpoint, configured_audit, resume_endpoint  # noqa: E402
from recprivacy.experiments.endpoint.cache import CACHE_FILE, request_key  # noqa: E402
from recprivacy.experiments.endpoint.service import ServedModel, create_app, fit_run_model  # noqa: E402
from recprivacy.experiments.runner import new_results  # noqa: E402
from recprivacy.experiments.target import Target  # noqa: E402

CONFIG = {"name": "endpoint", "study": "audit", "seed": 0, "noise": "simulation",
          "dataset": {"name": "synthetic", "options": {"n_users": 200, "n_items": 150, "n_interactions": 9000}},
          "model": {"name": "itemcf", "params": {}},
          "study_options": {"sections": ["membership", "attribute"],
                            "membership": {"k": 10, "n_factors": 8, "n_references": 2, "shadow_algorithm": "itemcf"},
                            "attribute": {"seeds": 1, "k": 10, "attackers": ["knn"]}}}  # fmt: skip


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """The config and the model `recprivacy serve` trains from it (the audit's members only)."""
    config = load_config(base=CONFIG)
    folder = tmp_path_factory.mktemp("run")
    (folder / "config.yaml").write_text(config.to_yaml())
    model, data = fit_run_model(folder)
    return config, model, data, folder


def _audited_metrics(results) -> dict:
    return {k: v for k, v in results.metrics.items() if k.startswith(("membership/", "attribute/"))}


def test_the_endpoint_audit_equals_the_in_process_audit_of_the_same_model(fitted, tmp_path, monkeypatch):
    config, model, data, _ = fitted
    served = ServedModel(model, data)
    in_process = Target.from_model(lambda histories, k: [served.by_history(h.tolist(), k) for h in histories])
    expected = _audited_metrics(configured_audit(config, in_process, new_results(config)))
    monkeypatch.setenv("RECPRIVACY_TEST_TOKEN", "tok-5ecret-9")
    app = Faulty(create_app(model, data))
    with running(app) as url:
        spec = EndpointSpec(url, auth_env="RECPRIVACY_TEST_TOKEN", politeness=Politeness(qps=2000, concurrency=4))
        results, folder = audit_endpoint(config, spec, tmp_path)
    got = _audited_metrics(results)
    assert len(expected) > 20 and got == expected  # to the last digit
    assert results.metrics["endpoint/sent"] == app.sent == results.metrics["endpoint/answered"]
    assert results.metrics["endpoint/failed"] == results.metrics["endpoint/retries"] == 0
    assert app.sent <= sum(v for k, v in results.metrics.items() if k.startswith("endpoint/planned_queries/")) + 1
    rows = dict(map(tuple, results.tables["endpoint"].rows))
    assert rows["endpoint"] == url and rows["access model"] == "black-box top-k lists over HTTP"
    assert "Access model: black-box top-k lists over HTTP" in (folder / "report.md").read_text()
    assert (folder / "private").stat().st_mode & 0o077 == 0 and (folder / CACHE_FILE).stat().st_size > 0
    for path in folder.rglob("*"):
        assert not path.is_file() or b"tok-5ecret-9" not in path.read_bytes(), path


def test_a_service_without_history_requests_gets_membership_skipped_with_the_reason(fitted, tmp_path):
    config, model, data, _ = fitted
    app = Faulty(create_app(model, data))
    with running(app) as url:
        target = Target.from_endpoint(url, history_request=None, qps=2000)
        options = {**CONFIG["study_options"], "sections": ["membership"]}
        results = configured_audit(load_config(base={**CONFIG, "study_options": options}), target, new_results(config))
    summary = next(s for s in results.sections if s.title == "Risk summary").text
    assert "`membership` needs users who were not in training" in summary and "--history-request" in summary
    assert app.sent == 0


def test_a_stopped_audit_resumes_without_asking_again(fitted, tmp_path):
    config, model, data, _ = fitted
    first = Faulty(create_app(model, data))
    with running(first) as url:
        with pytest.raises(BudgetSpent, match="resume with: recprivacy audit --resume"):
            audit_endpoint(config, EndpointSpec(url, politeness=Politeness(qps=2000, budget=25)), tmp_path)
        (folder,) = tmp_path.iterdir()
        assert first.sent == 25 and not (folder / "results.json").exists()
    second = Faulty(create_app(model, data))
    with running(second, port=int(url.rsplit(":", 1)[1])):  # the saved endpoint: the same address
        results, _ = resume_endpoint(folder, Politeness(qps=2000))
    asked = {request_key(m, url + p, b) for m, p, b in first.requests}
    assert second.sent and not asked & {request_key(m, url + p, b) for m, p, b in second.requests}
    assert results.metrics["endpoint/cached"] >= 25 and (folder / "results.json").exists()
