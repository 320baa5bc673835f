"""What an HTTP endpoint looks like to the audit: two request templates, a path into the JSON
answer, the credentials' environment variable, and how politely to query.

A request template is ``METHOD /path?query [JSON body]``. ``{user}`` (a known user's original
id, URL-quoted) and ``{k}`` may appear in the path and query; in the body, a string that is
exactly ``"{user}"``, ``"{k}"`` or ``"{items}"`` (the user's history: original item ids, oldest
first) is replaced by the typed value::

    GET /users/{user}/recommendations?k={k}
    POST /recommendations {"history": "{items}", "k": "{k}"}

``items_path`` is a dotted path into the JSON answer (``items``, ``data.recommendations``); a
``*`` segment takes one field of every object of a list (``results.*.item_id``), a number
indexes a list. The defaults are the contract of the reference service (``recprivacy serve``).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

from recprivacy.errors import ConfigError

USER_REQUEST = "GET /users/{user}/recommendations?k={k}"
HISTORY_REQUEST = 'POST /recommendations {"history": "{items}", "k": "{k}"}'
ITEMS_PATH = "items"
METHODS = ("GET", "POST", "PUT")
ACCESS_MODEL = "black-box top-k lists over HTTP"


@dataclass(frozen=True)
class RequestTemplate:
    """One request template (module docstring), parsed."""

    method: str
    path: str
    body: Any = None

    @classmethod
    def parse(cls, text: str, option: str) -> "RequestTemplate":
        """The template in ``text`` (``ConfigError`` naming ``option`` when it is not one)."""
        method, _, rest = text.strip().partition(" ")
        path, _, body = rest.strip().partition(" ")
        if method.upper() not in METHODS or not path.startswith("/"):
            raise ConfigError(f"{option}: {text!r} is not a request template; expected 'METHOD /path [JSON body]' with "
                              f"METHOD one of {', '.join(METHODS)}, e.g. {USER_REQUEST!r}")  # fmt: skip
        try:
            parsed = json.loads(body) if body.strip() else None
        except json.JSONDecodeError as err:
            raise ConfigError(f"{option}: the body of {text!r} is not JSON ({err.msg} at column {err.colno})") from None
        return cls(method.upper(), path, parsed)

    def render(self, k: int, user: Any = None, items: list[Any] | None = None) -> tuple[str, str, Any]:
        """``(method, path, body)`` for one request."""
        path = self.path.replace("{k}", str(k))
        if user is not None:
            path = path.replace("{user}", quote(str(user), safe=""))
        values = {"{k}": k, "{user}": user, "{items}": items}
        return self.method, path, _fill(self.body, values)

    def uses(self, placeholder: str) -> bool:
        """Whether ``{placeholder}`` appears in the template."""
        return f"{{{placeholder}}}" in self.path + json.dumps(self.body)

    def __str__(self) -> str:
        return f"{self.method} {self.path}" + ("" if self.body is None else f" {json.dumps(self.body)}")


def _fill(body: Any, values: dict[str, Any]) -> Any:
    """``body`` with every string equal to a placeholder replaced by its value."""
    if isinstance(body, dict):
        return {key: _fill(value, values) for key, value in body.items()}
    if isinstance(body, list):
        return [_fill(value, values) for value in body]
    if isinstance(body, str) and body in values:
        return values[body]
    return body


@dataclass(frozen=True)
class Politeness:
    """How the audit queries: at most ``concurrency`` requests in flight and ``qps`` per second,
    each given ``timeout`` seconds, retried ``retries`` times on a timeout, a dropped connection,
    429 or 5xx (waiting ``backoff * 2**attempt`` seconds with full jitter, or what ``Retry-After``
    asks up to ``max_wait``), and at most ``budget`` requests sent by one run (None: no limit)."""

    qps: float = 10.0
    concurrency: int = 4
    timeout: float = 10.0
    retries: int = 4
    backoff: float = 0.5
    max_wait: float = 60.0
    budget: int | None = None

    def __post_init__(self) -> None:
        checks = {"qps": self.qps > 0, "concurrency": self.concurrency >= 1, "timeout": self.timeout > 0,
                  "retries": self.retries >= 0, "backoff": self.backoff >= 0, "max_wait": self.max_wait >= 0,
                  "budget": self.budget is None or self.budget >= 1}  # fmt: skip
        bad = next((name for name, ok in checks.items() if not ok), None)
        if bad is not None:
            raise ConfigError(f"endpoint {bad}={getattr(self, bad)!r}: expected a positive number"
                              + (" (0 allowed)" if bad in ("retries", "backoff", "max_wait") else ""))  # fmt: skip


@dataclass(frozen=True)
class EndpointSpec:
    """A live recommender's endpoint (module docstring). ``history_request`` None: the service
    cannot serve a user from a history (the membership section is then skipped). ``auth_env``
    names the environment variable holding a bearer token; the token itself is read when a
    request is sent and never stored."""

    url: str
    user_request: str = USER_REQUEST
    history_request: str | None = HISTORY_REQUEST
    items_path: str = ITEMS_PATH
    auth_env: str | None = None
    politeness: Politeness = field(default_factory=Politeness)

    def __post_init__(self) -> None:
        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(f"--endpoint {self.shown}: expected an http:// or https:// URL with a host")
        if parts.username or parts.password:
            raise ConfigError(f"--endpoint {self.shown}: the URL holds credentials; pass a token through the environment "
                              "variable named by --auth-env instead")  # fmt: skip
        if self.auth_env is not None and not self.auth_env.isidentifier():
            raise ConfigError(f"--auth-env {self.auth_env!r}: expected the name of an environment variable")
        if not self.items_path:
            raise ConfigError("--items-path: expected a dotted path into the JSON answer, e.g. 'items'")
        user = self.by_user
        if not user.uses("user"):
            raise ConfigError(f"--user-request {user}: expected {{user}} in the path or body")
        if self.by_history is not None and not self.by_history.uses("items"):
            raise ConfigError(f"--history-request {self.by_history}: expected \"{{items}}\" in the body")

    @property
    def by_user(self) -> RequestTemplate:
        """The request for a known user's top-k."""
        return RequestTemplate.parse(self.user_request, "--user-request")

    @property
    def by_history(self) -> RequestTemplate | None:
        """The request for a new user's top-k from a history (None: not served)."""
        return None if self.history_request is None else RequestTemplate.parse(self.history_request, "--history-request")

    @property
    def shown(self) -> str:
        """Scheme, host, port and path of the URL: what messages and reports name (no credentials, no query)."""
        parts = urlsplit(self.url)
        host = parts.hostname or ""
        return f"{parts.scheme}://{host}{f':{parts.port}' if parts.port else ''}{parts.path.rstrip('/')}"

    def address(self, path: str) -> str:
        """The full URL of a rendered request path."""
        return self.url.rstrip("/") + path

    def headers(self) -> dict[str, str]:
        """Request headers: JSON, and the bearer token from ``auth_env`` (``ConfigError`` when unset)."""
        headers = {"Accept": "application/json"}
        if self.auth_env is None:
            return headers
        token = os.environ.get(self.auth_env)
        if not token:
            raise ConfigError(f"--auth-env {self.auth_env}: the environment variable is not set; expected the endpoint's token in it")
        return {**headers, "Authorization": f"Bearer {token}"}

    def to_dict(self) -> dict[str, Any]:
        """What the run folder keeps to resume (the variable's name, never its value)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, saved: dict[str, Any]) -> "EndpointSpec":
        """The spec ``to_dict`` saved."""
        return cls(**{**saved, "politeness": Politeness(**saved.get("politeness", {}))})


def items_at(answer: Any, path: str) -> list[Any]:
    """The list at the dotted ``path`` of a JSON ``answer`` (module docstring); ``ValueError``
    saying where the path breaks."""
    value = _walk(answer, path.split("."), "the answer")
    if not isinstance(value, list):
        raise ValueError(f"{path} is not a list")
    return value


def _walk(value: Any, keys: list[str], where: str) -> Any:
    """The value at ``keys`` below ``value`` (``where`` names it in messages)."""
    if not keys:
        return value
    key, rest = keys[0], keys[1:]
    if key == "*":
        if not isinstance(value, list):
            raise ValueError(f"{where} is not a list")
        return [_walk(v, rest, f"{where}.*") for v in value]
    if isinstance(value, list) and key.lstrip("-").isdigit() and -len(value) <= int(key) < len(value):
        return _walk(value[int(key)], rest, f"{where}.{key}")
    if isinstance(value, dict) and key in value:
        return _walk(value[key], rest, key if where == "the answer" else f"{where}.{key}")
    raise ValueError(f"{where} has no {key!r}")
