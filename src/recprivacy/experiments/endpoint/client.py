"""Polite, robust queries to a live recommender (:class:`EndpointClient`).

Every request is a recommendation request built from the spec's templates; nothing else is
ever sent. A batch of queries runs with at most ``concurrency`` in flight and ``qps`` sent per
second. A timeout, a dropped or refused connection, ``429`` and ``5xx`` are retried up to
``retries`` times, waiting ``backoff * 2**attempt`` seconds times a uniform random factor
(full jitter), or what ``Retry-After`` asks when the endpoint says (a wait above ``max_wait``
is a failure). Any other ``4xx``, an answer that is not JSON or has no list at ``items_path``,
and a query still failing after its retries fail the batch: the queries not yet sent are not
sent, and one :class:`EndpointError` line names the endpoint (no credentials), the status and
how many queries failed. ``budget`` caps the requests one client sends (retries included): the
request that would exceed it is not sent and :class:`BudgetSpent` says so. Answers are kept in
a :class:`~.cache.ResponseCache` when one is given, and a query already there is not sent.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from recprivacy.errors import RecPrivacyError
from recprivacy.experiments.endpoint.cache import ResponseCache, request_key
from recprivacy.experiments.endpoint.spec import ACCESS_MODEL, EndpointSpec, items_at

if TYPE_CHECKING:
    import httpx

Request = tuple[str, str, Any]


class EndpointError(RecPrivacyError):
    """Queries to the endpoint failed; the audit stops (its results would be partial)."""


class BudgetSpent(EndpointError):
    """The query budget is spent; the audit stops and can be resumed."""


class QueryFailed(Exception):
    """One query failed for good (its ``reason``: status and cause)."""


@dataclass
class QueryStats:
    """What the client did: HTTP requests ``sent`` (retries included), queries ``answered`` by
    the endpoint and from the ``cached`` answers, ``retries``, ``failed`` queries, and the wall
    time spent querying (``seconds``)."""

    sent: int = 0
    answered: int = 0
    cached: int = 0
    retries: int = 0
    failed: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """The counts as a plain dict."""
        return asdict(self)


def _httpx() -> Any:
    """The ``httpx`` module, or a one-line error naming the extra that installs it."""
    try:
        import httpx
    except ImportError:
        raise RecPrivacyError("auditing an endpoint needs httpx; install the 'serve' extra: pip install 'recprivacy[serve]'") from None
    return httpx


class EndpointClient:
    """Queries ``spec``'s endpoint (module docstring), keeping answers in ``cache``."""

    def __init__(self, spec: EndpointSpec, cache: ResponseCache | None = None) -> None:
        _httpx()
        self.spec, self.cache = spec, cache
        self.stats = QueryStats()
        self._next_send = 0.0

    @property
    def serves_histories(self) -> bool:
        """Whether the endpoint serves a new user from a history."""
        return self.spec.history_request is not None

    def by_user(self, users: list[Any], k: int) -> list[list[Any]]:
        """The top-``k`` list the endpoint serves each known user (original ids)."""
        template = self.spec.by_user
        return self.fetch([self._request(template.render(k, user=u)) for u in users])

    def by_history(self, histories: list[list[Any]], k: int) -> list[list[Any]]:
        """The top-``k`` list the endpoint serves each history (original item ids, oldest first)."""
        template = self.spec.by_history
        if template is None:
            raise EndpointError(f"{self.spec.shown}: no --history-request, so the endpoint cannot serve a user from a history")
        return self.fetch([self._request(template.render(k, items=list(h))) for h in histories])

    def report(self) -> tuple[list[list[Any]], str, str]:
        """Rows, caption and a sentence for the report: the endpoint (scheme, host and path, no
        credentials), the access model, the queries made, failed and retried, the time spent."""
        s, polite = self.stats, self.spec.politeness
        rows = [["endpoint", self.spec.shown], ["access model", ACCESS_MODEL],
                ["requests sent (retries included)", s.sent], ["queries answered by the endpoint", s.answered],
                ["queries answered from the cache (asked by an earlier run)", s.cached], ["retries", s.retries],
                ["failed queries", s.failed], ["time spent querying (s)", round(s.seconds, 1)],
                ["limits", f"{polite.qps:g} queries/s, {polite.concurrency} at once, timeout {polite.timeout:g} s, "
                           f"{polite.retries} retries, budget {polite.budget if polite.budget else 'none'}"]]  # fmt: skip
        histories = "by their history" if self.serves_histories else "not at all (no history request)"
        note = (f"Access model: {ACCESS_MODEL}. The audit queried the live endpoint {self.spec.shown}: members by their "
                f"id, users it was not trained on {histories}; every number of this report comes from its answers.")  # fmt: skip
        return rows, f"Queries to {self.spec.shown}", note

    def _request(self, rendered: tuple[str, str, Any]) -> Request:
        method, path, body = rendered
        return method, self.spec.address(path), body

    def fetch(self, requests: list[Request]) -> list[list[Any]]:
        """The item list answering each request, in order (cached answers are not asked again)."""
        keys = [request_key(*r) for r in requests]
        todo = {key: r for key, r in zip(keys, requests) if self.cache is None or key not in self.cache}
        self.stats.cached += len(requests) - len(todo)
        answers = self.cache.answers if self.cache is not None else {}
        if todo:
            start = time.perf_counter()
            try:
                fresh = asyncio.run(self._fetch_all(todo))
            finally:
                self.stats.seconds += time.perf_counter() - start
            answers = {**answers, **fresh}
        return [items_at(answers[key], self.spec.items_path) for key in keys]

    async def _fetch_all(self, todo: dict[str, Request]) -> dict[str, Any]:
        """Answers of every request of ``todo`` by key (module docstring for failures)."""
        httpx = _httpx()
        gate, stop = asyncio.Semaphore(self.spec.politeness.concurrency), asyncio.Event()
        answers: dict[str, Any] = {}
        failures: list[BaseException] = []
        headers = self.spec.headers()

        async def one(client: httpx.AsyncClient, key: str, request: Request) -> None:
            async with gate:
                if stop.is_set():
                    return
                try:
                    answers[key] = await self._query(client, request)
                except (QueryFailed, BudgetSpent) as err:
                    failures.append(err)
                    stop.set()
                    return
            if self.cache is not None:
                self.cache.put(key, answers[key])

        limits = httpx.Limits(max_connections=self.spec.politeness.concurrency)
        async with httpx.AsyncClient(headers=headers, limits=limits, timeout=self.spec.politeness.timeout) as client:
            await asyncio.gather(*(one(client, key, request) for key, request in todo.items()))
        self.stats.answered += len(answers)
        if failures:
            self._raise(failures, len(todo), len(answers))
        return answers

    def _raise(self, failures: list[BaseException], asked: int, answered: int) -> None:
        """The one line saying how the batch failed."""
        failed = sum(isinstance(f, QueryFailed) for f in failures)
        self.stats.failed += failed
        unsent = asked - answered - len(failures)
        counts = f"{answered} of {asked} queries answered, {failed} failed, {unsent} not sent"
        spent = next((f for f in failures if isinstance(f, BudgetSpent)), None)
        if spent is not None:
            raise BudgetSpent(f"{self.spec.shown}: {spent} ({counts})")
        raise EndpointError(f"{self.spec.shown}: {failures[0]} ({counts}); the audit stopped, results would be partial")

    async def _query(self, client: httpx.AsyncClient, request: Request) -> Any:
        """The JSON answer of one request, retried (module docstring); ``QueryFailed`` otherwise."""
        httpx = _httpx()
        method, url, body = request
        polite = self.spec.politeness
        attempt = 0
        while True:
            await self._take_slot()
            try:
                response = await client.request(method, url, json=body)
            except httpx.TimeoutException:
                reason, wait = f"no answer within the timeout of {polite.timeout:g} s", None
            except httpx.TransportError as err:
                reason, wait = f"connection failed ({type(err).__name__})", None
            else:
                reason, wait = self._judge(response)
                if reason is None:
                    return self._parsed(response)
            if attempt == polite.retries:
                raise QueryFailed(reason + (f" after {polite.retries} retries" if polite.retries else ""))
            self.stats.retries += 1
            await asyncio.sleep(wait if wait is not None else polite.backoff * 2**attempt * random.random())
            attempt += 1

    def _judge(self, response: httpx.Response) -> tuple[str | None, float | None]:
        """``(None, None)`` for a success; the reason and the asked wait of a retryable status;
        ``QueryFailed`` for any other."""
        status = response.status_code
        if 200 <= status < 300:
            return None, None
        if status != 429 and status < 500:
            raise QueryFailed(f"HTTP {status}")
        wait = retry_after(response.headers.get("Retry-After"))
        if wait is not None and wait > self.spec.politeness.max_wait:
            raise QueryFailed(f"HTTP {status} asking to retry after {wait:g} s, more than max_wait "
                              f"{self.spec.politeness.max_wait:g} s")  # fmt: skip
        return f"HTTP {status}", wait

    def _parsed(self, response: httpx.Response) -> Any:
        """The JSON of a successful answer, checked to hold a list at ``items_path``."""
        try:
            answer = response.json()
        except ValueError:
            raise QueryFailed(f"HTTP {response.status_code} with an answer that is not JSON") from None
        try:
            items_at(answer, self.spec.items_path)
        except ValueError as err:
            raise QueryFailed(f"HTTP {response.status_code} with no item list at --items-path {self.spec.items_path!r} "
                              f"({err})") from None  # fmt: skip
        return answer

    async def _take_slot(self) -> None:
        """Count one request against the budget and wait for its turn under ``qps``."""
        polite = self.spec.politeness
        if polite.budget is not None and self.stats.sent >= polite.budget:
            raise BudgetSpent(f"the query budget of {polite.budget} requests is spent")
        self.stats.sent += 1
        now = time.monotonic()
        slot = max(now, self._next_send)
        self._next_send = slot + 1.0 / polite.qps
        if slot > now:
            await asyncio.sleep(slot - now)


def retry_after(value: str | None) -> float | None:
    """Seconds a ``Retry-After`` header asks to wait (a number or an HTTP date; None if absent or unreadable)."""
    if value is None:
        return None
    value = value.strip()
    if value.replace(".", "", 1).isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)
