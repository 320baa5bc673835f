"""One entry point for the three engines of the ``federated`` study (``ENGINES``):

* ``simulator`` -- the fast in-process engine (``simulator.FederatedSimulator``);
* ``flower-sim`` -- Flower's simulation engine, one virtual SuperNode per user;
* ``flower`` -- a Flower deployment, SuperLink and SuperNodes as separate processes on this
  machine, or joined at ``superlink`` (``flower_app.deployment``).

``train_federation`` trains ``rounds`` rounds and then the attack round (one extra round whose
uploads the server attacks; the paper does not say which round it attacks) and
returns the same ``Federation`` whatever the engine: Θ after every evaluated round, seconds per
round, and the attack round's uploads in the simulator's row order (``protocol.by_workload``),
so the attacker sees exactly the same matrix. Inside ``shared_deployments`` (the study enters it
around its trainings), the ``flower`` engine starts one local deployment for each set of devices
and keeps it up: a study's methods and dimensions train on the same devices, so they share one
SuperLink and one set of SuperNodes, each training a run of its own. Flower's server never sees a device's private
state (federated MF's ``p_u``), so the Flower engines cannot evaluate F-DPMF / FedMF; their
features are the devices' own, so F-GERAI (which randomises them on the device) is evaluated
on the simulator only too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from torch import Tensor

from recprivacy.errors import ConfigError
from recprivacy.federated.protocol import by_workload
from recprivacy.federated.simulator import FederatedSimulator, RoundUploads

if TYPE_CHECKING:  # Flower is an optional extra: imported where a Flower engine runs
    from recprivacy.federated.flower_app.spec import AppSpec

ENGINES = ("simulator", "flower-sim", "flower")


class Deployments:
    """Local deployments kept up until ``shared_deployments`` ends, by a key of their devices."""

    def __init__(self, stack: ExitStack) -> None:
        self.stack = stack
        self.addresses: dict[str, str] = {}

    def address(self, key: str, start: Callable[[ExitStack], str]) -> str:
        """The address of the deployment for ``key``, started by ``start(stack)`` (which enters
        its processes' cleanup into ``stack``) the first time."""
        if key not in self.addresses:
            self.addresses[key] = start(self.stack)
        return self.addresses[key]


_SHARED: ContextVar[Deployments | None] = ContextVar("recprivacy_flower_deployments", default=None)


@contextmanager
def shared_deployments() -> Iterator[None]:
    """Keep the ``flower`` engine's local deployments up for the whole block (module docstring);
    every one is stopped when the block ends, also on an error or a signal."""
    with ExitStack() as stack:
        token = _SHARED.set(Deployments(stack))
        try:
            yield
        finally:
            _SHARED.reset(token)


@dataclass
class Federation:
    """A trained federation: ``snapshots`` ``{round: (Θ, private state)}`` (the private state
    only in the simulator), ``round_seconds`` and the attack round."""

    snapshots: dict[int, tuple[dict[str, Tensor], dict[str, Tensor]]] = field(default_factory=dict)
    round_seconds: list[float] = field(default_factory=list)
    attack: RoundUploads | None = None


def eval_rounds(rounds: int, eval_every: int) -> tuple[int, ...]:
    """The rounds after which the study evaluates Θ: every ``eval_every``-th and the last."""
    return tuple(sorted({r for r in range(eval_every, rounds + 1, eval_every)} | {rounds}))


def check_engine(engine: str, sim: FederatedSimulator) -> None:
    """ConfigError if ``engine`` is unknown or cannot evaluate what ``sim`` trains."""
    if engine not in ENGINES:
        raise ConfigError(f"engine: expected one of {list(ENGINES)}, got {engine!r}")
    if engine != "simulator" and (sim.private or sim.feature_privacy is not None):
        raise ConfigError(f"engine {engine}: evaluating this method needs state only the devices hold "
                          "(private vectors or randomised features); expected engine: simulator")


def train_federation(sim: FederatedSimulator, method: Method, rounds: int, eval_every: int, engine: str = "simulator",
                     attack_all: bool = False, superlink: str | None = None,
                     desc: str = "federated rounds", wave_size: int = 8) -> Federation:
    """Train ``sim``'s federation with ``engine`` (module docstring); ``sim`` holds the data,
    model, defence and seed, and is the engine itself for ``simulator``; the Flower engines
    rebuild the defence on each device from ``method`` and train at most ``wave_size``
    devices at once (``flower_app.spec.AppSpec``)."""
    check_engine(engine, sim)
    if engine == "simulator":
        return _simulate(sim, rounds, eval_every, attack_all, desc)
    from recprivacy.federated.flower_app.device import devices
    from recprivacy.federated.flower_app.guard import private_folder
    from recprivacy.federated.flower_app.run import run_flower
    spec = app_spec(sim, method, rounds + 1, eval_rounds(rounds, eval_every), attack_all, wave_size)
    with private_folder("recprivacy-flower") as tmp:  # the device files, the server's record: users' data
        log = run_flower(engine, spec, devices(sim.raw_features, sim.train_csr), tmp, superlink, _SHARED.get())
    users = by_workload(log.users[rounds + 1], sim.train_csr)
    rows = np.searchsorted(log.users[rounds + 1], users)
    attack = RoundUploads(rounds + 1, users, log.last_before, {k: v[rows] for k, v in log.last_uploads.items()})
    return Federation({t: (p, {}) for t, p in log.snapshots.items()}, [log.seconds[t] for t in range(1, rounds + 1)], attack)


@dataclass(frozen=True)
class Method:
    """A method as the devices build it: its name, the keyword arguments of its factory
    (``make_defence`` / ``make_baseline``) and the one-hot attribute columns of ``x_u``."""

    name: str
    options: dict = field(default_factory=dict)
    blocks: dict = field(default_factory=dict)


def app_spec(sim: FederatedSimulator, method: Method, rounds: int, snapshot_rounds: tuple[int, ...],
             attack_all: bool, wave_size: int = 8) -> AppSpec:
    """The Flower run of ``sim``'s federation (same model, data sizes, training, seed, noise,
    and the tag of the devices' data)."""
    from dataclasses import asdict

    from recprivacy.federated.flower_app.device import devices
    from recprivacy.federated.flower_app.spec import AppSpec

    blocks = {a: [int(c) for c in cols] for a, cols in method.blocks.items()}
    tag = devices(sim.raw_features, sim.train_csr)[0].federation
    return AppSpec(sim.model.name, sim.model.n_items, sim.model.n_features, sim.model.dim, sim.train_csr.shape[0],
                   sim.n_clients, rounds, sim.seed, sim.noise.mode, sim.init_std, asdict(sim.local), method.name,
                   dict(method.options), blocks, attack_all, snapshot_rounds, wave_size=wave_size, federation=tag)


def _simulate(sim: FederatedSimulator, rounds: int, eval_every: int, attack_all: bool, desc: str) -> Federation:
    import time

    from recprivacy.progress import progress

    out = Federation()
    wanted = eval_rounds(rounds, eval_every)
    for _ in progress(range(rounds), desc=desc, total=rounds, unit="round"):
        start = time.perf_counter()
        sim.run_round()
        out.round_seconds.append(time.perf_counter() - start)
        if sim.round in wanted:
            out.snapshots[sim.round] = (sim.params, {k: v.clone() for k, v in sim.private.items()})
    out.attack = sim.run_round(np.arange(sim.train_csr.shape[0]) if attack_all else None)
    return out
