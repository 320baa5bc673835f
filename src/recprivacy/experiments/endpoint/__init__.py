"""Auditing a live recommender over HTTP: the endpoint's contract (:mod:`.spec`), polite and
robust querying (:mod:`.client`), the answers kept on disk (:mod:`.cache`), the reference
service (:mod:`.service`, FastAPI) and the audit of an endpoint with a resumable run folder
(:mod:`.audit`). ``httpx`` (client) and ``fastapi`` / ``uvicorn`` (service) come with the
``serve`` extra and are imported only when used.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any

from recprivacy.errors import ConfigError
from recprivacy.experiments.endpoint.cache import CACHE_FILE, ResponseCache
from recprivacy.experiments.endpoint.client import BudgetSpent, EndpointClient, EndpointError, QueryStats
from recprivacy.experiments.endpoint.spec import ACCESS_MODEL, EndpointSpec, Politeness

__all__ = ["ACCESS_MODEL", "BudgetSpent", "CACHE_FILE", "EndpointClient", "EndpointError", "EndpointSpec", "Politeness",
           "QueryStats", "ResponseCache", "endpoint_client", "endpoint_spec"]  # fmt: skip


def endpoint_spec(url: str, **options: Any) -> EndpointSpec:
    """The spec of ``url`` from flat options: the spec's fields and ``Politeness``'s."""
    polite_keys = {f.name for f in fields(Politeness)}
    spec_keys = {f.name for f in fields(EndpointSpec)} - {"url", "politeness"}
    unknown = sorted(set(options) - polite_keys - spec_keys)
    if unknown:
        raise ConfigError(f"Target.from_endpoint: unknown option {unknown[0]!r}; expected one of "
                          f"{', '.join(sorted(spec_keys | polite_keys))}")  # fmt: skip
    politeness = Politeness(**{k: v for k, v in options.items() if k in polite_keys})
    return EndpointSpec(url, **{k: v for k, v in options.items() if k in spec_keys}, politeness=politeness)


def endpoint_client(url: str | EndpointSpec, cache: str | Path | None = None, **options: Any) -> EndpointClient:
    """A client of ``url`` (or of a ready spec) keeping its answers in the ``cache`` file."""
    spec = url if isinstance(url, EndpointSpec) else endpoint_spec(url, **options)
    return EndpointClient(spec, None if cache is None else ResponseCache(cache))
