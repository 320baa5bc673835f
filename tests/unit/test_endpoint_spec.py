"""The endpoint contract (issue 50): request templates, the path into an answer, Retry-After,
the cache file, and one-line errors for a spec that cannot work."""

from __future__ import annotations

import pytest

from recprivacy import cli_endpoint
from recprivacy.errors import ConfigError, DataError
from recprivacy.experiments.endpoint import Politeness, endpoint_spec
from recprivacy.experiments.endpoint.cache import ResponseCache
from recprivacy.experiments.endpoint.client import retry_after
from recprivacy.experiments.endpoint.spec import HISTORY_REQUEST, USER_REQUEST, RequestTemplate, items_at


def test_templates_fill_typed_values_and_quote_ids_in_the_path():
    user = RequestTemplate.parse("GET /u/{user}/recs?k={k}&x=1", "--user-request")
    assert user.render(5, user="a b/c") == ("GET", "/u/a%20b%2Fc/recs?k=5&x=1", None)
    history = RequestTemplate.parse('POST /r {"h": "{items}", "n": "{k}", "keep": "{k} items"}', "--history-request")
    assert history.render(3, items=[7, 8]) == ("POST", "/r", {"h": [7, 8], "n": 3, "keep": "{k} items"})


def test_items_are_found_by_a_dotted_path_with_a_star_and_an_index():
    answer = {"data": {"recs": [{"id": 4}, {"id": 2}]}, "pages": [[1, 2], [3]]}
    assert items_at(answer, "data.recs.*.id") == [4, 2] and items_at(answer, "pages.1") == [3]
    with pytest.raises(ValueError, match="data has no 'items'"):
        items_at(answer, "data.items")
    with pytest.raises(ValueError, match="is not a list"):
        items_at({"items": 3}, "items")


@pytest.mark.parametrize("options, says", [
    ({"user_request": "FETCH /x"}, "is not a request template"),
    ({"user_request": "GET /x?k={k}"}, "expected {user}"),
    ({"history_request": "POST /r {bad"}, "is not JSON"),
    ({"history_request": "POST /r {\"k\": \"{k}\"}"}, "expected \"{items}\""),
    ({"qps": 0}, "endpoint qps=0: expected a positive number"),
    ({"auth_env": "MY-TOKEN"}, "expected the name of an environment variable"),
    ({"tiemout": 3}, "unknown option 'tiemout'"),
])  # fmt: skip
def test_a_spec_that_cannot_work_is_one_line(options, says):
    with pytest.raises(ConfigError) as err:
        endpoint_spec("http://host:8000/api/", **options)
    assert says in str(err.value) and "\n" not in str(err.value)


def test_messages_name_scheme_host_and_path_only():
    assert endpoint_spec("https://recs.example.com:8443/v2/?key=abc").shown == "https://recs.example.com:8443/v2"


def test_retry_after_reads_seconds_and_http_dates():
    assert retry_after("2.5") == 2.5 and retry_after(None) is None and retry_after("soon") is None
    assert retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0


def test_the_cache_skips_a_line_cut_short_and_refuses_a_foreign_file(tmp_path):
    cache = ResponseCache(tmp_path / "private" / "c.jsonl")
    cache.put("a", {"items": [1]})
    cache.close()
    with open(cache.path, "a") as f:
        f.write('{"key": "b", "ans')
    assert ResponseCache(cache.path).answers == {"a": {"items": [1]}}
    (tmp_path / "other.jsonl").write_text("hello\n")
    with pytest.raises(DataError, match="other.jsonl:1: not a line of an endpoint cache"):
        ResponseCache(tmp_path / "other.jsonl")


def test_the_command_line_defaults_are_the_contract():
    assert (cli_endpoint.USER_REQUEST, cli_endpoint.HISTORY_REQUEST) == (USER_REQUEST, HISTORY_REQUEST)
    assert Politeness().qps == 10 and Politeness().concurrency == 4
