"""The command line of live endpoints: ``recprivacy audit --endpoint URL`` (its options, listed
in their own help panel, and how the command runs) and ``recprivacy serve RUN``.

    recprivacy audit --endpoint URL [--dataset D | --config PATH] [--user-request T] [--history-request T]
                     [--items-path P] [--auth-env VAR] [--qps Q] [--concurrency N] [--timeout S]
                     [--retries N] [--budget N] [--out runs]
    recprivacy audit --resume RUN_DIR [--qps Q] [--budget N] ...
    recprivacy serve RUN [--host 127.0.0.1] [--port 8000]

This module stays light (typer only at import) so ``recprivacy --help`` stays fast; the
endpoint package, httpx, FastAPI and uvicorn are imported when a command runs.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

PANEL = "Live endpoint (HTTP)"
#: the request templates' defaults (``experiments.endpoint.spec``), repeated here to keep imports light
USER_REQUEST = "GET /users/{user}/recommendations?k={k}"
HISTORY_REQUEST = 'POST /recommendations {"history": "{items}", "k": "{k}"}'

EndpointOpt = Annotated[str | None, typer.Option("--endpoint", help="Audit a live recommender at this base URL "
                        "(black-box top-k lists over HTTP; docs/endpoint.md).", rich_help_panel=PANEL)]  # fmt: skip
UserRequestOpt = Annotated[str, typer.Option("--user-request", help="Request for a known user's top-k: METHOD /path "
                           "[JSON body] with {user} and {k}.", rich_help_panel=PANEL)]  # fmt: skip
HistoryRequestOpt = Annotated[str, typer.Option("--history-request", help="Request for a new user's top-k from a history "
                              "(\"{items}\" in the body); 'none': the service cannot (membership is skipped).",
                              rich_help_panel=PANEL)]  # fmt: skip
ItemsPathOpt = Annotated[str, typer.Option("--items-path", help="Dotted path to the item ids in the JSON answer "
                         "(e.g. items, results.*.id).", rich_help_panel=PANEL)]  # fmt: skip
AuthEnvOpt = Annotated[str | None, typer.Option("--auth-env", help="Environment variable holding a bearer token "
                       "(never written anywhere).", rich_help_panel=PANEL)]  # fmt: skip
QpsOpt = Annotated[float | None, typer.Option("--qps", help="Queries per second at most (default 10).", rich_help_panel=PANEL)]
ConcurrencyOpt = Annotated[int | None, typer.Option("--concurrency", help="Queries in flight at most (default 4).",
                           rich_help_panel=PANEL)]  # fmt: skip
TimeoutOpt = Annotated[float | None, typer.Option("--timeout", help="Seconds per request (default 10).", rich_help_panel=PANEL)]
RetriesOpt = Annotated[int | None, typer.Option("--retries", help="Retries of a timeout, dropped connection, 429 or 5xx "
                       "(default 4; exponential backoff with jitter, Retry-After honoured).", rich_help_panel=PANEL)]  # fmt: skip
BudgetOpt = Annotated[int | None, typer.Option("--budget", help="Requests this run may send at most; when spent the run "
                      "stops and can be resumed.", rich_help_panel=PANEL)]  # fmt: skip
ResumeOpt = Annotated[Path | None, typer.Option("--resume", help="Continue a stopped endpoint audit in this run folder "
                      "(cached answers are not asked again).", rich_help_panel=PANEL)]  # fmt: skip


def audit_endpoint_command(endpoint: str | None, resume: Path | None, politeness: dict[str, Any], templates: dict[str, Any],
                           config: Path | None, dataset: str | None, data_dir: Path | None, set_: list[str],
                           out: Path | None, own_files: bool) -> None:  # fmt: skip
    """``recprivacy audit --endpoint`` / ``--resume`` (module docstring)."""
    from recprivacy.cli import _command_config, _print_headline, user_errors
    from recprivacy.config import default_audit_config
    from recprivacy.errors import ConfigError

    with user_errors():
        from recprivacy.experiments.endpoint import Politeness
        from recprivacy.experiments.endpoint.audit import audit_endpoint, resume_endpoint

        if own_files:
            raise ConfigError("--endpoint: the target is the service, audited on the data of --dataset/--config or on "
                              "your --interactions files; expected no --model, --lists or --target with it")  # fmt: skip
        given = {key: value for key, value in politeness.items() if value is not None}
        if resume is not None:
            if endpoint is not None or config is not None or dataset is not None or set_:
                raise ConfigError("--resume continues a run with its saved endpoint and config; expected no --endpoint, "
                                  "--config, --dataset or --set with it")  # fmt: skip
            results, run_dir = resume_endpoint(resume, Politeness(**given) if given else None)
        else:
            spec = _spec(endpoint, Politeness(**given), templates)
            settings = _command_config(config, default_audit_config(), dataset, data_dir, None, set_)
            results, run_dir = audit_endpoint(settings, spec, out if out is not None else Path(settings.output.dir))
        _print_headline(results)
        from rich.console import Console

        Console().print(f"Run written to [bold]{run_dir}[/bold]\nReport: {run_dir / 'report.html'}", soft_wrap=True)


@contextmanager
def endpoint_target(endpoint: str, politeness: dict[str, Any], templates: dict[str, Any]) -> Iterator[Any]:
    """The ``Target`` of ``--endpoint`` with ``--interactions``: your own files audited against your service.
    Its answers are cached, so no query is sent twice, in a private temporary folder (mode 0700) removed when
    the audit ends: ``--resume`` is for ``--dataset`` audits, whose run folder keeps the cache."""
    from recprivacy.experiments.endpoint import CACHE_FILE, Politeness
    from recprivacy.experiments.target import Target

    given = {key: value for key, value in politeness.items() if value is not None}
    spec = _spec(endpoint, politeness=Politeness(**given), templates=templates)
    with tempfile.TemporaryDirectory(prefix="recprivacy-endpoint-") as folder:
        yield Target.from_endpoint(spec, cache=Path(folder) / CACHE_FILE.name)


def _spec(endpoint: str, politeness: Any, templates: dict[str, Any]) -> Any:
    """The ``EndpointSpec`` of the command line's templates (``--history-request none``: no history request)."""
    from recprivacy.experiments.endpoint import EndpointSpec

    history = None if templates["history_request"].strip().lower() == "none" else templates["history_request"]
    return EndpointSpec(endpoint, templates["user_request"], history, templates["items_path"], templates["auth_env"], politeness)


def serve(
    run: Annotated[Path, typer.Argument(help="Run folder of `recprivacy train` or of an audit of a built-in model.")],
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port to listen on (0: a free one).")] = 8000,
) -> None:
    """Serve the model a run trained over HTTP (trained again from its config.yaml, same seed): the reference
    endpoint `recprivacy audit --endpoint` speaks to by default (docs/endpoint.md)."""
    from recprivacy.cli import user_errors

    with user_errors():
        from recprivacy.experiments.endpoint.service import create_app, fit_run_model, free_socket, server
        from recprivacy.progress import stage

        model, data = fit_run_model(run)
        sock = free_socket(host, port)
        stage(f"serving {type(model).__name__} of {run} on http://{host}:{sock.getsockname()[1]} "
              f"(GET /users/{{user}}/recommendations?k=K, POST /recommendations); Ctrl-C stops")  # fmt: skip
        server(create_app(model, data), log_level="info").run(sockets=[sock])
