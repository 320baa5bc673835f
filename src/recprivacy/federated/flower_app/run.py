"""The two Flower engines, each returning the server's ``ServerLog``.

* ``run_simulation_engine`` -- Flower's simulation engine (``flwr.simulation.run_simulation``,
  Ray backend): one virtual SuperNode per user in this process's Ray cluster, bound to
  127.0.0.1, ``workers`` ClientApps at a time.
* ``run_deployment`` -- a deployment (``deployment``); ``run_flower`` picks one by name.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from recprivacy.errors import RecPrivacyError
from recprivacy.federated.flower_app.device import Device
from recprivacy.federated.flower_app.server import ServerLog
from recprivacy.federated.flower_app.spec import AppSpec

if TYPE_CHECKING:
    from recprivacy.federated.engines import Deployments


NO_PRESTART = {"enable_worker_prestart": False, "prestart_worker_first_driver": False}
"""Ray's system config for the simulation engine: no task workers started ahead of use (Ray starts
one per CPU by default; Flower's ClientApps run in actors, processes of their own, so those
workers would only import Ray and then poll, idle, for the whole run)."""


def run_simulation_engine(spec: AppSpec, devices: list[Device], workers: int = 1) -> ServerLog:
    """Train through Flower's simulation engine (module docstring); RecPrivacyError if the
    run failed or Ray is missing."""
    import importlib.util

    if importlib.util.find_spec("ray") is None:
        raise RecPrivacyError("engine flower-sim needs Flower's simulation extra: pip install 'flwr[simulation]'")
    from flwr.simulation import run_simulation

    from recprivacy.federated.flower_app.client import client_app
    from recprivacy.federated.flower_app.server import server_app

    logs: list[ServerLog] = []
    backend = {"init_args": {"num_cpus": workers, "_node_ip_address": "127.0.0.1", "logging_level": "ERROR",
                             "include_dashboard": False, "_system_config": NO_PRESTART},
               "client_resources": {"num_cpus": 1, "num_gpus": 0.0}}
    clients = client_app(lambda context: devices[int(context.node_config["partition-id"])], lambda context: spec)
    server = server_app(lambda context: spec, lambda log, context: logs.append(log))
    try:
        run_simulation(server, clients, num_supernodes=len(devices), backend_config=backend)
    except Exception as err:
        reason = logs[0].error if logs and logs[0].error else f"{type(err).__name__}: {err}"
        raise RecPrivacyError(f"engine flower-sim: {reason}") from err
    return _finished(logs, "flower-sim")


def _finished(logs: list[ServerLog], engine: str) -> ServerLog:
    if not logs or logs[0].error or not logs[0].final:
        raise RecPrivacyError(f"engine {engine}: the server finished without a model ({logs[0].error if logs else 'no record'})")
    return logs[0]


def run_flower(engine: str, spec: AppSpec, devices: list[Device], workdir: Path, superlink: str | None = None,
               shared: Deployments | None = None) -> ServerLog:
    """Train with the Flower engine ``engine`` (``flower-sim`` or ``flower``); ``shared``: the
    local deployments a ``flower`` run joins or adds to (``engines.shared_deployments``)."""
    if engine == "flower-sim":
        return run_simulation_engine(spec, devices)
    from recprivacy.federated.flower_app.deployment import run_deployment

    return run_deployment(spec, devices, workdir, superlink, timeout=spec.timeout * (spec.rounds + 1) * spec.waves(), shared=shared)
