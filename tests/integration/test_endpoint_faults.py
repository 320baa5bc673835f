"""Faults of a live endpoint (issue 50), injected in front of the reference service on
127.0.0.1: each is retried and recovered, or ends in one line naming the endpoint, the status
and how many queries failed; never a hang, a traceback or a partial result; the requests the
server counts never exceed the budget."""

from __future__ import annotations

import time

import numpy as np
import pytest

pytest.importorskip("httpx")
pytest.importorskip("fastapi")

from endpoint_server import Faulty, running  # noqa: E402

from recprivacy.data.synthetic import make_synthetic  # noqa: E402
from recprivacy.experiments.endpoint import BudgetSpent, EndpointError  # noqa: E402
from recprivacy.experiments.endpoint.service import create_app  # noqa: E402
from recprivacy.experiments.target import Target  # noqa: E402
from recprivacy.models import make_model  # noqa: E402

K, USERS = 5, 6


@pytest.fixture(scope="module")
def fitted():
    data = make_synthetic(n_users=60, n_items=100, n_interactions=1500, seed=0)
    return make_model("itemcf").fit(data), data


def _serve(fitted, fault=None, faults=None, k=K, **options):
    """Serve ``USERS`` members through the faulty service; the lists (or the error), the server and the target."""
    model, data = fitted
    app = Faulty(create_app(model, data), faults=faults, fault=fault, slow=1.0)
    with running(app) as url:
        target = Target.from_endpoint(url, **{"qps": 1000, "backoff": 0.01, **options})
        try:
            return target.serve(np.arange(USERS), k, data, trained=True), app, target
        except EndpointError as err:
            return err, app, target


@pytest.mark.parametrize("fault", ["500", "429", "drop", "slow"])
def test_a_passing_fault_is_retried_and_recovered(fitted, fault):
    lists, app, target = _serve(fitted, faults={0: fault, 3: fault}, timeout=0.5)
    model, data = fitted
    assert np.array_equal(lists, model.recommend(np.arange(USERS), K).numpy())
    assert target.endpoint.stats.retries == 2 and app.sent == USERS + 2 == target.endpoint.stats.sent


@pytest.mark.parametrize("fault, says", [
    ("500", "HTTP 500 after 2 retries"),
    ("malformed", "HTTP 200 with an answer that is not JSON"),
    ("short", "HTTP 200 but the target returned 2 items for user"),
    ("unknown", "HTTP 200 but the target returned item id 1000000000, which is not in the interactions"),
    ("slow", "no answer within the timeout of 0.3 s after 2 retries"),
])  # fmt: skip
def test_a_lasting_fault_is_one_line_naming_the_endpoint(fitted, fault, says):
    start = time.monotonic()
    err, app, target = _serve(fitted, fault=fault, retries=2, timeout=0.3, concurrency=2)
    assert isinstance(err, EndpointError) and "\n" not in str(err)
    assert str(err).startswith(f"http://127.0.0.1:{target.endpoint.spec.shown.rsplit(':', 1)[1]}: ")
    assert says in str(err)
    if fault in ("500", "malformed", "slow"):  # the batch stops: queries not yet sent are not sent
        assert "queries answered" in str(err) and "not sent" in str(err) and app.sent < USERS * 3
    assert time.monotonic() - start < 10


def test_a_user_the_service_does_not_know_is_a_4xx_not_retried(fitted):
    model, data = fitted
    with running(Faulty(create_app(model, data))) as url:
        target = Target.from_endpoint(url, retries=3)
        with pytest.raises(EndpointError, match=r"HTTP 404 \(0 of 1 queries answered, 1 failed, 0 not sent\)"):
            target.endpoint.by_user(["no-such-user"], K)
        assert target.endpoint.stats.sent == 1


def test_the_budget_is_never_exceeded(fitted):
    err, app, target = _serve(fitted, budget=4, concurrency=3)
    assert isinstance(err, BudgetSpent) and "the query budget of 4 requests is spent" in str(err)
    assert app.sent == 4 == target.endpoint.stats.sent


def test_retries_count_against_the_budget(fitted):
    err, app, _ = _serve(fitted, fault="500", budget=3, retries=5, concurrency=1)
    assert isinstance(err, BudgetSpent) and app.sent == 3


def test_a_token_is_sent_from_the_named_variable_and_a_missing_one_is_one_line(fitted, monkeypatch):
    monkeypatch.setenv("EP_TOKEN", "s3cret")
    lists, app, target = _serve(fitted, auth_env="EP_TOKEN")
    assert isinstance(lists, np.ndarray) and "s3cret" not in repr(target.endpoint.spec.to_dict())
    monkeypatch.delenv("EP_TOKEN")
    from recprivacy.errors import ConfigError

    with pytest.raises(ConfigError, match="--auth-env EP_TOKEN: the environment variable is not set"):
        _serve(fitted, auth_env="EP_TOKEN")
