"""The Flower engine (optional extra ``federated``: ``pip install 'recprivacy[federated]'``).

The same protocol as the in-process simulator, as a Flower client and server strategy:

* ``RecClient`` (a ``flwr.client.NumPyClient``) is one device: it holds its user's features
  and training items, trains with ``protocol.local_update`` for a batch of one, randomises with
  ``protocol.perturb_uploads`` and returns all shared parameters; its private state (federated
  MF's ``P_u``) never leaves it.
* ``RecStrategy`` (a ``flwr.server.strategy.Strategy``) samples the round's users with
  ``protocol.sample_clients`` (it asks every connected client for its user id once), sends the
  global model with the round number, and averages the uploads with ``protocol.aggregate``
  (uploads ordered by user id, so the result does not depend on arrival order).

``client_app`` / ``server_app`` wrap them for a Flower deployment (SuperLink + SuperNodes,
``flwr run``; the node config ``partition-id`` names the user). ``run_loopback`` runs a whole
training on this machine over gRPC on 127.0.0.1 with Flower's server and one client thread per
user (Flower's simulation engine needs Ray, which this extra does not install); the test
checks that it gives the simulator's global model. Flower 1.41 marks this server/client entry
point deprecated in favour of SuperLink/SuperNode, but it is the transport those use.

The package imports Flower lazily: everything else in ``recprivacy.federated`` works without it.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
import torch

from recprivacy.errors import RecPrivacyError
from recprivacy.federated.models import FederatedModel
from recprivacy.federated.protocol import (
    ClientBatch,
    FeaturePrivacy,
    LocalObjective,
    LocalTraining,
    UploadDefence,
    aggregate,
    client_features,
    local_update,
    perturb_uploads,
    sample_clients,
)
from recprivacy.privacy.randomness import NoiseSource, check_mode


def _flwr() -> Any:
    try:
        import flwr
    except ModuleNotFoundError:
        raise RecPrivacyError("the Flower engine needs the optional package flwr: pip install 'recprivacy[federated]'") from None
    return flwr


def _names(model: FederatedModel) -> list[str]:
    return [s.name for s in model.shared_specs()]


def _to_tensors(model: FederatedModel, arrays: list[np.ndarray]) -> dict[str, torch.Tensor]:
    return {n: torch.from_numpy(np.array(a, dtype=np.float32)) for n, a in zip(_names(model), arrays)}


def make_client(
    model: FederatedModel, user: int, x: np.ndarray, train_csr: sp.csr_matrix, local: LocalTraining, seed: int,
    defence: UploadDefence | None = None, private: dict[str, torch.Tensor] | None = None,
    objective: LocalObjective | None = None, feature_privacy: FeaturePrivacy | None = None, noise: str = "secure",
) -> Any:
    """The Flower client of device ``user`` (a ``NumPyClient``; see module docstring).
    ``private``: its initial private parameters (without batch dimension); ``objective`` and
    ``feature_privacy``: the on-device randomisation of the objective-perturbation baselines
    (the device randomises its own ``x_u`` once, here); ``noise``: where that randomness and
    the upload defence's come from (``"secure"``, or ``"simulation"`` seeded by ``seed``)."""
    flwr = _flwr()
    source = NoiseSource(check_mode(noise), seed)
    users = np.array([user])
    own = ClientBatch.select(users, x, train_csr)
    batch = ClientBatch(own.users, client_features(own.x, users, source, feature_privacy) if model.uses_features else own.x, own.csr)

    class RecClient(flwr.client.NumPyClient):
        def __init__(self) -> None:
            self.private = {k: v[None].clone() for k, v in (private or {}).items()}

        def get_properties(self, config: dict) -> dict:
            return {"user": int(user)}

        def fit(self, parameters: list[np.ndarray], config: dict) -> tuple[list[np.ndarray], int, dict]:
            round_ = int(config["round"])
            trained = local_update(model, _to_tensors(model, parameters), batch, local, seed, round_, self.private, objective,
                                   source)
            self.private = {k: trained[k] for k in self.private}
            upload = perturb_uploads(trained, model, defence, batch.users, source, round_)
            return [upload[n][0].numpy() for n in _names(model)], int(batch.csr.nnz), {"user": int(user)}

    return RecClient()


