"""The reference service on 127.0.0.1 for the endpoint tests: started on a free port in a
thread, stopped at the end, with a request counter and injected faults in front of it."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from recprivacy.experiments.endpoint.service import free_socket, server


class Faulty:
    """ASGI wrapper of ``app``: counts every HTTP request (``sent``; ``requests`` holds each as
    ``(method, path?query, JSON body)``) and answers request number ``i`` with ``faults[i]``
    when set (``slow``, ``500``, ``429``, ``malformed``, ``drop``, ``short``, ``unknown``) or
    with ``fault`` for every request."""

    def __init__(self, app: Any, faults: dict[int, str] | None = None, fault: str | None = None, slow: float = 2.0) -> None:
        self.app, self.faults, self.fault, self.slow = app, dict(faults or {}), fault, slow
        self.requests: list[tuple[str, str, Any]] = []

    @property
    def sent(self) -> int:
        return len(self.requests)

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        body = await _body(receive)
        query = scope["query_string"].decode()
        self.requests.append((scope["method"], scope["path"] + (f"?{query}" if query else ""), json.loads(body) if body else None))
        fault = self.faults.get(self.sent - 1, self.fault)
        replay = _replay(body)
        if fault == "slow":
            await asyncio.sleep(self.slow)
        elif fault in ("500", "429"):
            headers = [(b"retry-after", b"0.05")] if fault == "429" else []
            return await _answer(send, int(fault), b"{}", headers)
        elif fault == "malformed":
            return await _answer(send, 200, b'{"items": [1, 2')
        elif fault == "drop":
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"1000")]})
            return await send({"type": "http.response.body", "body": b'{"items": ['})
        elif fault in ("short", "unknown"):
            return await self.app(scope, replay, _rewritten(send, fault))
        await self.app(scope, replay, send)


async def _body(receive: Any) -> bytes:
    body, more = b"", True
    while more:
        message = await receive()
        body, more = body + message.get("body", b""), message.get("more_body", False)
    return body


def _replay(body: bytes) -> Any:
    async def receive() -> dict:
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


async def _answer(send: Any, status: int, body: bytes, headers: list | None = None) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())] + (headers or [])})
    await send({"type": "http.response.body", "body": body})


def _rewritten(send: Any, fault: str) -> Any:
    """A ``send`` passing on only the first 2 items of the answer (``short``) or item ids not in
    the catalogue (``unknown``)."""
    async def rewritten(message: dict) -> None:
        if message["type"] == "http.response.body":
            items = json.loads(message["body"])["items"]
            items = items[:2] if fault == "short" else [10**9 + i for i in range(len(items))]
            await _answer(send, 200, json.dumps({"items": items}).encode())

    return rewritten


@contextmanager
def running(app: Any, port: int = 0) -> Iterator[str]:
    """``app`` served on 127.0.0.1 at ``port`` (0: a free port); yields its base URL and stops it at the end."""
    sock = free_socket(port=port)
    service = server(app)
    thread = threading.Thread(target=service.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not service.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        service.should_exit = True
        thread.join(timeout=10)
        sock.close()