def make_strategy(
    model: FederatedModel, initial: dict[str, torch.Tensor], n_users: int, n_clients: int, seed: int,
    on_round: Callable[[int, np.ndarray, dict[str, torch.Tensor]], None] | None = None,
) -> Any:
    """The server strategy (module docstring). ``on_round(round, users, uploads)`` sees each
    round's uploads, as the honest-but-curious server does; ``strategy.params`` is Θ."""
    flwr = _flwr()
    from flwr.common import FitIns, GetPropertiesIns, ndarrays_to_parameters, parameters_to_ndarrays

    class RecStrategy(flwr.server.strategy.Strategy):
        def __init__(self) -> None:
            self.params = {k: v.float() for k, v in initial.items()}
            self.proxies: dict[int, Any] = {}

        def initialize_parameters(self, client_manager: Any) -> Any:
            return ndarrays_to_parameters([self.params[n].numpy() for n in _names(model)])

        def _proxy_of_user(self, client_manager: Any, server_round: int) -> dict[int, Any]:
            if len(self.proxies) < n_users:
                client_manager.wait_for(n_users)
                for proxy in client_manager.all().values():
                    res = proxy.get_properties(GetPropertiesIns({}), timeout=None, group_id=server_round)
                    self.proxies[int(res.properties["user"])] = proxy
            return self.proxies

        def configure_fit(self, server_round: int, parameters: Any, client_manager: Any) -> list:
            proxies = self._proxy_of_user(client_manager, server_round)
            users = sample_clients(n_users, n_clients, seed, server_round)
            return [(proxies[int(u)], FitIns(parameters, {"round": server_round})) for u in users]

        def aggregate_fit(self, server_round: int, results: list, failures: list) -> tuple[Any, dict]:
            if failures:
                raise RecPrivacyError(f"Flower round {server_round}: {len(failures)} client(s) failed: {failures[0]!r}")
            ordered = sorted(results, key=lambda r: int(r[1].metrics["user"]))
            users = np.array([int(r[1].metrics["user"]) for r in ordered])
            uploads = [_to_tensors(model, parameters_to_ndarrays(r[1].parameters)) for r in ordered]
            stacked = {n: torch.stack([u[n] for u in uploads]) for n in _names(model)}
            if on_round is not None:
                on_round(server_round, users, stacked)
            self.params = aggregate(stacked, users, server_round)
            return ndarrays_to_parameters([self.params[n].numpy() for n in _names(model)]), {}

        def configure_evaluate(self, server_round: int, parameters: Any, client_manager: Any) -> list:
            return []

        def aggregate_evaluate(self, server_round: int, results: list, failures: list) -> tuple[None, dict]:
            return None, {}

        def evaluate(self, server_round: int, parameters: Any) -> None:
            return None

    return RecStrategy()


def client_app(model: FederatedModel, x: np.ndarray, train_csr: sp.csr_matrix, local: LocalTraining, seed: int,
               defence: UploadDefence | None = None, objective: LocalObjective | None = None,
               feature_privacy: FeaturePrivacy | None = None, noise: str = "secure") -> Any:
    """A ``flwr.clientapp.ClientApp`` whose node config ``partition-id`` is the user id."""
    flwr = _flwr()

    def client_fn(context: Any) -> Any:
        user = int(context.node_config["partition-id"])
        return make_client(model, user, x, train_csr, local, seed, defence, objective=objective,
                           feature_privacy=feature_privacy, noise=noise).to_client()

    return flwr.clientapp.ClientApp(client_fn=client_fn)


def server_app(strategy: Any, rounds: int) -> Any:
    """A ``flwr.serverapp.ServerApp`` running ``strategy`` for ``rounds`` rounds."""
    flwr = _flwr()
    from flwr.server import ServerAppComponents, ServerConfig

    return flwr.serverapp.ServerApp(server_fn=lambda context: ServerAppComponents(strategy=strategy, config=ServerConfig(num_rounds=rounds)))


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start_when_listening(address: str, threads: list[threading.Thread], timeout: float = 60.0) -> None:
    """Start the client threads once the server accepts connections (bounded wait)."""
    host, port = address.rsplit(":", 1)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection((host, int(port)), timeout=1.0).close()
            break
        except OSError:
            time.sleep(0.05)
    for t in threads:
        t.start()


def run_loopback(
    model: FederatedModel, initial: dict[str, torch.Tensor], x: np.ndarray, train_csr: sp.csr_matrix, rounds: int,
    n_clients: int, local: LocalTraining, seed: int, defence: UploadDefence | None = None,
    on_round: Callable[[int, np.ndarray, dict[str, torch.Tensor]], None] | None = None,
    private: dict[str, torch.Tensor] | None = None,
    objective: LocalObjective | None = None,
    feature_privacy: FeaturePrivacy | None = None,
    noise: str = "secure",
) -> dict[str, torch.Tensor]:
    """Train ``rounds`` rounds through Flower on 127.0.0.1 (module docstring); returns Θ.
    Must run in the main thread (Flower's server installs signal handlers). ``noise`` as in
    ``make_client``."""
    flwr = _flwr()
    from flwr.server import ServerConfig

    n_users = train_csr.shape[0]
    address = f"127.0.0.1:{_free_port()}"
    strategy = make_strategy(model, initial, n_users, n_clients, seed, on_round)
    clients = [
        make_client(model, u, x, train_csr, local, seed, defence, {k: v[u] for k, v in (private or {}).items()},
                    objective, feature_privacy, noise)
        for u in range(n_users)
    ]
    threads = [
        threading.Thread(
            target=flwr.client.start_client,
            kwargs={"server_address": address, "client": c.to_client(), "insecure": True, "max_wait_time": 60.0},
            daemon=True,
        )
        for c in clients
    ]
    launcher = threading.Thread(target=_start_when_listening, args=(address, threads), daemon=True)
    launcher.start()
    flwr.server.start_server(server_address=address, config=ServerConfig(num_rounds=rounds), strategy=strategy)
    for t in threads:
        t.join(timeout=30)
    return strategy.params
